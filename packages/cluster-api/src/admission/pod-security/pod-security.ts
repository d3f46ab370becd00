/**
 * Pod Security admission (k8s.io/pod-security-admission): a namespace's
 * `pod-security.kubernetes.io/<mode>` labels (`enforce`, `audit`, `warn`, each with a `-version`)
 * name a level of the Pod Security Standards (checks.ts). A pod created in it that breaks the
 * `enforce` level is refused (`violates PodSecurity "restricted:latest": …`); one that breaks the
 * `warn` level is admitted with a Warning (`would violate PodSecurity …`). Workloads (Deployments
 * and the other kinds with a pod template) are never refused: their template gets the warnings the
 * pods it makes would get. Unlabelled namespaces are privileged; no namespace, user or runtime class
 * is exempt. `audit` is accepted and has no effect (this server writes no audit log). A version label
 * is accepted and judged by the latest checks. A namespace whose labels name no level (or an invalid
 * version) is refused (422); a label that is nonetheless invalid enforces `restricted:latest`. A
 * namespace given a new `enforce` level warns about the pods it holds that break it.
 */
import type { KubeObject } from '../../api/meta.js';
import { forbidden, invalid } from '../../api/errors.js';
import { invalidValue, type FieldError } from '../../registry/generic/validation.js';
import { obj, spec, type Obj } from '../../registry/kinds/common.js';
import { warn, type AdmissionPlugin, type AdmissionRequest } from '../plugin.js';
import { describe, Levels, violations, type Level } from './checks.js';

const Prefix = 'pod-security.kubernetes.io/';
const Modes = ['enforce', 'audit', 'warn'] as const;
type Mode = (typeof Modes)[number];
const VersionPattern = /^(latest|v1\.(0|[1-9][0-9]*))$/;

interface Policy {
  level: Level;
  /** `restricted:latest`, as messages name it. */
  name: string;
}

/** A mode's policy from a namespace's labels; an invalid level is the most restrictive. */
const policyOf = (labels: Record<string, string>, mode: Mode): Policy => {
  const raw = labels[`${Prefix}${mode}`];
  const level: Level = raw === undefined ? 'privileged' : Levels.includes(raw as Level) ? (raw as Level) : 'restricted';
  const version = labels[`${Prefix}${mode}-version`];
  return { level, name: `${level}:${version && VersionPattern.test(version) ? version : 'latest'}` };
};

const labelErrors = (labels: Record<string, string>): FieldError[] =>
  Modes.flatMap((mode) => {
    const level = labels[`${Prefix}${mode}`];
    const version = labels[`${Prefix}${mode}-version`];
    return [
      ...(level !== undefined && !Levels.includes(level as Level) ? [invalidValue(`metadata.labels[${Prefix}${mode}]`, level, 'must be one of privileged, baseline, restricted')] : []),
      ...(version !== undefined && !VersionPattern.test(version) ? [invalidValue(`metadata.labels[${Prefix}${mode}-version]`, version, "must be 'latest' or of the form 'v1.x'")] : []),
    ];
  });

/** Where a workload kind keeps its pod template. */
const Templates: Record<string, (o: KubeObject) => unknown> = {
  '/replicationcontrollers': (o) => spec(o).template,
  '/podtemplates': (o) => (o as { template?: unknown }).template,
  'apps/deployments': (o) => spec(o).template,
  'apps/replicasets': (o) => spec(o).template,
  'apps/statefulsets': (o) => spec(o).template,
  'apps/daemonsets': (o) => spec(o).template,
  'batch/jobs': (o) => spec(o).template,
  'batch/cronjobs': (o) => obj(obj(spec(o).jobTemplate).spec).template,
};

const templateOf = (req: AdmissionRequest, o: KubeObject | undefined): { metadata: Obj; spec: Obj } | undefined => {
  const at = Templates[`${req.group}/${req.resource}`];
  if (!at || !o) return undefined;
  const t = obj(at(o));
  return { metadata: obj(t.metadata), spec: obj(t.spec) };
};

const isPod = (req: AdmissionRequest) => req.group === '' && req.resource === 'pods';
const isNamespace = (req: AdmissionRequest) => req.group === '' && req.resource === 'namespaces';

const namespaceLabels = async (req: AdmissionRequest): Promise<Record<string, string>> => {
  const store = req.services.find('', 'v1', 'namespaces');
  const ns = await store?.get({}, req.namespace!).catch(() => undefined);
  return ns?.metadata.labels ?? {};
};

/**
 * A namespace given a stricter `enforce` level warns about the pods it holds that would now be
 * refused (they stay): one line, then one per distinct set of reasons, naming the first pod and
 * how many others share it.
 */
const warnExisting = async (req: AdmissionRequest): Promise<void> => {
  if (req.operation !== 'UPDATE' || !req.oldObject) return;
  const enforce = policyOf(req.object.metadata.labels ?? {}, 'enforce');
  if (enforce.level === 'privileged' || enforce.name === policyOf(req.oldObject.metadata.labels ?? {}, 'enforce').name) return;
  const pods = (await req.services.find('', 'v1', 'pods')?.list({ namespace: req.name }, {}))?.items ?? [];
  const byReasons = new Map<string, string[]>();
  for (const p of pods) {
    const found = violations(enforce.level, { metadata: p.metadata as unknown as Obj, spec: spec(p) });
    if (found.length) {
      const reasons = [...new Set(found.map((v) => v.reason))].join(', ');
      byReasons.set(reasons, [...(byReasons.get(reasons) ?? []), p.metadata.name ?? '']);
    }
  }
  if (byReasons.size === 0) return;
  warn(req.ctx, `existing pods in namespace ${JSON.stringify(req.name)} violate the new PodSecurity enforce level ${JSON.stringify(enforce.name)}`);
  for (const [reasons, names] of byReasons) warn(req.ctx, `${names[0]}${names.length > 1 ? ` (and ${names.length - 1} other pods)` : ''}: ${reasons}`);
};

export const PodSecurity: AdmissionPlugin = {
  name: 'PodSecurity',
  handles: (req) =>
    !req.subresource &&
    ((isPod(req) && req.operation === 'CREATE') || (isNamespace(req) && (req.operation === 'CREATE' || req.operation === 'UPDATE')) ||
      (`${req.group}/${req.resource}` in Templates && (req.operation === 'CREATE' || req.operation === 'UPDATE'))),
  async validate(req) {
    if (isNamespace(req)) {
      const errs = labelErrors(req.object.metadata.labels ?? {});
      if (errs.length) throw invalid('Namespace', '', req.name, errs);
      await warnExisting(req);
      return;
    }
    if (!req.namespace) return;
    const labels = await namespaceLabels(req);
    const enforce = policyOf(labels, 'enforce');
    const warnAt = policyOf(labels, 'warn');
    if (enforce.level === 'privileged' && warnAt.level === 'privileged') return;
    if (isPod(req)) {
      const pod = { metadata: req.object.metadata as unknown as Obj, spec: spec(req.object) };
      const refused = violations(enforce.level, pod);
      if (refused.length) throw forbidden({ group: '', resource: 'pods' }, req.name, `violates PodSecurity ${JSON.stringify(enforce.name)}: ${describe(refused)}`);
      const warned = violations(warnAt.level, pod);
      if (warned.length) warn(req.ctx, `would violate PodSecurity ${JSON.stringify(warnAt.name)}: ${describe(warned)}`);
      return;
    }
    const template = templateOf(req, req.object)!;
    // An update that leaves the template as it was is not judged again.
    if (req.operation === 'UPDATE' && JSON.stringify(templateOf(req, req.oldObject)) === JSON.stringify(template)) return;
    for (const p of enforce.name === warnAt.name ? [enforce] : [enforce, warnAt]) {
      const found = violations(p.level, template);
      if (found.length) warn(req.ctx, `would violate PodSecurity ${JSON.stringify(p.name)}: ${describe(found)}`);
    }
  },
};
