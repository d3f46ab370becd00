/**
 * kube-apiserver's `--runtime-config`: which built-in group versions (and resources) are served.
 * Comma-separated `key[=value]`; a key is `api/all`, `api/ga`, `api/beta` or `api/alpha` (every
 * version, or every version of that stability: value exactly `true` or `false`), `v1` / `api/v1` /
 * `api/legacy` (the core group; `api/v1/<resource>` one of its resources), `<group>/<version>` or
 * `<group>/<version>/<resource>`, with a value Go's
 * ParseBool reads (`true`, `false`, `1`, `0`, `t`, `F`, …; none is `true`). They apply in that order:
 * the matchers, then group versions, then single resources. Whatever is not named stays as served by
 * default (every built-in definition, the seed's legacy group versions included). The core group
 * stays on (`api/all=false` needs `v1=true` beside it): the server's own bootstrap uses it.
 *
 * ```ts
 * const served = runtimeConfig('apps/v1beta1=false,extensions/v1beta1=false', allKinds);
 * allKinds.filter(served);
 * ```
 */
import { groupVersion, type ResourceDefinition } from './definition.js';

export class RuntimeConfigError extends Error {
  override readonly name = 'RuntimeConfigError';
}

const Matchers: Readonly<Record<string, (version: string) => boolean>> = {
  'api/all': () => true,
  'api/ga': (v) => /^v\d+$/.test(v),
  'api/beta': (v) => /^v\d+beta\d+$/.test(v),
  'api/alpha': (v) => /^v\d+alpha\d+$/.test(v),
};

const CoreKeys = new Set(['v1', 'api/v1', 'api/legacy']);

const True = ['1', 't', 'T', 'TRUE', 'true', 'True'];
const False = ['0', 'f', 'F', 'FALSE', 'false', 'False'];

/** strconv.ParseBool, with an empty value meaning true (a bare key turns it on). */
const parseBool = (key: string, value: string): boolean => {
  if (value === '' || True.includes(value)) return true;
  if (False.includes(value)) return false;
  throw new RuntimeConfigError(`invalid value of ${key}: ${value}, err: strconv.ParseBool: parsing ${JSON.stringify(value)}: invalid syntax`);
};

const dnsSubdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** The value as `key → value` pairs, in order (cliflag.ConfigurationMap: a later key wins). */
const entriesOf = (raw: string): Map<string, string> => {
  const entries = new Map<string, string>();
  for (const part of raw.split(',')) {
    if (part.trim() === '') continue;
    const at = part.indexOf('=');
    const [key, value] = at < 0 ? [part.trim(), ''] : [part.slice(0, at).trim(), part.slice(at + 1).trim()];
    if (key === '') throw new RuntimeConfigError(`runtime-config invalid key in ${JSON.stringify(part)}`);
    entries.set(key, value);
  }
  return entries;
};

/**
 * Which of `defs` are served under `raw` (a predicate over them). Throws RuntimeConfigError, with
 * kube-apiserver's words, for a value that is not a boolean, a key that is no group version, a group
 * no definition serves, or a version of a served group that is not served.
 */
export function runtimeConfig(raw: string, defs: readonly ResourceDefinition[]): (def: ResourceDefinition) => boolean {
  const versions = new Set(defs.map(groupVersion));
  const groups = new Set(defs.map((d) => d.group));
  const enabled = new Map([...versions].map((gv) => [gv, true]));
  const resources = new Map<string, boolean>();
  const entries = entriesOf(raw);
  for (const [key, matches] of Object.entries(Matchers)) {
    const value = entries.get(key);
    if (value === undefined) continue;
    if (value !== 'true' && value !== 'false') throw new RuntimeConfigError(`invalid value ${key}=${value}`);
    for (const gv of versions) if (matches(gv.slice(gv.lastIndexOf('/') + 1))) enabled.set(gv, value === 'true');
  }
  const byVersion: [string, boolean][] = [];
  const unknown: string[] = [];
  for (const [key, value] of entries) {
    if (key in Matchers) continue;
    const tokens = CoreKeys.has(key) ? ['', 'v1'] : key.startsWith('api/v1/') ? ['', 'v1', key.slice('api/v1/'.length)] : key.split('/');
    if (tokens.length < 2 || tokens.length > 3 || (tokens[0] !== '' && !dnsSubdomain.test(tokens[0]!)) || !/^[a-z0-9]+$/.test(tokens[1]!)) {
      throw new RuntimeConfigError(`runtime-config invalid key ${key}`);
    }
    const gv = tokens[0] ? `${tokens[0]}/${tokens[1]}` : tokens[1]!;
    if (!groups.has(tokens[0]!)) {
      unknown.push(tokens[0]!);
      continue;
    }
    if (!versions.has(gv)) throw new RuntimeConfigError(`group version ${gv} that has not been registered`);
    const on = parseBool(key, value);
    if (tokens.length === 2) {
      byVersion.push([gv, on]);
      continue;
    }
    const resource = tokens[2]!;
    if (resource.toLowerCase() !== resource) throw new RuntimeConfigError(`invalid key ${key}: group/version/resource and resource is always lowercase plural, not ${JSON.stringify(resource)}`);
    if (!defs.some((d) => groupVersion(d) === gv && d.plural === resource)) throw new RuntimeConfigError(`invalid key ${key}: ${gv} serves no resource ${resource}`);
    resources.set(`${gv}/${resource}`, on);
  }
  if (unknown.length > 0) throw new RuntimeConfigError(`unknown api groups ${unknown.join(',')}`);
  for (const [gv, on] of byVersion) enabled.set(gv, on);
  const served = (def: ResourceDefinition): boolean => resources.get(`${groupVersion(def)}/${def.plural}`) ?? enabled.get(groupVersion(def)) ?? true;
  const coreOff = defs.filter((d) => d.group === '' && !served(d)).map((d) => d.plural);
  if (coreOff.length > 0) throw new RuntimeConfigError(`the core group v1 cannot be turned off (${coreOff.join(',')}): this server's bootstrap and controllers use it`);
  return served;
}
