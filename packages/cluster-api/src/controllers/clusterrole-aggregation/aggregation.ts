/**
 * The ClusterRole aggregation controller (kube-controller-manager's clusterrole-aggregation): a
 * ClusterRole with an aggregationRule gets, as its rules, the rules of every other ClusterRole its
 * selectors match (in name order, each rule once), written by server-side apply as the field manager
 * `clusterrole-aggregation-controller`. Any ClusterRole change starts a pass; aggregated roles that
 * feed others (edit into admin) settle over the passes their own writes start.
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../../api/meta.js';
import { RbacGroup, type ClusterRole, type PolicyRule } from '../../api/rbac-v1.js';
import { labelSelectorMatcher } from '../../registry/generic/label-selector.js';
import type { ApiClient, ResourceClient } from '../../client/interface.js';
import { ignoreRaces, SystemContext, type Controller, type ControllerOptions } from '../shared.js';
import { startReconciler } from '../reconciler.js';

const FieldManager = 'clusterrole-aggregation-controller';

/** The rules `role` should have, or undefined when it aggregates nothing. */
export function aggregatedRules(role: ClusterRole, all: readonly ClusterRole[]): PolicyRule[] | undefined {
  const selectors = role.aggregationRule?.clusterRoleSelectors;
  if (!selectors) return undefined;
  const rules: PolicyRule[] = [];
  const sorted = [...all].sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : 1));
  for (const selector of selectors) {
    const matches = labelSelectorMatcher(selector);
    for (const other of sorted) {
      if (other.metadata.name === role.metadata.name || !matches(other.metadata.labels ?? {})) continue;
      for (const rule of other.rules ?? []) if (!rules.some((r) => isDeepStrictEqual(r, rule))) rules.push(rule);
    }
  }
  return rules;
}

/** One pass over every aggregated ClusterRole; how many were rewritten. */
export async function aggregateClusterRoles(store: ResourceClient): Promise<number> {
  const { items } = await store.list(SystemContext, {});
  const all = items as ClusterRole[];
  let written = 0;
  for (const role of all) {
    const rules = aggregatedRules(role, all);
    if (!rules || isDeepStrictEqual(rules, role.rules ?? [])) continue;
    const config: KubeObject = { apiVersion: `${RbacGroup}/v1`, kind: 'ClusterRole', metadata: { name: role.metadata.name }, rules };
    await store.patch({ ...SystemContext, fieldManager: FieldManager, force: true }, role.metadata.name!, 'apply', config).catch(ignoreRaces);
    written++;
  }
  return written;
}

/** Passes until nothing changes (at most a few: one per level of aggregation), for start-up. */
export async function settleAggregation(registry: ApiClient): Promise<void> {
  const store = registry.find(RbacGroup, 'v1', 'clusterroles');
  for (let pass = 0; store && pass < 5 && (await aggregateClusterRoles(store)) > 0; pass++);
}

export const startClusterRoleAggregation = (registry: ApiClient, opts: ControllerOptions = {}): Controller => {
  const store = registry.find(RbacGroup, 'v1', 'clusterroles');
  if (!store) return { stop: async () => undefined };
  // One key: an aggregated role reads every other, so any change is one pass over them all.
  return startReconciler('clusterrole-aggregation-controller', async () => void (await aggregateClusterRoles(store)), [{ watch: store, keys: () => ['clusterroles'] }], { log: opts.log, workers: 1 });
};
