/**
 * What a SinkBinding does to a bound workload's pod template (Knative's SinkBinding Do and Undo):
 * every container and init container gets `K_SINK` (the resolved sink) and `K_CE_OVERRIDES` (the
 * binding's ceOverrides as JSON, empty without them) appended after its own variables, any earlier
 * K_SINK, K_CE_OVERRIDES and K_CA_CERTS removed first; undoing removes them. A workload is bound
 * through `spec.template` (duckv1.WithPod: Deployments, StatefulSets, DaemonSets, ReplicaSets, Jobs).
 */
import type { KubeObject } from '../api/meta.js';

export const BindingVariables = ['K_SINK', 'K_CE_OVERRIDES', 'K_CA_CERTS'];

interface EnvVar { name: string; value?: string }
interface Container { env?: EnvVar[] }
type WithPod = KubeObject & { spec?: { template?: { spec?: { containers?: Container[]; initContainers?: Container[] } } } };

const each = (o: WithPod, fn: (c: Container) => void): void => {
  const pod = o.spec?.template?.spec;
  for (const c of [...(pod?.initContainers ?? []), ...(pod?.containers ?? [])]) fn(c);
};

const undoOne = (c: Container): void => {
  if (!c.env) return;
  c.env = c.env.filter((e) => !BindingVariables.includes(e.name));
};

/** A copy of `o` bound to `sinkUri` (or unbound, with `sinkUri` undefined). */
export function bound(o: KubeObject, sinkUri: string | undefined, ceOverrides: unknown): KubeObject {
  const copy = structuredClone(o) as WithPod;
  const overrides = ceOverrides && typeof ceOverrides === 'object' ? JSON.stringify(ceOverrides) : '';
  each(copy, (c) => {
    undoOne(c);
    if (sinkUri !== undefined) c.env = [...(c.env ?? []), { name: 'K_SINK', value: sinkUri }, { name: 'K_CE_OVERRIDES', value: overrides }];
  });
  return copy;
}
