/**
 * How a container instance ends, as the kubelet's killContainer and convertToAPIContainerStatuses:
 * the preStop hook (httpGet, tcpSocket or sleep) within the grace period, then SIGTERM, then after
 * what is left of the grace period (at least 2 s) SIGKILL; and the terminated state it leaves (exit
 * code, `Completed` / `Error` / `StartError`, and with `FallbackToLogsOnError` the log's tail as the
 * message).
 */
import { closeSync, openSync, readSync, fstatSync } from 'node:fs';
import { fieldPath, type PodContext } from './pod-context.js';
import { check, execIn, type ContainerExec } from '../probes/probe-check.js';
import type { ContainerStatus as RuntimeStatus, RuntimeService } from '../runtime/cri.js';
import { rfc3339, type Container, type ContainerState } from '../types.js';

export type Terminated = NonNullable<ContainerState['terminated']>;

/** The kubelet never gives a container less than this to stop (minimumGracePeriodInSeconds). */
const MinimumGraceSeconds = 2;
/** What FallbackToLogsOnError keeps of the log (kubelet: 80 lines, 2 KiB). */
const TailLines = 80;
const TailBytes = 2048;

/** The text of the last lines of a CRI log file, at most 2 KiB. */
function logTail(path: string): string {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const size = fstatSync(fd).size;
    const want = Math.min(size, 256 * 1024);
    const buf = Buffer.alloc(want);
    readSync(fd, buf, 0, want, size - want);
    const lines = buf.toString().split('\n').filter(Boolean).slice(-TailLines);
    const text = lines.map((l) => {
      const parts = l.split(' ');
      return parts.slice(3).join(' ') + (parts[2] === 'P' ? '' : '\n');
    }).join('');
    const bytes = Buffer.from(text);
    return bytes.length > TailBytes ? bytes.subarray(bytes.length - TailBytes).toString() : text;
  } catch {
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The terminated state of an instance the runtime reports exited (a kwok instance has no containerID). */
export function terminated(exit: RuntimeStatus, inst: { containerID: string; startedAt: number; kwok: boolean }, spec: Container): Terminated {
  const exitCode = exit.exitCode ?? 0;
  const reason = exit.reason ?? (exitCode === 0 ? 'Completed' : 'Error');
  const message = exit.message ?? (exitCode !== 0 && spec.terminationMessagePolicy === 'FallbackToLogsOnError' ? logTail(exit.logPath) : '');
  return {
    exitCode,
    reason,
    ...(message ? { message } : {}),
    startedAt: rfc3339(inst.startedAt),
    finishedAt: rfc3339(exit.finishedAt ?? Date.now()),
    ...(inst.kwok ? {} : { containerID: inst.containerID }),
  };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/** Runs the preStop hook within `graceSeconds`; returns the seconds it took. */
async function preStop(spec: Container, ctx: PodContext, graceSeconds: number, init: boolean, exec?: ContainerExec): Promise<number> {
  const hook = spec.lifecycle?.preStop;
  if (!hook || graceSeconds <= 0) return 0;
  const started = Date.now();
  const budget = graceSeconds * 1000;
  if (hook.sleep) await sleep(Math.min(hook.sleep.seconds * 1000, budget));
  else {
    const outcome = await Promise.race([check(hook, spec, ctx.target, budget, exec), sleep(budget).then(() => ({ ok: false, output: 'timed out' }))]);
    if (!outcome.ok) {
      const what = hook.httpGet ? 'Http' : hook.exec ? 'Exec' : 'TCP';
      ctx.event('Warning', 'FailedPreStopHook', `${what} lifecycle hook for Container "${spec.name}" in Pod "${ctx.pod().metadata.name ?? ''}" failed - error: ${outcome.output}`, fieldPath(spec, init));
    }
  }
  return Math.ceil((Date.now() - started) / 1000);
}

/**
 * Stops a running instance: `message` is the Killing event's (default "Stopping container <name>");
 * the preStop hook, then the runtime's stopContainer with what is left of the grace period;
 * resolves once the container has exited.
 */
export async function stopContainer(runtime: RuntimeService, id: string, spec: Container, ctx: PodContext, graceSeconds: number, init: boolean, message?: string): Promise<void> {
  ctx.event('Normal', 'Killing', message ?? `Stopping container ${spec.name}`, fieldPath(spec, init));
  const spent = await preStop(spec, ctx, graceSeconds, init, execIn(runtime, id));
  await runtime.stopContainer(id, Math.max(MinimumGraceSeconds, graceSeconds - spent));
}
