/**
 * The one reconcile of Knative's flows (Sequence and Parallel): make the Channels and
 * Subscriptions the flow is made of (broker/flows/children.ts) with the flow as their controller,
 * update those whose spec drifted, delete those it controls and no longer wants (a step removed),
 * and write its status from them as they are. A child's change wakes its flow. A spec Knative's
 * webhook would refuse (stored without it) makes no children and a status that names the field.
 */
import type { KubeObject } from '../api/meta.js';
import type { Children } from '../broker/flows/children.js';
import { flowStatus } from '../broker/flows/status.js';
import type { FieldProblem } from '../broker/delivery/policy.js';
import { ensureChild } from '../serving/children.js';
import { controllerKey, type KindName, Kinds, type Obj, type ServingEnv } from '../serving/kinds.js';
import { splitKey, writeStatus } from './context.js';
import { startReconciler } from './reconciler.js';
import { ignoreRaces, inNamespace, type Controller } from './shared.js';

export interface FlowKind<T> {
  readonly name: string;
  readonly kind: 'Sequence' | 'Parallel';
  readonly store: 'sequences' | 'parallels';
  readonly problems: (flow: T) => FieldProblem[];
  readonly children: (flow: T) => Children;
}

const CHANNEL_STORES: readonly KindName[] = ['channels', 'inMemoryChannels'];
const storeOf = (kind: string | undefined): KindName => (kind === 'Channel' ? 'channels' : kind === 'InMemoryChannel' ? 'inMemoryChannels' : 'subscriptions');

export function startFlowController<T>(env: ServingEnv, k: FlowKind<T>): Controller {
  const flows = env.cache(k.store);
  const children: KindName[] = [...CHANNEL_STORES, 'subscriptions'];

  const reconcile = async (key: string): Promise<void> => {
    const { namespace, name } = splitKey(key);
    const flow = flows.get(namespace, name) as Obj | undefined;
    if (!flow || flow.metadata.deletionTimestamp) return;
    const problems = k.problems(flow as unknown as T);
    const wanted: Children = problems.length > 0 ? { channels: [], subscriptions: [] } : k.children(flow as unknown as T);
    const actual = new Map<string, Obj | { error: string }>();
    for (const child of [...wanted.channels, ...wanted.subscriptions]) {
      const got = await ensureChild(env, storeOf(child.kind), flow, child as unknown as Obj, ['spec']);
      actual.set(`${child.kind}/${child.metadata.name}`, got.ok ? got.object : { error: got.message });
    }
    // What it controls and no longer wants (fewer steps, another channel kind, an invalid spec).
    for (const kind of children) {
      for (const o of env.cache(kind).ownedBy(flow.metadata.uid!)) {
        if (actual.has(`${Kinds[kind].kind}/${o.metadata.name}`)) continue;
        await env.store(kind).delete(inNamespace(namespace), o.metadata.name!, { preconditions: { uid: o.metadata.uid } }).catch(ignoreRaces);
      }
    }
    const status = flowStatus({
      flow: flow as never,
      kind: k.kind,
      problems,
      wanted,
      // The child as the cache holds it now: its status is the broker's, written after our create.
      actual: (c) => {
        const got = actual.get(`${c.kind}/${c.metadata.name}`);
        if (!got || 'error' in got) return got as { error: string } | undefined;
        return (env.cache(storeOf(c.kind)).get(namespace, c.metadata.name) ?? got) as never;
      },
      now: new Date().toISOString(),
    });
    await writeStatus({ store: env.store(k.store), cache: flows }, flow, status as Record<string, unknown>);
  };

  const owner = controllerKey({ group: 'flows.knative.dev', kind: k.kind });
  return startReconciler(k.name, reconcile, [
    { cache: flows },
    ...children.map((kind) => ({ cache: env.cache(kind), keys: (o: KubeObject) => owner(o) })),
  ], { log: env.ctx.log });
}


