/**
 * Rollback asked through the beta versions (`spec.rollbackTo`, stored as the
 * `deprecated.deployment.rollback.to` annotation, or POST …/deployments/{name}/rollback): the
 * template of the ReplicaSet with that revision (0: the one before the newest) is copied into the
 * Deployment with its annotations, and the request is cleared (rollback.go). Events:
 * `DeploymentRollback` "Rolled back deployment "web" to revision 2", or a Warning
 * `DeploymentRollbackRevisionNotFound` / `DeploymentRollbackTemplateUnchanged`.
 */
import type { KubeObject } from '../../api/meta.js';
import { spec } from '../../registry/kinds/common.js';
import { inNamespace } from '../shared.js';
import type { DeploymentRun } from './run.js';
import { annotationsFrom, lastRevision, Reasons, revision, RollbackToAnnotation, sameTemplate, withoutHash } from './util.js';

/** The revision a rollback asks for, or undefined when none is asked. */
export const rollbackTo = (d: KubeObject): number | undefined => {
  const v = d.metadata.annotations?.[RollbackToAnnotation];
  if (v === undefined) return undefined;
  const n = Number(v);
  return Number.isInteger(n) ? n : undefined;
};

/** updateDeploymentAndClearRollbackTo (with the template and annotations a rollback sets). */
const clear = async (run: DeploymentRun, change: { template?: unknown; annotations?: Record<string, string> } = {}): Promise<void> => {
  const d = structuredClone(run.d);
  const annotations = { ...(change.annotations ?? d.metadata.annotations) };
  delete annotations[RollbackToAnnotation];
  d.metadata.annotations = annotations;
  if (change.template) (d.spec as Record<string, unknown>).template = change.template;
  const { object } = await run.env.deployments.store.update(inNamespace(d.metadata.namespace), d.metadata.name!, d);
  run.env.deployments.cache.observe(object);
  run.d = object;
};

export const rollback = async (run: DeploymentRun): Promise<void> => {
  const { newRS, old } = await run.newAndOld(true);
  const all = newRS ? [...old, newRS] : old;
  let to = rollbackTo(run.d) ?? 0;
  const warn = (reason: string, message: string) => run.env.recorder.event(run.d, 'Warning', reason, message);
  if (to === 0 && (to = lastRevision(all)) === 0) {
    warn(Reasons.RollbackRevisionNotFound, 'Unable to find last revision.');
    return clear(run);
  }
  const target = all.find((rs) => revision(rs) === to);
  if (!target) {
    warn(Reasons.RollbackRevisionNotFound, 'Unable to find the revision to rollback to.');
    return clear(run);
  }
  if (sameTemplate(spec(run.d).template, spec(target).template)) {
    warn(Reasons.RollbackTemplateUnchanged, `The rollback revision contains the same template as current deployment "${run.name}"`);
    return clear(run);
  }
  await clear(run, { template: withoutHash(spec(target).template), annotations: annotationsFrom(run.d, target) });
  run.env.recorder.event(run.d, 'Normal', Reasons.RollbackDone, `Rolled back deployment "${run.name}" to revision ${to}`);
};
