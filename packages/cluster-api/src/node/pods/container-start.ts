/**
 * Starting one instance of a container, step by step as the kubelet's startContainer: the image
 * (Pulling / Pulled events, ErrImagePull then ImagePullBackOff), the configuration (env, mounts,
 * command: CreateContainerConfigError / CreateContainerError with a Failed event), then the process
 * (Created, Started). An image that is not a function image runs simulated or is refused, per node.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { goDuration } from '../backoff.js';
import { ContainerConfigError } from './downward.js';
import { containerEnv } from './env.js';
import { ImageError, type ImageResolution, type PullPolicy } from '../runtime/process/images.js';
import { CreateContainerError, launchSpec } from '../runtime/process/launch.js';
import { ContainerLog } from '../logs/logs.js';
import { mountRoot } from '../sandbox/mounts.js';
import { fieldPath, type PodContext } from './pod-context.js';
import { unsupportedHandler } from '../probes/probe-check.js';
import { ContainerProcess } from '../runtime/process/process.js';
import type { Container } from '../types.js';
import { VolumeError } from '../sandbox/volumes.js';

export type Started =
  | { kind: 'process'; process: ContainerProcess; log: ContainerLog; containerID: string; imageID: string }
  | { kind: 'simulated' }
  | { kind: 'waiting'; reason: string; message: string; retryAt: number };

/** Why a container's probes or hooks can never run here (checked before anything starts). */
function unsupported(c: Container): string | undefined {
  return unsupportedHandler(c.startupProbe, 'startupProbe') ?? unsupportedHandler(c.livenessProbe, 'livenessProbe') ??
    unsupportedHandler(c.readinessProbe, 'readinessProbe') ?? unsupportedHandler(c.lifecycle?.preStop, 'lifecycle.preStop') ??
    unsupportedHandler(c.lifecycle?.postStart, 'lifecycle.postStart');
}

/** The PORT a function image listens on when the pod sets none. */
const imagePort = (config: { Env?: string[] }): string => (config.Env ?? []).find((e) => e.startsWith('PORT='))?.slice(5) ?? '8080';

const pullPolicy = (c: Container): PullPolicy => c.imagePullPolicy ?? 'IfNotPresent';

/** The image, with the kubelet's pull events and back-off; a string is the waiting state to show. */
async function image(ctx: PodContext, c: Container, init: boolean): Promise<ImageResolution | { reason: string; message: string; retryAt: number }> {
  const ref = c.image ?? '';
  const at = fieldPath(c, init);
  const key = `${ctx.pod().metadata.uid}/${c.name}/pull`;
  if (ctx.pullBackoff.inBackoffSinceUpdate(key)) {
    ctx.event('Normal', 'BackOff', `Back-off pulling image "${ref}"`, at);
    return { reason: 'ImagePullBackOff', message: `Back-off pulling image "${ref}": ${ctx.pullBackoff.note(key)}`, retryAt: ctx.pullBackoff.readyAfterUpdate(key) };
  }
  try {
    const found = await ctx.images.resolve(ref, pullPolicy(c), () => ctx.event('Normal', 'Pulling', `Pulling image "${ref}"`, at));
    if (found.pulled) ctx.event('Normal', 'Pulled', `Successfully pulled image "${ref}" in ${(found.pulled.ms / 1000).toFixed(3)}s (${(found.pulled.ms / 1000).toFixed(3)}s including waiting). Image size: ${found.pulled.size} bytes.`, at);
    if (found.kind === 'function' || ctx.simulate) {
      if (!found.pulled && found.kind === 'function') ctx.event('Normal', 'Pulled', `Container image "${ref}" already present on machine`, at);
      ctx.pullBackoff.forget(key);
      return found;
    }
    throw new ImageError('ErrImagePull', `image "${ref}" cannot run on this node: only function images run here (${found.reason})`);
  } catch (err) {
    const e = err instanceof ImageError ? err : new ImageError('ErrImagePull', (err as Error).message);
    ctx.event('Warning', 'Failed', e.reason === 'ErrImageNeverPull' ? e.message : `Failed to pull image "${ref}": ${e.message}`, at);
    ctx.event('Warning', 'Failed', `Error: ${e.reason}`, at);
    ctx.pullBackoff.next(key, Date.now(), `${e.reason}: ${e.message}`);
    // Synced again soon, as the kubelet's pod worker requeues a failed sync: it then shows ImagePullBackOff.
    return { reason: e.reason, message: e.message, retryAt: Date.now() + 1000 };
  }
}

const configFailure = (ctx: PodContext, c: Container, init: boolean, reason: string, message: string): Started => {
  ctx.event('Warning', 'Failed', `Error: ${message}`, fieldPath(c, init));
  return { kind: 'waiting', reason, message, retryAt: Date.now() + ctx.retryMs };
};

export async function startContainer(ctx: PodContext, c: Container, init: boolean, restartCount: number): Promise<Started> {
  const refused = unsupported(c);
  if (refused) return configFailure(ctx, c, init, 'CreateContainerConfigError', refused);
  const found = await image(ctx, c, init);
  if (!('kind' in found)) return { kind: 'waiting', ...found };
  if (found.kind === 'other') return { kind: 'simulated' };
  const pod = ctx.pod();
  let spec;
  try {
    const { env, skipped } = await containerEnv(pod, c, ctx.baseEnv, ctx.sources, ctx.place);
    for (const s of skipped) ctx.event('Warning', 'InvalidEnvironmentVariableNames', `Keys [${s.keys.join(', ')}] from the EnvFrom ${s.source} were skipped since they are considered invalid environment variable names.`);
    const mounts = mountRoot(join(ctx.podDir, 'root', c.name), ctx.mounts(c), ctx.volumes);
    const fixed: Record<string, string> = { HOSTNAME: pod.metadata.name ?? '', FUNC_HOST: ctx.place.podIP };
    // Shared network mode: the function listens on a node port of its own standing for its PORT.
    if (ctx.network.mode === 'shared') fixed.PORT = String(await ctx.network.hostPort(pod.metadata.uid ?? '', Number(env.PORT ?? imagePort(found.config))));
    spec = launchSpec({ container: c, image: found.config, imageRoot: found.root, mounts, env, fixed });
  } catch (err) {
    if (err instanceof ContainerConfigError) return configFailure(ctx, c, init, 'CreateContainerConfigError', err.message);
    if (err instanceof CreateContainerError || err instanceof VolumeError) return configFailure(ctx, c, init, 'CreateContainerError', err.message);
    return configFailure(ctx, c, init, 'CreateContainerConfigError', (err as Error).message);
  }
  const id = randomBytes(32).toString('hex');
  const log = new ContainerLog(join(ctx.logDir, c.name, `${restartCount}.log`), ctx.logLimits);
  ctx.event('Normal', 'Created', `Created container ${c.name}`, fieldPath(c, init));
  const process = new ContainerProcess(spec, log);
  ctx.event('Normal', 'Started', `Started container ${c.name}`, fieldPath(c, init));
  return { kind: 'process', process, log, containerID: `func://${id}`, imageID: found.imageID };
}

/** The CrashLoopBackOff waiting message (the kubelet's error text). */
export const crashLoopMessage = (delayMs: number, c: Container, podDesc: string): string =>
  `back-off ${goDuration(delayMs)} restarting failed container=${c.name} pod=${podDesc}`;
