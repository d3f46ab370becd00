/**
 * Starting one instance of a container, step by step as the kubelet's startContainer: the image
 * and the runtime that runs it (image-pull.ts), the pod's sandbox on that runtime, the
 * configuration (env, mounts: CreateContainerConfigError / CreateContainerError with a Failed
 * event), then the runtime's createContainer and startContainer (Created, Started). Pods of a
 * runtime reported kwok's way get none of these events.
 */
import { join } from 'node:path';
import { goDuration } from '../backoff.js';
import { ContainerConfigError } from './downward.js';
import { containerEnv } from './env.js';
import { ensureImage } from './image-pull.js';
import { CreateContainerError, type RuntimeService } from '../runtime/cri.js';
import { containerMounts } from '../sandbox/mounts.js';
import { fieldPath, type PodContext } from './pod-context.js';
import { unsupportedHandler } from '../probes/probe-check.js';
import type { Container } from '../types.js';
import { VolumeError } from '../sandbox/volumes.js';

export type Started =
  | { kind: 'started'; runtime: RuntimeService; id: string; imageID: string; startedAt: number; logPath: string }
  | { kind: 'waiting'; reason: string; message: string; retryAt: number };

/** Why a container's probes or hooks can never run on its runtime (checked before anything starts). */
function unsupported(c: Container, runtime: RuntimeService): string | undefined {
  const exec = !!runtime.exec;
  return unsupportedHandler(c.startupProbe, 'startupProbe', exec) ?? unsupportedHandler(c.livenessProbe, 'livenessProbe', exec) ??
    unsupportedHandler(c.readinessProbe, 'readinessProbe', exec) ?? unsupportedHandler(c.lifecycle?.preStop, 'lifecycle.preStop', exec) ??
    unsupportedHandler(c.lifecycle?.postStart, 'lifecycle.postStart', exec);
}

const configFailure = (ctx: PodContext, c: Container, init: boolean, reason: string, message: string): Started => {
  ctx.event('Warning', 'Failed', `Error: ${message}`, fieldPath(c, init));
  return { kind: 'waiting', reason, message, retryAt: Date.now() + ctx.retryMs };
};

export async function startContainer(ctx: PodContext, c: Container, init: boolean, attempt: number): Promise<Started> {
  const found = await ensureImage(ctx, c, init);
  if (!('handler' in found)) return { kind: 'waiting', ...found };
  const { runtime } = found.handler;
  const refused = unsupported(c, runtime);
  if (refused) return configFailure(ctx, c, init, 'CreateContainerConfigError', refused);
  const kwok = runtime.reporting === 'kwok';
  const pod = ctx.pod();
  const logPath = join(ctx.logDir, c.name, `${attempt}.log`);
  let id: string;
  try {
    const sandboxId = await ctx.sandbox(runtime);
    const { env, skipped } = kwok ? { env: {}, skipped: [] } : await containerEnv(pod, c, ctx.baseEnv, ctx.sources, ctx.place);
    for (const s of skipped) ctx.event('Warning', 'InvalidEnvironmentVariableNames', `Keys [${s.keys.join(', ')}] from the EnvFrom ${s.source} were skipped since they are considered invalid environment variable names.`);
    const mounts = kwok ? [] : containerMounts(ctx.mounts(c), ctx.volumes);
    id = await runtime.createContainer(sandboxId, {
      metadata: { name: c.name, attempt }, image: { image: c.image ?? '', imageRef: found.image?.id }, command: c.command, args: c.args, workingDir: c.workingDir,
      envs: env, mounts, logPath, container: c,
    });
  } catch (err) {
    if (err instanceof ContainerConfigError) return configFailure(ctx, c, init, 'CreateContainerConfigError', err.message);
    if (err instanceof CreateContainerError || err instanceof VolumeError) return configFailure(ctx, c, init, 'CreateContainerError', err.message);
    return configFailure(ctx, c, init, 'CreateContainerConfigError', (err as Error).message);
  }
  if (!kwok) ctx.event('Normal', 'Created', `Created container ${c.name}`, fieldPath(c, init));
  try {
    await runtime.startContainer(id);
  } catch (err) {
    await runtime.removeContainer(id).catch(() => undefined);
    return configFailure(ctx, c, init, 'RunContainerError', (err as Error).message);
  }
  if (!kwok) ctx.event('Normal', 'Started', `Started container ${c.name}`, fieldPath(c, init));
  const status = runtime.containerStatus(id);
  return { kind: 'started', runtime, id, imageID: found.image?.id ?? '', startedAt: status?.startedAt ?? Date.now(), logPath };
}

/** The CrashLoopBackOff waiting message (the kubelet's error text). */
export const crashLoopMessage = (delayMs: number, c: Container, podDesc: string): string =>
  `back-off ${goDuration(delayMs)} restarting failed container=${c.name} pod=${podDesc}`;
