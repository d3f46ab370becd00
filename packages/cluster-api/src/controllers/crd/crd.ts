/**
 * The CRD controller (kube-apiserver's apiextensions controllers in one loop): for every
 * CustomResourceDefinition it accepts names (naming.ts), serves each served version as a definition
 * added to the registry (registry/crd/definition.ts), and marks it NamesAccepted and Established once
 * served, so a client that waits for Established finds the resource there. A CRD being deleted has its
 * custom resources deleted, then its definitions removed (ending their open watches) and its cleanup
 * finalizer dropped. Stored CRDs are served again at start.
 */
import type { KubeObject } from '../../api/meta.js';
import { groupVersion, type ResourceDefinition } from '../../registry/definition.js';
import type { Registry, ResourceStore } from '../../registry/rest.js';
import { definitionsOf } from '../../registry/crd/definition.js';
import { addUsed, nameCrd, type UsedNames } from '../../registry/crd/naming.js';
import { CleanupFinalizer, setCondition, specOf, statusOf, type CrdCondition } from '../../registry/crd/types.js';
import { timestamp } from '../../registry/generic/meta.js';
import { follow, ignoreRaces, SystemContext, type Controller, type ControllerOptions } from '../shared.js';
import { startSingleton } from '../reconciler.js';

/** How long a deleted CRD's resource stays served once empty, so open watches receive the deletions first. */
const DrainMs = 300;

interface Served {
  /** What the definitions were made from: spec and accepted names. */
  source: string;
  defs: ResourceDefinition[];
}

export const startCrdController = (registry: Registry, opts: ControllerOptions = {}): Controller => {
  const crds = registry.find('apiextensions.k8s.io', 'v1', 'customresourcedefinitions');
  if (!crds) return { stop: async () => undefined };
  const known = new Map<string, KubeObject>();
  const served = new Map<string, Served>();
  /** When each deleting CRD was found empty: its watchers get the last DELETED events before their watch ends. */
  const drained = new Map<string, number>();

  const unserve = (name: string): void => {
    for (const def of served.get(name)?.defs ?? []) registry.remove(def.group, def.version, def.plural);
    served.delete(name);
  };

  /** What `crd`'s group already holds: other CRDs' accepted names and the built-in resources. */
  const usedBy = (crd: KubeObject): UsedNames => {
    const group = specOf(crd).group;
    const used: UsedNames = { resources: new Set(), kinds: new Set() };
    const mine = new Set(served.get(crd.metadata.name!)?.defs ?? []);
    const custom = new Set([...served.values()].flatMap((s) => s.defs));
    for (const def of registry.definitions()) if (def.group === group && !mine.has(def) && !custom.has(def)) addUsed(used, def);
    for (const other of known.values()) if (other !== crd && specOf(other).group === group) addUsed(used, statusOf(other).acceptedNames ?? {});
    return used;
  };

  const serve = (crd: KubeObject): void => {
    const name = crd.metadata.name!;
    const source = JSON.stringify([crd.spec, statusOf(crd).acceptedNames]);
    if (served.get(name)?.source === source) return;
    unserve(name);
    const defs: ResourceDefinition[] = [];
    for (const def of definitionsOf(crd)) {
      try {
        registry.add(def);
        defs.push(def);
      } catch (err) {
        opts.log?.({ level: 'warn', controller: 'crd', msg: `${def.plural}.${groupVersion(def)} not served: ${(err as Error).message}` });
      }
    }
    served.set(name, { source, defs });
  };

  const writeStatus = async (crd: KubeObject, conditions: CrdCondition[], accepted = statusOf(crd).acceptedNames): Promise<KubeObject | undefined> => {
    const status = structuredClone(statusOf(crd));
    const now = timestamp();
    for (const c of conditions) setCondition(status, c, now);
    status.acceptedNames = accepted;
    if (JSON.stringify(status) === JSON.stringify(crd.status)) return crd;
    const body = { ...crd, status };
    return crds.update(SystemContext, crd.metadata.name!, body, 'status').then((w) => w.object, (err: unknown) => (ignoreRaces(err), undefined));
  };

  const establish = async (crd: KubeObject): Promise<void> => {
    const { accepted, namesAccepted, established } = nameCrd(crd, usedBy(crd));
    if (namesAccepted.status === 'True') serve({ ...crd, status: { ...statusOf(crd), acceptedNames: accepted } });
    const written = await writeStatus(crd, [namesAccepted, established], accepted);
    // Only a newer version: `crd` is from the start of the pass, and the watch may have brought a
    // later one since (a deletion) that an unchanged or older copy must not hide.
    const now = known.get(crd.metadata.name!);
    if (written && now && Number(written.metadata.resourceVersion) > Number(now.metadata.resourceVersion)) known.set(crd.metadata.name!, written);
  };

  /** Delete every custom resource of `crd`; the number still there (held by finalizers, or racing). */
  const emptied = async (name: string): Promise<number> => {
    const defs = served.get(name)?.defs ?? [];
    // Through the storage version: no conversion on the way (a webhook one may not be reachable).
    const def = defs.find((d) => !d.storedAs) ?? defs[0];
    const store: ResourceStore | undefined = def && registry.find(def.group, def.version, def.plural);
    if (!store) return 0;
    const left = await store.list(SystemContext, {});
    for (const o of left.items) {
      if (o.metadata.deletionTimestamp) continue;
      await store.delete({ ...SystemContext, namespace: o.metadata.namespace }, o.metadata.name!, { preconditions: { uid: o.metadata.uid } }).catch(ignoreRaces);
    }
    return (await store.list(SystemContext, {})).items.length;
  };

  const finalize = async (crd: KubeObject): Promise<boolean> => {
    const name = crd.metadata.name!;
    const progress = await writeStatus(crd, [{ type: 'Terminating', status: 'True', reason: 'InstanceDeletionInProgress', message: 'CustomResource deletion is in progress' }]);
    if (!progress) return false;
    if ((await emptied(name)) > 0) return true;
    const since = drained.get(name) ?? drained.set(name, Date.now()).get(name)!;
    if (Date.now() - since < DrainMs) return true;
    drained.delete(name);
    const done = await writeStatus(progress, [{ type: 'Terminating', status: 'False', reason: 'InstanceDeletionCompleted', message: 'removed all instances' }]);
    unserve(name);
    if (!done) return false;
    const finalizers = (done.metadata.finalizers ?? []).filter((f) => f !== CleanupFinalizer);
    const patch = { metadata: { finalizers: finalizers.length ? finalizers : null, resourceVersion: done.metadata.resourceVersion } };
    await crds.patch(SystemContext, name, 'merge', patch).catch(ignoreRaces);
    return false;
  };

  const pass = async () => {
    let waiting = false;
    for (const crd of [...known.values()]) {
      if (!crd.metadata.deletionTimestamp) await establish(crd);
      else if ((crd.metadata.finalizers ?? []).includes(CleanupFinalizer)) waiting = (await finalize(crd)) || waiting;
    }
    for (const name of served.keys()) if (!known.has(name)) unserve(name);
    if (waiting) return { requeueAfter: 200 };
  };

  const loop = startSingleton('crd-controller', pass, 5000, { log: opts.log });
  const watch = follow(crds, loop, (type, crd) => {
    if (type === 'DELETED') known.delete(crd.metadata.name!);
    else known.set(crd.metadata.name!, crd);
    loop.kick(0);
  });
  return {
    stop: async () => {
      watch.close();
      await loop.stop();
    },
  };
};
