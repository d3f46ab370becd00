/**
 * kube-apiserver's autoregister: one `Local` APIService per group version this server serves, created
 * when missing (also after a client deleted it), its spec put back when a client changed it, and removed once the
 * group version is no longer served (a CRD's group gone). Labelled as kube-aggregator labels the ones
 * it manages; a client's APIService of another name is never touched.
 */
import type { KubeObject } from '../api/meta.js';
import type { ResourceDefinition } from '../registry/definition.js';
import type { ResourceStore } from '../registry/rest.js';
import { compareVersions, groupPriority } from '../registry/versions.js';
import { isApiError } from '../api/errors.js';
import { SystemContext } from '../controllers/shared.js';
import { obj, spec } from '../registry/kinds/common.js';

export const AutomanagedLabel = 'kube-aggregator.kubernetes.io/automanaged';

const VersionPriorities = [15, 9, 1];

/** The Local APIServices of the served definitions, by name. */
export function localApiServices(defs: readonly ResourceDefinition[]): Map<string, KubeObject> {
  const byGroup = new Map<string, Set<string>>();
  for (const d of defs) byGroup.set(d.group, (byGroup.get(d.group) ?? new Set()).add(d.version));
  const out = new Map<string, KubeObject>();
  for (const [group, versions] of byGroup) {
    [...versions].sort(compareVersions).forEach((version, i) => {
      const name = `${version}.${group}`;
      out.set(name, {
        apiVersion: 'apiregistration.k8s.io/v1',
        kind: 'APIService',
        metadata: { name, labels: { [AutomanagedLabel]: 'onstart' } },
        spec: { group, version, groupPriorityMinimum: groupPriority(group), versionPriority: VersionPriorities[Math.min(i, 2)] },
      });
    });
  }
  return out;
}

export const isLocal = (o: KubeObject): boolean => spec(o).service === undefined || spec(o).service === null;

const sameSpec = (a: KubeObject, b: KubeObject): boolean => JSON.stringify(a.spec) === JSON.stringify(b.spec);

/** Brings the stored APIServices in line with `wanted`; `stored`: what the store holds now. Conflicts are left for the next pass. */
export async function syncLocal(store: ResourceStore, wanted: Map<string, KubeObject>, stored: readonly KubeObject[]): Promise<void> {
  const have = new Map(stored.map((o) => [o.metadata.name!, o]));
  const tolerate = (err: unknown) => {
    if (!isApiError(err) || (err.code !== 409 && err.code !== 404)) throw err;
  };
  for (const [name, want] of wanted) {
    const found = have.get(name);
    if (!found) await store.create(SystemContext, structuredClone(want)).catch(tolerate);
    else if (!sameSpec(found, want)) {
      await store.update(SystemContext, name, { ...found, spec: structuredClone(want.spec) }).catch(tolerate);
    }
  }
  for (const [name, o] of have) {
    if (!wanted.has(name) && obj(o.metadata.labels)[AutomanagedLabel] && isLocal(o)) await store.delete(SystemContext, name, {}).catch(tolerate);
  }
}
