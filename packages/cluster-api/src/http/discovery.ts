/**
 * Discovery documents, derived from the registered definitions only (principle 1): what kubectl
 * reads to map `kubectl get po` to `/api/v1/namespaces/x/pods`. kubectl fails on a group version
 * that lists no resources, so only group versions that have at least one definition appear.
 */
import type { ResourceDefinition, Verb } from '../registry/definition.js';
import { groupVersion } from '../registry/definition.js';
import type { GroupVersionKind } from '../registry/subresource.js';
import { compareVersions, groupPriority } from '../registry/versions.js';

interface APIResource {
  name: string;
  group?: string;
  version?: string;
  singularName: string;
  namespaced: boolean;
  kind: string;
  verbs: Verb[];
  shortNames?: string[];
  categories?: string[];
}

interface GroupVersionForDiscovery {
  groupVersion: string;
  version: string;
}

export interface APIGroup {
  kind: 'APIGroup';
  apiVersion: 'v1';
  name: string;
  versions: GroupVersionForDiscovery[];
  preferredVersion: GroupVersionForDiscovery;
}

/** A subresource of another kind names it, with its group and version when they differ (the scale client looks them up). */
function subresourceKind(def: ResourceDefinition, other: GroupVersionKind | undefined): Pick<APIResource, 'group' | 'version' | 'kind'> {
  if (!other) return { kind: def.kind };
  return other.group === def.group && other.version === def.version ? { kind: other.kind } : { ...other };
}

function resourcesOf(def: ResourceDefinition): APIResource[] {
  const main: APIResource = {
    name: def.plural,
    singularName: def.singular,
    namespaced: def.namespaced,
    kind: def.kind,
    verbs: [...def.verbs],
  };
  if (def.shortNames?.length) main.shortNames = [...def.shortNames];
  if (def.categories?.length) main.categories = [...def.categories];
  const subs = Object.entries(def.subresources ?? {}).map(([name, sub]) => ({
    name: `${def.plural}/${name}`,
    singularName: '',
    namespaced: def.namespaced,
    ...subresourceKind(def, sub.kind),
    verbs: [...sub.verbs],
  }));
  return [main, ...subs];
}

export { compareVersions } from '../registry/versions.js';

export class Discovery {
  private readonly groups = new Map<string, APIGroup>();
  private readonly lists = new Map<string, object>();

  /** Built from one generation of the registry's definitions (the app builds another when it moves). */
  constructor(definitions: readonly ResourceDefinition[]) {
    const byGroupVersion = new Map<string, ResourceDefinition[]>();
    for (const def of definitions) {
      const gv = groupVersion(def);
      byGroupVersion.set(gv, [...(byGroupVersion.get(gv) ?? []), def]);
    }
    for (const [gv, defs] of byGroupVersion) {
      this.lists.set(gv, { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: gv, resources: defs.flatMap(resourcesOf) });
      const group = defs[0]!.group;
      if (group) this.addVersion(group, defs[0]!.version);
    }
  }

  private addVersion(group: string, version: string): void {
    const versions = [...(this.groups.get(group)?.versions ?? []), { groupVersion: `${group}/${version}`, version }];
    versions.sort((a, b) => compareVersions(a.version, b.version));
    this.groups.set(group, { kind: 'APIGroup', apiVersion: 'v1', name: group, versions, preferredVersion: versions[0]! });
  }

  /** `/api`: the core group's versions. */
  apiVersions(serverAddress: string): object {
    return {
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
    };
  }

  /** Highest priority first (kube-apiserver's order, see groupPriority); otherwise as registered. */
  groupList(): { kind: 'APIGroupList'; apiVersion: 'v1'; groups: APIGroup[] } {
    const groups = [...this.groups.values()].sort((a, b) => groupPriority(b.name) - groupPriority(a.name));
    return { kind: 'APIGroupList', apiVersion: 'v1', groups };
  }

  group(name: string): APIGroup | undefined {
    return this.groups.get(name);
  }

  /** `/api/v1`, `/oapi/v1` (group '') and `/apis/{g}/{v}`. */
  resourceList(group: string, version: string): object | undefined {
    return this.lists.get(group ? `${group}/${version}` : version);
  }
}
