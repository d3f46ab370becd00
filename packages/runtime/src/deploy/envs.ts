/**
 * func.yaml `run.envs` and `run.volumes` → a container's env, envFrom, volumes and mounts, read as
 * Knative's func reads them:
 *
 *   - name: A            value: text                         → env A=text
 *   - name: B            value: '{{ env:LOCAL }}'            → env B=<LOCAL from this shell> (required)
 *   - name: C            value: '{{ secret:s:key }}'         → env C from Secret s, key
 *   - name: D            value: '{{ configMap:m:key }}'      → env D from ConfigMap m, key
 *   -                    value: '{{ secret:s }}'             → every key of Secret s (envFrom)
 *   -                    value: '{{ configMap:m }}'          → every key of ConfigMap m (envFrom)
 *   volumes: secret | configMap | persistentVolumeClaim | emptyDir, each at a `path`
 *
 * Two departures, both so that the same func.yaml gives the same pod template (a redeploy without
 * a change rolls nothing): no `BUILT=<time>` variable, and an emptyDir volume is named after its
 * path instead of a random suffix. Knative's `ADDRESS=0.0.0.0` is left out: func-runtime listens on
 * every address. The referenced Secrets, ConfigMaps and claims are collected so that deploy can
 * check they exist before changing anything, as Knative's CheckResourcesArePresent does.
 */
import { createHash } from 'node:crypto';
import { CommandError } from '../command-error.js';
import type { EnvSpec, VolumeSpec } from '../project.js';
import type { EnvFromSource, EnvVar, Volume, VolumeMount } from './kube-types.js';

export interface References {
  secrets: Set<string>;
  configMaps: Set<string>;
  claims: Set<string>;
}

export const noReferences = (): References => ({ secrets: new Set(), configMaps: new Set(), claims: new Set() });

const TEMPLATE = /^\{\{\s*([A-Za-z]+)\s*:\s*([^:}\s]*)\s*(?::\s*([^:}\s]*)\s*)?\}\}$/;

function bad(entry: EnvSpec, why: string): CommandError {
  return new CommandError(`func.yaml run.envs entry ${entry.name ? `${entry.name} ` : ''}(value ${JSON.stringify(entry.value ?? null)}): ${why}.`);
}

function fromCluster(kind: string, name: string, key: string, entry: EnvSpec, refs: References): EnvVar['valueFrom'] {
  if (!name) throw bad(entry, `the ${kind} name is empty`);
  if (!key) throw bad(entry, `the key in ${kind} "${name}" is empty`);
  if (kind === 'secret') return refs.secrets.add(name), { secretKeyRef: { name, key } };
  return refs.configMaps.add(name), { configMapKeyRef: { name, key } };
}

function oneEnv(entry: EnvSpec, localEnv: NodeJS.ProcessEnv, refs: References): { env?: EnvVar; envFrom?: EnvFromSource } {
  const value = entry.value ?? '';
  const t = value.trim().startsWith('{{') ? TEMPLATE.exec(value.trim()) : undefined;
  if (t === null) throw bad(entry, 'not one of {{ env:NAME }}, {{ secret:name[:key] }}, {{ configMap:name[:key] }}');
  if (!t) {
    if (!entry.name) throw bad(entry, 'an entry without a name must import a Secret or ConfigMap ({{ secret:name }})');
    return { env: { name: entry.name, value } };
  }
  const [, kind, name = '', key] = t;
  if (kind !== 'env' && kind !== 'secret' && kind !== 'configMap') throw bad(entry, `unknown source "${kind}" (env, secret or configMap)`);
  if (kind === 'env') {
    if (!entry.name || key !== undefined) throw bad(entry, '{{ env:NAME }} sets a named variable from this shell');
    const local = localEnv[name];
    if (local === undefined) throw bad(entry, `it takes ${name} from this shell's environment, where it is not set. Set ${name}, then deploy again`);
    return { env: { name: entry.name, value: local } };
  }
  if (entry.name) {
    if (key === undefined) throw bad(entry, `a named variable takes one key: {{ ${kind}:${name}:KEY }}`);
    return { env: { name: entry.name, valueFrom: fromCluster(kind, name, key, entry, refs) } };
  }
  if (key !== undefined) throw bad(entry, `a single key needs a variable name: add name:`);
  if (!name) throw bad(entry, `the ${kind} name is empty`);
  if (kind === 'secret') return refs.secrets.add(name), { envFrom: { secretRef: { name } } };
  return refs.configMaps.add(name), { envFrom: { configMapRef: { name } } };
}

export function containerEnv(envs: EnvSpec[] | undefined, localEnv: NodeJS.ProcessEnv, refs: References): { env: EnvVar[]; envFrom: EnvFromSource[] } {
  const env: EnvVar[] = [];
  const envFrom: EnvFromSource[] = [];
  for (const entry of envs ?? []) {
    const one = oneEnv(entry, localEnv, refs);
    if (one.env) env.push(one.env);
    if (one.envFrom) envFrom.push(one.envFrom);
  }
  return { env, envFrom };
}

const shortHash = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 7);

function volumeOf(v: VolumeSpec, refs: References): Volume {
  if (v.secret !== undefined) return refs.secrets.add(v.secret), { name: `secret-${v.secret}`, secret: { secretName: v.secret } };
  if (v.configMap !== undefined) return refs.configMaps.add(v.configMap), { name: `config-map-${v.configMap}`, configMap: { name: v.configMap } };
  if (v.persistentVolumeClaim !== undefined) {
    const claimName = v.persistentVolumeClaim.claimName;
    if (!claimName) throw new CommandError(`func.yaml run.volumes entry at ${v.path}: persistentVolumeClaim needs a claimName.`);
    refs.claims.add(claimName);
    return { name: `pvc-${claimName}`, persistentVolumeClaim: { claimName, ...(v.persistentVolumeClaim.readOnly ? { readOnly: true } : {}) } };
  }
  const emptyDir = { ...(v.emptyDir?.medium ? { medium: v.emptyDir.medium } : {}), ...(v.emptyDir?.sizeLimit ? { sizeLimit: v.emptyDir.sizeLimit } : {}) };
  return { name: `empty-dir-${shortHash(v.path!)}`, emptyDir };
}

export function containerVolumes(volumes: VolumeSpec[] | undefined, refs: References): { volumes: Volume[]; mounts: VolumeMount[] } {
  const out: Volume[] = [];
  const mounts: VolumeMount[] = [];
  const paths = new Set<string>();
  for (const v of volumes ?? []) {
    if (!v.path || !v.path.startsWith('/')) throw new CommandError(`func.yaml run.volumes: every volume needs an absolute path to mount at (got ${JSON.stringify(v.path ?? null)}).`);
    if (paths.has(v.path)) throw new CommandError(`func.yaml run.volumes: mount path ${v.path} is defined more than once.`);
    paths.add(v.path);
    const volume = volumeOf(v, refs);
    if (!out.some((o) => o.name === volume.name)) out.push(volume);
    mounts.push({ name: volume.name, mountPath: v.path });
  }
  return { volumes: out, mounts };
}
