/**
 * Knative Eventing's defaulting and validation webhooks for the sources (sources.knative.dev/v1) as
 * an admission plugin. Defaults: an ApiServerSource's `mode` is `Reference` and its
 * `serviceAccountName` `default`. Validation, with Knative's messages (knative.dev/pkg FieldErrors:
 * `<message>: <paths>`, one per line, sorted by message, the paths of one message merged):
 * - every source's `sink` (duckv1.Destination): a `ref` or a `uri`, a `uri` alone absolute, a
 *   `ref` with apiVersion, kind and name;
 * - PingSource: `schedule` parses as a standard cron spec (no `@every`), `timezone` is a known
 *   zone, at most one of `data` and `dataBase64`, `dataBase64` is base64, either is a JSON object
 *   when `contentType` is `application/json`;
 * - ApiServerSource: `mode` Reference or Resource, at least one resource, each with a kind, an
 *   owner with a kind;
 * - SinkBinding: `subject` with apiVersion and kind and exactly one of name and selector;
 * - ContainerSource: a template with containers, each with an image.
 * A refusal is the Status kube-apiserver answers for a webhook's denial (400, prefixed
 * `admission webhook "validation.webhook.eventing.knative.dev" denied the request: validation failed: `).
 */
import { ApiError } from '../../api/errors.js';
import { cronError } from '../../registry/kinds/cron.js';
import { knownZone } from '../../controllers/cronjob/schedule.js';
import type { AdmissionPlugin, AdmissionRequest } from '../plugin.js';

const Group = 'sources.knative.dev';
const Webhook = 'validation.webhook.eventing.knative.dev';

type Spec = Record<string, any>;
interface FieldError { message: string; paths: string[] }

const err = (message: string, ...paths: string[]): FieldError => ({ message, paths });
const missing = (...paths: string[]) => err('missing field(s)', ...paths);
const invalid = (value: unknown, path: string) => err(`invalid value: ${String(value)}`, path);
const text = (v: unknown): string => (typeof v === 'string' ? v : '');

const isAbsolute = (uri: string): boolean => {
  try {
    return new URL(uri).protocol !== '';
  } catch {
    return false;
  }
};

/** duckv1.Destination.Validate, under `at`. */
export function destinationErrors(dest: unknown, at: string): FieldError[] {
  const d = (dest && typeof dest === 'object' ? dest : {}) as Spec;
  const ref = d.ref && typeof d.ref === 'object' ? (d.ref as Spec) : undefined;
  const uri = text(d.uri);
  if (!ref && !uri) return [err('expected at least one, got none', `${at}.ref`, `${at}.uri`)];
  if (ref && uri && isAbsolute(uri)) return [err('Absolute URI is not allowed when Ref or [apiVersion, kind, name] exists', `${at}.ref`, `${at}.uri`)];
  if (ref) {
    const absent = ['apiVersion', 'kind', 'name'].filter((f) => !text(ref[f]));
    return absent.length ? [missing(...absent.map((f) => `${at}.ref.${f}`))] : [];
  }
  return isAbsolute(uri) ? [] : [invalid('Relative URI is not allowed when Ref and [apiVersion, kind, name] is absent', `${at}.uri`)];
}

const jsonObjectError = (data: string): string | undefined => {
  try {
    const v: unknown = JSON.parse(data);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? undefined : 'json: cannot unmarshal into Go value of type map[string]interface {}';
  } catch {
    return 'invalid character in JSON';
  }
};

function pingErrors(s: Spec): FieldError[] {
  const errs: FieldError[] = [];
  const schedule = text(s.schedule);
  if (schedule.includes('@every')) errs.push(invalid('unsupported descriptor @every', 'spec.schedule'));
  const zone = text(s.timezone);
  if (zone && !knownZone(zone)) errs.push(invalid(`provided bad location ${zone}: unknown time zone ${zone}`, 'spec.timezone'));
  else {
    const why = cronError(schedule);
    if (why) errs.push(invalid(why, 'spec.schedule'));
  }
  errs.push(...destinationErrors(s.sink, 'spec.sink'));
  const data = text(s.data);
  const data64 = text(s.dataBase64);
  const json = s.contentType === 'application/json';
  if (data && data64) errs.push(err('expected exactly one, got both', 'spec.data', 'spec.dataBase64'));
  else if (data64) {
    if (!/^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(data64)) errs.push(invalid('illegal base64 data', 'spec.dataBase64'));
    else if (json) {
      const why = jsonObjectError(Buffer.from(data64, 'base64').toString());
      if (why) errs.push(invalid(why, 'spec.dataBase64'));
    }
  } else if (data && json) {
    const why = jsonObjectError(data);
    if (why) errs.push(invalid(why, 'spec.data'));
  }
  return errs;
}

function apiServerErrors(s: Spec): FieldError[] {
  const errs: FieldError[] = [];
  if (s.mode !== 'Reference' && s.mode !== 'Resource') errs.push(invalid(s.mode ?? '', 'spec.mode'));
  errs.push(...destinationErrors(s.sink, 'spec.sink'));
  const resources = Array.isArray(s.resources) ? (s.resources as Spec[]) : [];
  if (resources.length === 0) errs.push(missing('spec.resources'));
  resources.forEach((r, i) => {
    if (!text(r?.kind).trim()) errs.push(missing(`spec.resources[${i}].kind`));
  });
  if (s.owner && typeof s.owner === 'object' && !text((s.owner as Spec).kind).trim()) errs.push(missing('spec.owner.kind'));
  return errs;
}

function sinkBindingErrors(s: Spec, namespace: string | undefined): FieldError[] {
  const errs: FieldError[] = [];
  const subject = (s.subject && typeof s.subject === 'object' ? s.subject : undefined) as Spec | undefined;
  if (!subject) errs.push(missing('spec.subject'));
  else {
    const absent = ['apiVersion', 'kind'].filter((f) => !text(subject[f]));
    if (absent.length) errs.push(missing(...absent.map((f) => `spec.subject.${f}`)));
    if (subject.namespace && namespace && subject.namespace !== namespace) errs.push(invalid(subject.namespace, 'spec.subject.namespace'));
    if (subject.name && subject.selector) errs.push(err('expected exactly one, got both', 'spec.subject.name', 'spec.subject.selector'));
    else if (!subject.name && !subject.selector) errs.push(err('expected exactly one, got neither', 'spec.subject.name', 'spec.subject.selector'));
  }
  errs.push(...destinationErrors(s.sink, 'spec.sink'));
  return errs;
}

function containerErrors(s: Spec): FieldError[] {
  const errs: FieldError[] = [];
  const containers = s.template?.spec?.containers;
  if (!Array.isArray(containers) || containers.length === 0) errs.push(missing('spec.template.spec.containers'));
  else containers.forEach((c: Spec, i: number) => {
    if (!text(c?.image)) errs.push(missing(`spec.template.spec.containers[${i}].image`));
  });
  errs.push(...destinationErrors(s.sink, 'spec.sink'));
  return errs;
}

/** FieldError.Error(): errors of one message merged, sorted by message, one per line. */
const format = (errs: FieldError[]): string => {
  const merged = new Map<string, Set<string>>();
  for (const e of errs) for (const p of e.paths) (merged.get(e.message) ?? merged.set(e.message, new Set()).get(e.message)!).add(p);
  return [...merged].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([m, ps]) => `${m}: ${[...ps].sort().join(', ')}`).join('\n');
};

const specOf = (req: AdmissionRequest): Spec => {
  const o = req.object as { spec?: Spec };
  if (!o.spec || typeof o.spec !== 'object') o.spec = {};
  return o.spec;
};

export const KnativeSourcesValidation: AdmissionPlugin = {
  name: 'knative.dev/eventing-sources',
  handles: (req) => req.group === Group && (req.operation === 'CREATE' || req.operation === 'UPDATE') && req.subresource === undefined,
  mutate(req) {
    if (req.kind !== 'ApiServerSource') return false;
    const s = specOf(req);
    const before = `${s.mode}/${s.serviceAccountName}`;
    s.mode ||= 'Reference';
    s.serviceAccountName ||= 'default';
    return before !== `${s.mode}/${s.serviceAccountName}`;
  },
  validate(req) {
    // Being deleted (a finalizer removed): Knative's webhook lets it through.
    if (req.object.metadata.deletionTimestamp) return;
    const s = specOf(req);
    const errs = req.kind === 'PingSource' ? pingErrors(s)
      : req.kind === 'ApiServerSource' ? apiServerErrors(s)
        : req.kind === 'SinkBinding' ? sinkBindingErrors(s, req.namespace)
          : req.kind === 'ContainerSource' ? containerErrors(s) : [];
    if (errs.length > 0) throw new ApiError(400, 'BadRequest', `admission webhook "${Webhook}" denied the request: validation failed: ${format(errs)}`);
  },
};
