/**
 * `func-runtime logs`: every pod of the function, interleaved. Without `--follow` each pod's log is
 * read with the kubelet's timestamps and the lines are merged in time order; with it each pod's log
 * is streamed as it is written, and pods that start later (a rollout, a restart) join the stream.
 * Lines are the runtime's JSON (pino) and are printed either as JSON with the pod's name added, or
 * pretty: `pod  time LEVEL message {fields}`.
 */
import type { KubeClient } from '@func/kube-client';
import { clusterFailure } from './cluster.js';
import type { Pod } from './kube-types.js';
import { CONTAINER_NAME, NAME_LABEL } from './manifests.js';
import { resolveTarget, type TargetOptions } from './target.js';

export interface LogsOptions extends TargetOptions {
  follow: boolean;
  json: boolean;
  tail?: number;
  since?: number;
  out: NodeJS.WritableStream;
  signal?: AbortSignal;
}

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const STAMP = /^(\d{4}-\d\d-\d\dT[\d:.]+Z) (.*)$/s;

/** A kubelet line (`<RFC 3339 time> <text>`) split; a line without the time keeps its text. */
export function splitStamp(line: string): { time?: string; text: string } {
  const m = STAMP.exec(line);
  return m ? { time: m[1], text: m[2]! } : { text: line };
}

/** The kubelet writes RFC 3339 with trailing zeros of the fraction cut: pad it so that text order is time order. */
export function timeKey(time: string | undefined): string {
  if (!time) return '';
  const m = /^(.*?)(?:\.(\d+))?Z$/.exec(time);
  return m ? `${m[1]}.${(m[2] ?? '').padEnd(9, '0')}Z` : time;
}

function parsed(text: string): Record<string, unknown> | undefined {
  if (!text.startsWith('{')) return undefined;
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export function formatLine(pod: string, line: { time?: string; text: string }, json: boolean): string {
  const obj = parsed(line.text);
  if (json) return JSON.stringify(obj ? { pod, ...obj } : { pod, ...(line.time ? { time: line.time } : {}), msg: line.text });
  if (!obj) return `${pod}  ${line.time ? `${timeKey(line.time).slice(11, 23)} ` : ''}${line.text}`;
  const { level, time, msg, pid: _pid, hostname: _host, ...rest } = obj;
  const when = typeof time === 'number' ? new Date(time).toISOString().slice(11, 23) : timeKey(line.time).slice(11, 23);
  const extra = Object.keys(rest).length ? ` ${JSON.stringify(rest)}` : '';
  return `${pod}  ${when} ${(LEVELS[level as number] ?? String(level ?? '')).padEnd(5)} ${typeof msg === 'string' ? msg : ''}${extra}`;
}

async function listPods(kube: KubeClient, name: string, namespace: string): Promise<Pod[]> {
  const { Resources } = await import('@func/kube-client');
  return (await kube.list<Pod>(Resources.pods, { namespace, labelSelector: `${NAME_LABEL}=${name}` })).items;
}

async function readAll(kube: KubeClient, pod: string, opts: LogsOptions, namespace: string): Promise<{ pod: string; time?: string; text: string }[]> {
  const res = await kube.logs(pod, { namespace, container: CONTAINER_NAME, timestamps: true, tailLines: opts.tail, sinceSeconds: opts.since, signal: opts.signal }).catch(() => undefined);
  if (!res) return [];
  let body = '';
  for await (const chunk of res) body += String(chunk);
  return body.split('\n').filter((l) => l !== '').map((l) => ({ pod, ...splitStamp(l) }));
}

/** Streams one pod's log until it ends or the signal aborts; each complete line is written at once. */
async function follow(kube: KubeClient, pod: string, opts: LogsOptions, namespace: string): Promise<void> {
  const res = await kube.logs(pod, { namespace, container: CONTAINER_NAME, follow: true, timestamps: true, tailLines: opts.tail, sinceSeconds: opts.since, signal: opts.signal });
  let pending = '';
  try {
    for await (const chunk of res) {
      pending += String(chunk);
      const lines = pending.split('\n');
      pending = lines.pop()!;
      for (const l of lines) if (l) opts.out.write(`${formatLine(pod, splitStamp(l), opts.json)}\n`);
    }
  } catch {
    // the stream ended with the pod or the signal
  }
}

function followPods(kube: KubeClient, name: string, namespace: string, opts: LogsOptions): Promise<void> {
  const attached = new Set<string>();
  const attach = (pod: Pod) => {
    const running = pod.status?.containerStatuses?.some((c) => c.name === CONTAINER_NAME && (c.state?.running || c.state?.terminated));
    if (!running || attached.has(pod.metadata.name)) return;
    attached.add(pod.metadata.name);
    void follow(kube, pod.metadata.name, opts, namespace).catch(() => attached.delete(pod.metadata.name));
  };
  return (async () => {
    const { Informer, Resources } = await import('@func/kube-client');
    const informer = new Informer<Pod>(kube, Resources.pods, { namespace, labelSelector: `${NAME_LABEL}=${name}` }).on('add', attach).on('update', attach).start();
    await new Promise<void>((resolve) => opts.signal?.addEventListener('abort', () => resolve(), { once: true }));
    await informer.stop();
  })();
}

/** The function's name and how many pods it had (0: nothing was printed). */
export async function functionLogs(opts: LogsOptions): Promise<{ name: string; pods: number }> {
  const target = await resolveTarget(opts);
  const { kube } = target.cluster;
  const { name, namespace } = target;
  try {
    if (opts.follow) {
      await followPods(kube, name, namespace, opts);
      return { name, pods: -1 };
    }
    const pods = await listPods(kube, name, namespace);
    const lines = (await Promise.all(pods.map((p) => readAll(kube, p.metadata.name, opts, namespace)))).flat();
    lines.sort((a, b) => timeKey(a.time).localeCompare(timeKey(b.time)));
    for (const l of lines) opts.out.write(`${formatLine(l.pod, l, opts.json)}\n`);
    return { name, pods: pods.length };
  } catch (err) {
    throw clusterFailure(err);
  } finally {
    kube.close();
  }
}
