/**
 * A container's environment as the kubelet builds it (makeEnvironmentVariables): the API server's
 * service variables first, then `envFrom` sources in order, then `env` in order (later names win),
 * `$(VAR)` expanded against what came before, `valueFrom` resolved from the pod (fieldRef,
 * resourceFieldRef), ConfigMaps and Secrets. A missing object or key that is not `optional` fails the
 * container with the kubelet's message (CreateContainerConfigError).
 */
import { ContainerConfigError, fieldValue, resourceValue, type PodPlace } from './downward.js';
import type { DataObject, PodSources } from '../sources.js';
import type { Container, EnvVar, Pod } from '../types.js';

/** expansion.Expand: `$(NAME)` → its value when defined, `$$` → `$`, anything else as written. */
export function expand(input: string, lookup: (name: string) => string | undefined): string {
  let out = '';
  for (let i = 0; i < input.length; i++) {
    const c = input[i];
    if (c !== '$' || i + 1 >= input.length) {
      out += c;
      continue;
    }
    const next = input[i + 1];
    if (next === '$') {
      out += '$';
      i++;
    } else if (next === '(') {
      const close = input.indexOf(')', i + 2);
      if (close < 0) {
        out += input.slice(i);
        break;
      }
      const name = input.slice(i + 2, close);
      out += lookup(name) ?? `$(${name})`;
      i = close;
    } else out += c;
  }
  return out;
}

interface Kind {
  label: 'ConfigMap' | 'Secret';
  noun: 'configmap' | 'secret';
  get(sources: PodSources, namespace: string, name: string): Promise<DataObject | undefined>;
}

const ConfigMaps: Kind = { label: 'ConfigMap', noun: 'configmap', get: (s, ns, n) => s.configMap(ns, n) };
const Secrets: Kind = { label: 'Secret', noun: 'secret', get: (s, ns, n) => s.secret(ns, n) };

/** One ConfigMap or Secret per name per container start, as the kubelet's per-call maps. */
class Fetched {
  private readonly seen = new Map<string, Promise<DataObject | undefined>>();
  constructor(private readonly sources: PodSources, private readonly namespace: string) {}

  async get(kind: Kind, name: string, optional: boolean): Promise<DataObject | undefined> {
    const key = `${kind.noun}/${name}`;
    if (!this.seen.has(key)) this.seen.set(key, kind.get(this.sources, this.namespace, name));
    const found = await this.seen.get(key)!;
    if (!found && !optional) throw new ContainerConfigError(`${kind.noun} "${name}" not found`);
    return found;
  }
}

/** Names the kubelet skips from envFrom (with an InvalidEnvironmentVariableNames event). */
const validName = (name: string): boolean => name.length > 0 && !name.includes('=') && /^[\x20-\x7e]+$/.test(name);

export interface BuiltEnv {
  env: Record<string, string>;
  /** envFrom keys skipped, per source, for the kubelet's event. */
  skipped: { source: string; keys: string[] }[];
}

export async function containerEnv(pod: Pod, container: Container, base: Record<string, string>, sources: PodSources, place: PodPlace): Promise<BuiltEnv> {
  const namespace = pod.metadata.namespace ?? '';
  const fetched = new Fetched(sources, namespace);
  const env: Record<string, string> = { ...base };
  const skipped: BuiltEnv['skipped'] = [];
  for (const from of container.envFrom ?? []) {
    const ref = from.configMapRef ?? from.secretRef;
    const kind = from.configMapRef ? ConfigMaps : Secrets;
    if (!ref?.name) continue;
    const found = await fetched.get(kind, ref.name, ref.optional === true);
    const bad: string[] = [];
    for (const [key, value] of Object.entries(found?.data ?? {})) {
      const name = (from.prefix ?? '') + key;
      if (validName(name)) env[name] = value;
      else bad.push(name);
    }
    if (bad.length) skipped.push({ source: `${kind.label === 'ConfigMap' ? 'configMap' : 'secret'} ${namespace}/${ref.name}`, keys: bad.sort() });
  }
  for (const v of container.env ?? []) {
    const value = await envValue(v, pod, container, env, fetched, place);
    if (value !== undefined) env[v.name] = value;
  }
  return { env, skipped };
}

async function envValue(v: EnvVar, pod: Pod, container: Container, sofar: Record<string, string>, fetched: Fetched, place: PodPlace): Promise<string | undefined> {
  const from = v.valueFrom;
  if (!from) return expand(v.value ?? '', (name) => sofar[name]);
  if (from.fieldRef) return fieldValue(pod, from.fieldRef.fieldPath, place);
  if (from.resourceFieldRef) return resourceValue(pod, container, from.resourceFieldRef, place);
  const ref = from.configMapKeyRef ?? from.secretKeyRef;
  if (!ref) return undefined;
  const kind = from.configMapKeyRef ? ConfigMaps : Secrets;
  const optional = ref.optional === true;
  const found = await fetched.get(kind, ref.name ?? '', optional);
  if (!found) return undefined;
  const value = found.data[ref.key];
  if (value === undefined && !optional) throw new ContainerConfigError(`couldn't find key ${ref.key} in ${kind.label} ${pod.metadata.namespace ?? ''}/${ref.name ?? ''}`);
  return value;
}
