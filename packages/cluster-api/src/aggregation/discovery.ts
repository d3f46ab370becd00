/**
 * kube-aggregator's `/apis` and `/apis/<group>`: this server's groups and those of remote APIServices
 * in one list, ordered by group priority (a remote group's: the highest groupPriorityMinimum of its
 * APIServices), a group's versions by versionPriority, the first preferred. A remote group version is
 * listed whether or not it is available now, as kube-aggregator lists it (clients then see its 503).
 */
import type { KubeObject } from '../api/meta.js';
import { spec, str } from '../registry/kinds/common.js';
import { compareVersions, groupPriority } from '../registry/versions.js';
import type { APIGroup } from '../http/discovery.js';


const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

/** The groups of the remote APIServices, each with its priority. */
function remoteGroups(remote: readonly KubeObject[]): Map<string, { group: APIGroup; priority: number }> {
  const byGroup = new Map<string, KubeObject[]>();
  for (const o of remote) byGroup.set(str(spec(o).group), [...(byGroup.get(str(spec(o).group)) ?? []), o]);
  const out = new Map<string, { group: APIGroup; priority: number }>();
  for (const [name, services] of byGroup) {
    services.sort((a, b) => num(spec(b).versionPriority) - num(spec(a).versionPriority) || compareVersions(str(spec(a).version), str(spec(b).version)));
    const versions = services.map((o) => ({ groupVersion: `${name}/${str(spec(o).version)}`, version: str(spec(o).version) }));
    const priority = Math.max(...services.map((o) => num(spec(o).groupPriorityMinimum)));
    out.set(name, { group: { kind: 'APIGroup', apiVersion: 'v1', name, versions, preferredVersion: versions[0]! }, priority });
  }
  return out;
}

/** `/apis`: the local list with the remote groups added (a group served both ways gets the remote versions too). */
export function mergedGroupList(local: { groups: APIGroup[] }, remote: readonly KubeObject[]): { kind: 'APIGroupList'; apiVersion: 'v1'; groups: APIGroup[] } {
  const extra = remoteGroups(remote);
  const priorities = new Map<string, number>();
  const groups = local.groups.map((g) => {
    priorities.set(g.name, groupPriority(g.name));
    const more = extra.get(g.name);
    if (!more) return g;
    extra.delete(g.name);
    const known = new Set(g.versions.map((v) => v.version));
    return { ...g, versions: [...g.versions, ...more.group.versions.filter((v) => !known.has(v.version))] };
  });
  for (const [name, { group, priority }] of extra) (groups.push(group), priorities.set(name, priority));
  groups.sort((a, b) => priorities.get(b.name)! - priorities.get(a.name)! || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { kind: 'APIGroupList', apiVersion: 'v1', groups };
}
