/**
 * A pod's volumes as files in its directory (`<pod dir>/volumes/<name>`): configMap, secret,
 * downwardAPI and projected sources written once when the pod starts (service account tokens are
 * refreshed before they expire, as the kubelet does at 80% of their life), emptyDir as an empty
 * directory, hostPath as the node's own path. Other volume types cannot back a process and fail
 * the mount with the kubelet's FailedMount wording. Item paths are checked: nothing is written
 * outside the volume. A projected volume's sources are read from the API together (a pod's start
 * waits for one round trip, not one per source), then written in order.
 */
import { existsSync, mkdirSync, statSync, writeFileSync, renameSync } from 'node:fs';
import { dirname, isAbsolute, join, normalize, sep } from 'node:path';
import { ContainerConfigError, fieldValue, resourceValue, type PodPlace } from '../pods/downward.js';
import type { DataObject, PodSources } from '../sources.js';
import type { Pod, Volume } from '../types.js';

/** A volume that cannot be set up: the FailedMount event's message. */
export class VolumeError extends Error {
  override readonly name = 'VolumeError';
  constructor(readonly volume: string, why: string) {
    super(`MountVolume.SetUp failed for volume "${volume}" : ${why}`);
  }
}

export const Supported = ['configMap', 'secret', 'downwardAPI', 'emptyDir', 'projected', 'hostPath'] as const;

interface Item {
  key?: string;
  path: string;
  mode?: number;
  fieldRef?: { fieldPath: string };
  resourceFieldRef?: { resource: string; containerName?: string; divisor?: string | number };
}

interface TokenSource {
  audience?: string;
  expirationSeconds?: number;
  path: string;
}

/** A token file to keep fresh: where, and what to ask for. */
export interface TokenFile extends TokenSource {
  file: string;
  refreshAt: number;
  /** The projected volume's defaultMode (0644), or 0600 when the pod has an fsGroup, as the kubelet writes it. */
  mode: number;
}

/** A relative path inside a volume, or the error the kubelet gives for one that escapes it. */
function inside(root: string, rel: string, volume: string): string {
  const clean = normalize(rel);
  if (!rel || isAbsolute(rel) || clean === '..' || clean.startsWith(`..${sep}`)) throw new VolumeError(volume, `invalid path ${JSON.stringify(rel)}: must be relative and may not contain '..'`);
  return join(root, clean);
}

function writeFile(file: string, data: string | Buffer, mode: number): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, data, { mode });
  renameSync(tmp, file);
}

/** The volume's mode for an item: its own, else the source's defaultMode, else 0644. */
const modeOf = (item: { mode?: number }, defaultMode: number | undefined): number => item.mode ?? defaultMode ?? 0o644;

interface Context {
  pod: Pod;
  sources: PodSources;
  place: PodPlace;
  tokens: TokenFile[];
}

/** What a source read from the API writes into its volume (reading and writing apart, so that a volume's reads go out together). */
type Write = () => void;

async function dataSource(kind: 'configmap' | 'secret', name: string, src: { items?: Item[]; optional?: boolean; defaultMode?: number }, dir: string, volume: string, ctx: Context, defaultMode?: number): Promise<Write> {
  const namespace = ctx.pod.metadata.namespace ?? '';
  let found: DataObject | undefined = kind === 'configmap' ? await ctx.sources.configMap(namespace, name) : await ctx.sources.secret(namespace, name);
  if (!found && kind === 'configmap' && name === 'kube-root-ca.crt' && ctx.sources.rootCa) found = { data: { 'ca.crt': ctx.sources.rootCa }, binary: {} };
  return () => {
    if (!found) {
      if (src.optional) return;
      throw new VolumeError(volume, `${kind} "${name}" not found`);
    }
    const all = { ...found.binary, ...Object.fromEntries(Object.entries(found.data).map(([k, v]) => [k, Buffer.from(v)])) };
    const items: Item[] = src.items ?? Object.keys(all).map((key) => ({ key, path: key }));
    for (const item of items) {
      const value = all[item.key ?? ''];
      if (value === undefined) {
        if (src.optional) continue;
        throw new VolumeError(volume, `${kind} references non-existent ${kind === 'configmap' ? 'config ' : 'secret '}key: ${item.key ?? ''}`);
      }
      writeFile(inside(dir, item.path, volume), value, modeOf(item, src.defaultMode ?? defaultMode));
    }
  };
}

function downward(items: Item[], dir: string, volume: string, ctx: Context, defaultMode?: number): void {
  for (const item of items) {
    let value: string;
    try {
      value = item.fieldRef ? fieldValue(ctx.pod, item.fieldRef.fieldPath, ctx.place, true) : resourceValue(ctx.pod, undefined, { containerName: ctx.pod.spec.containers[0]?.name, ...item.resourceFieldRef! }, ctx.place);
    } catch (err) {
      throw new VolumeError(volume, (err as ContainerConfigError).message);
    }
    writeFile(inside(dir, item.path, volume), value, modeOf(item, defaultMode));
  }
}

/** Writes (or rewrites) one token file; it is refreshed at 80% of its life, at most a day on. */
export async function writeToken(t: TokenFile, pod: Pod, sources: PodSources): Promise<void> {
  (await issueToken(t, pod, sources))();
}

async function issueToken(t: TokenFile, pod: Pod, sources: PodSources): Promise<Write> {
  const seconds = t.expirationSeconds ?? 3600;
  const issued = await sources.token(pod, t.audience, seconds);
  return () => {
    writeFile(t.file, issued.token, t.mode);
    const now = Date.now();
    t.refreshAt = now + Math.min(0.8 * (issued.expiresAt - now), 24 * 3600 * 1000);
  };
}

async function projected(v: Record<string, unknown>, dir: string, volume: string, ctx: Context): Promise<void> {
  const defaultMode = v.defaultMode as number | undefined;
  const read = async (source: Record<string, Record<string, unknown>>): Promise<Write> => {
    if (source.configMap) return dataSource('configmap', String(source.configMap.name ?? ''), source.configMap, dir, volume, ctx, defaultMode);
    if (source.secret) return dataSource('secret', String(source.secret.name ?? ''), source.secret, dir, volume, ctx, defaultMode);
    if (source.downwardAPI) return () => downward((source.downwardAPI!.items ?? []) as Item[], dir, volume, ctx, defaultMode);
    if (source.serviceAccountToken) {
      const t = source.serviceAccountToken as unknown as TokenSource;
      const mode = ctx.pod.spec.securityContext?.fsGroup !== undefined ? 0o600 : (defaultMode ?? 0o644);
      const token: TokenFile = { ...t, file: inside(dir, t.path, volume), refreshAt: 0, mode };
      const write = await issueToken(token, ctx.pod, ctx.sources).catch((err: Error) => {
        throw new VolumeError(volume, `failed to fetch token: ${err.message}`);
      });
      return () => (write(), ctx.tokens.push(token));
    }
    throw new VolumeError(volume, `projected source ${Object.keys(source).join(', ')} is not supported here`);
  };
  const reads = ((v.sources ?? []) as Record<string, Record<string, unknown>>[]).map(read);
  // Each read's failure is reported in the order of the sources, by the loop below.
  for (const r of reads) r.catch(() => undefined);
  for (const r of reads) (await r)();
}

function hostPath(v: { path?: string; type?: string }, volume: string): string {
  const path = v.path ?? '';
  if (!isAbsolute(path)) throw new VolumeError(volume, `hostPath ${JSON.stringify(path)} must be absolute`);
  const type = v.type ?? '';
  if (type === 'DirectoryOrCreate') mkdirSync(path, { recursive: true });
  if (type === 'FileOrCreate' && !existsSync(path)) writeFile(path, '', 0o644);
  const stat = existsSync(path) ? statSync(path) : undefined;
  if ((type === 'Directory' || type === 'DirectoryOrCreate') && !stat?.isDirectory()) throw new VolumeError(volume, `hostPath type check failed: ${path} is not a directory`);
  if ((type === 'File' || type === 'FileOrCreate') && !stat?.isFile()) throw new VolumeError(volume, `hostPath type check failed: ${path} is not a file`);
  return path;
}

/** One volume set up; returns where it is on the node. */
async function setUp(v: Volume, root: string, ctx: Context): Promise<string> {
  const dir = join(root, v.name);
  const source = (k: string) => v[k] as Record<string, unknown> | undefined;
  if (source('hostPath')) return hostPath(source('hostPath')!, v.name);
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  if (source('emptyDir')) return dir;
  if (source('configMap')) (await dataSource('configmap', String(source('configMap')!.name ?? ''), source('configMap')!, dir, v.name, ctx))();
  else if (source('secret')) (await dataSource('secret', String(source('secret')!.secretName ?? ''), source('secret')!, dir, v.name, ctx))();
  else if (source('downwardAPI')) downward((source('downwardAPI')!.items ?? []) as Item[], dir, v.name, ctx, source('downwardAPI')!.defaultMode as number | undefined);
  else if (source('projected')) await projected(source('projected')!, dir, v.name, ctx);
  else {
    const kind = Object.keys(v).find((k) => k !== 'name') ?? 'this';
    throw new VolumeError(v.name, `${kind} volumes cannot be mounted here: containers run as processes on this node (supported: ${Supported.join(', ')})`);
  }
  return dir;
}

export interface PodVolumes {
  /** Volume name → directory (or file) on the node. */
  paths: Map<string, string>;
  tokens: TokenFile[];
}

/** Every volume of the pod, in order; the first that fails stops the setup (retried by the caller). */
export async function setUpVolumes(pod: Pod, volumes: readonly Volume[], root: string, sources: PodSources, place: PodPlace): Promise<PodVolumes> {
  const ctx: Context = { pod, sources, place, tokens: [] };
  const paths = new Map<string, string>();
  for (const v of volumes) paths.set(v.name, await setUp(v, root, ctx));
  return { paths, tokens: ctx.tokens };
}
