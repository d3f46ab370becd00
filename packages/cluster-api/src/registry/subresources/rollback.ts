/**
 * deployments/{name}/rollback of apps/v1beta1 and extensions/v1beta1 (Kubernetes' RollbackREST, what
 * `kubectl rollout undo` posted before 1.9): a DeploymentRollback asks the deployment controller to
 * roll back by setting spec.rollbackTo (stored as the `deprecated.deployment.rollback.to` annotation; plus the rollback's
 * updatedAnnotations), answered with a Success Status. Beyond ValidateDeploymentRollback (a name, a
 * revision ≥ 0), a revision the Deployment's history does not hold is refused here at once (422 with
 * the cause on rollbackTo.revision) rather than only as the controller's Warning event later.
 */
import type { KubeObject } from '../../api/meta.js';
import { badRequest, invalid } from '../../api/errors.js';
import { clone, isObject } from '../generic/meta.js';
import { invalidValue, notFoundValue, required, type FieldError } from '../generic/validation.js';
import { obj, str } from '../kinds/common.js';
import type { SubresourceDef } from '../subresource.js';

interface Rollback {
  revision: number;
  annotations: Record<string, string>;
}

const Revision = 'deployment.kubernetes.io/revision';

const causes = (errs: FieldError[]) => errs.map((e) => ({ reason: e.type, message: e.message, field: e.field }));

const check = (group: string) => (body: unknown, name: string): Rollback => {
  if (!isObject(body) || (body.kind !== undefined && body.kind !== 'DeploymentRollback')) throw badRequest(`the body must be a ${group}/v1beta1 DeploymentRollback`);
  const errs: FieldError[] = [];
  if (!str(body.name)) errs.push(required('name'));
  else if (body.name !== name) throw badRequest('name in URL does not match name in DeploymentRollback object');
  const revision = obj(body.rollbackTo).revision ?? 0;
  if (!Number.isInteger(revision) || (revision as number) < 0) errs.push(invalidValue('rollbackTo.revision', revision, 'must be greater than or equal to 0'));
  if (errs.length > 0) throw invalid('DeploymentRollback', group, name, causes(errs));
  const annotations = Object.fromEntries(Object.entries(obj(body.updatedAnnotations)).filter((e): e is [string, string] => typeof e[1] === 'string'));
  return { revision: revision as number, annotations };
};

/** The revisions of the Deployment's ReplicaSets (the ones it controls). */
const revisions = (deployment: KubeObject, sets: KubeObject[]): Set<number> =>
  new Set(sets.filter((rs) => rs.metadata.ownerReferences?.some((r) => r.controller && r.uid === deployment.metadata.uid))
    .map((rs) => Number(rs.metadata.annotations?.[Revision] ?? 0)).filter((n) => n > 0));

export const deploymentRollback = (group: 'apps' | 'extensions'): SubresourceDef => ({
  verbs: ['create'],
  kind: { group, version: 'v1beta1', kind: 'DeploymentRollback' },
  behaviour: {
    type: 'action',
    check: check(group),
    async act({ revision, annotations }: Rollback, parent, ctx, services) {
      const deployment = await parent.get();
      const name = deployment.metadata.name!;
      const sets = await services.find('apps', 'v1', 'replicasets')!.list({ ...ctx, namespace: deployment.metadata.namespace }, {});
      const known = revisions(deployment, sets.items);
      if (revision > 0 && !known.has(revision)) {
        throw invalid('DeploymentRollback', group, name, causes([notFoundValue('rollbackTo.revision', revision)]));
      }
      if (!ctx.dryRun) {
        // The parent is read at its beta version, where spec.rollbackTo is what the annotation is converted from.
        await parent.update((old) => {
          const next = clone(old);
          if (Object.keys(annotations).length) next.metadata.annotations = { ...next.metadata.annotations, ...annotations };
          next.spec = { ...obj(next.spec), rollbackTo: { revision } };
          return next;
        });
      }
      return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', message: `rollback request for deployment "${name}" succeeded`, code: 200 } as unknown as KubeObject;
    },
  },
});
