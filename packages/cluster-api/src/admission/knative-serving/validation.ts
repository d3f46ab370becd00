/**
 * Knative Serving's defaulting and validation webhooks (`webhook.serving.knative.dev`,
 * `validation.webhook.serving.knative.dev`) as an admission plugin on the serving.knative.dev kinds:
 * a lone traffic target without a percent gets 100; traffic targets' percents are 0–100 and sum
 * to 100, tags are DNS-1035 labels and unique, a target names one revision source;
 * `containerConcurrency` is 0–1000 and `timeoutSeconds` 0–600 (Knative's config-defaults); a
 * revision template's autoscaling annotations hold to Knative's rules (autoscaling-annotations.ts,
 * with config-autoscaler's allow-zero-initial-scale and max-scale-limit); a Revision's spec never
 * changes. A refusal is the Status kube-apiserver answers for a webhook's
 * denial (400, its message prefixed `admission webhook "…" denied the request: validation failed:`),
 * with Knative's messages.
 */
import { isDeepStrictEqual } from 'node:util';
import { ApiError } from '../../api/errors.js';
import type { AdmissionPlugin, AdmissionRequest } from '../plugin.js';
import { AutoscalerConfigMap, autoscalerConfig, type AutoscalerConfig } from '../../serving/autoscaling/config.js';
import { autoscalingAnnotationErrors, type FieldError } from './autoscaling-annotations.js';

const Group = 'serving.knative.dev';
const Webhook = 'validation.webhook.serving.knative.dev';
const Dns1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const MaxContainerConcurrency = 1000;
const MaxTimeoutSeconds = 600;

type Target = { percent?: unknown; tag?: unknown; revisionName?: unknown; configurationName?: unknown; latestRevision?: unknown };
type Spec = { traffic?: Target[]; template?: { metadata?: { annotations?: Record<string, unknown> }; spec?: RevisionSpec } } & RevisionSpec;
type RevisionSpec = { containerConcurrency?: unknown; timeoutSeconds?: unknown };

const bounded = (v: unknown, max: number, path: string): FieldError[] =>
  v === undefined || v === null || (Number.isInteger(v) && (v as number) >= 0 && (v as number) <= max) ? [] : [{ message: `expected 0 <= ${String(v)} <= ${max}`, path }];

/** validateTrafficList: each target, then tags unique and percents summing to 100. */
function trafficErrors(traffic: Target[], path: string, kind: string): FieldError[] {
  if (traffic.length === 0) return [];
  const errs: FieldError[] = [];
  const tags = new Map<string, number>();
  let sum = 0;
  traffic.forEach((t, i) => {
    const at = `${path}[${i}]`;
    const percent = t.percent ?? 0;
    if (!Number.isInteger(percent) || (percent as number) < 0 || (percent as number) > 100) errs.push({ message: `expected 0 <= ${String(percent)} <= 100`, path: `${at}.percent` });
    else sum += percent as number;
    const named = [t.revisionName && 'revisionName', t.configurationName && 'configurationName', t.latestRevision === true && kind === 'Service' && 'latestRevision'].filter(Boolean);
    if (kind === 'Service' && t.revisionName && t.latestRevision === true) errs.push({ message: 'may not set revisionName if latestRevision is true', path: `${at}.latestRevision` });
    else if (t.revisionName && t.configurationName) errs.push({ message: 'expected exactly one, got both', path: `${at}.revisionName, ${at}.configurationName` });
    else if (named.length === 0) errs.push({ message: 'expected exactly one, got neither', path: kind === 'Service' ? `${at}.latestRevision, ${at}.revisionName` : `${at}.configurationName, ${at}.revisionName` });
    if (t.tag !== undefined && t.tag !== '') {
      if (typeof t.tag !== 'string' || !Dns1035.test(t.tag) || t.tag.length > 63) errs.push({ message: `not a DNS 1035 label: ${JSON.stringify(t.tag)}`, path: `${at}.tag` });
      else if (tags.has(t.tag)) errs.push({ message: `Multiple definitions for ${JSON.stringify(t.tag)}`, path: `${path}[${tags.get(t.tag)}].tag, ${at}.tag` });
      else tags.set(t.tag, i);
    }
  });
  if (sum !== 100) errs.push({ message: `Traffic targets sum to ${sum}, want 100`, path });
  return errs;
}

const revisionSpecErrors = (spec: RevisionSpec | undefined, path: string): FieldError[] => [
  ...bounded(spec?.containerConcurrency, MaxContainerConcurrency, `${path}.containerConcurrency`),
  ...bounded(spec?.timeoutSeconds, MaxTimeoutSeconds, `${path}.timeoutSeconds`),
];

const denied = (errs: FieldError[]): ApiError =>
  new ApiError(400, 'BadRequest', `admission webhook "${Webhook}" denied the request: validation failed: ${errs.map((e) => `${e.message}: ${e.path}`).join('\n')}`);

const specOf = (req: AdmissionRequest): Spec => ((req.object as { spec?: Spec }).spec ?? {}) as Spec;

/** config-autoscaler as it is now (Knative's webhook watches it); its defaults when it is absent or unreadable. */
async function autoscaler(req: AdmissionRequest): Promise<AutoscalerConfig> {
  const store = req.services.find('', 'v1', 'configmaps');
  const cm = await store?.get({ namespace: AutoscalerConfigMap.namespace }, AutoscalerConfigMap.name).catch(() => undefined);
  return autoscalerConfig((cm as { data?: Record<string, string> } | undefined)?.data).value;
}

/** The template's (or, for a Revision, its own) annotations and where they are. */
const annotated = (req: AdmissionRequest): [Record<string, unknown> | undefined, string] | undefined =>
  req.kind === 'Service' || req.kind === 'Configuration' ? [specOf(req).template?.metadata?.annotations, 'spec.template.metadata.annotations']
    : req.kind === 'Revision' ? [req.object.metadata?.annotations, 'metadata.annotations'] : undefined;

export const KnativeServingValidation: AdmissionPlugin = {
  name: 'knative.dev/serving',
  handles: (req) => req.group === Group && (req.operation === 'CREATE' || req.operation === 'UPDATE') && req.subresource === undefined,
  mutate(req) {
    const traffic = specOf(req).traffic;
    if ((req.kind === 'Service' || req.kind === 'Route') && Array.isArray(traffic) && traffic.length === 1 && traffic[0] && traffic[0].percent === undefined) {
      traffic[0].percent = 100;
      return true;
    }
    return false;
  },
  async validate(req) {
    const spec = specOf(req);
    const errs: FieldError[] = [];
    const annotations = annotated(req);
    if (annotations?.[0] && Object.keys(annotations[0]).some((k) => k.startsWith('autoscaling.knative.dev/')))
      errs.push(...autoscalingAnnotationErrors(annotations[0], await autoscaler(req), annotations[1]));
    if ((req.kind === 'Service' || req.kind === 'Route') && spec.traffic !== undefined)
      errs.push(...(Array.isArray(spec.traffic) ? trafficErrors(spec.traffic, 'spec.traffic', req.kind) : [{ message: 'expected a list', path: 'spec.traffic' }]));
    if (req.kind === 'Service' || req.kind === 'Configuration') errs.push(...revisionSpecErrors(spec.template?.spec, 'spec.template.spec'));
    if (req.kind === 'Revision') {
      errs.push(...revisionSpecErrors(spec, 'spec'));
      const before = (req.oldObject as { spec?: unknown } | undefined)?.spec;
      if (req.operation === 'UPDATE' && !isDeepStrictEqual(before, (req.object as { spec?: unknown }).spec)) errs.push({ message: 'Immutable fields changed (-old +new)', path: 'spec' });
    }
    if (errs.length > 0) throw denied(errs);
  },
};
