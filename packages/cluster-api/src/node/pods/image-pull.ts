/**
 * The image step of a container start, as the kubelet's image manager (EnsureImageExists) does it:
 * the pull policy against the node's image service (`Always` pulls a reference naming a registry
 * on every start, `IfNotPresent` when the store lacks it, `Never` never: ErrImageNeverPull), the
 * events (`Pulling`, `Pulled` with the pull's duration and size, or "already present on machine"),
 * and on failure `Failed` events and the image pull back-off (ErrImagePull, then ImagePullBackOff).
 * The runtime that runs the image is chosen here (runtime/handlers.ts): an image no runtime of the
 * node runs is an ErrImagePull saying so; the chosen one prepares (unpacks) it within the pull.
 */
import { ImageError, type PullPolicy } from '../runtime/image-store.js';
import { chooseHandler, type RuntimeHandler } from '../runtime/handlers.js';
import type { Image } from '../runtime/cri.js';
import { fieldPath, type PodContext } from './pod-context.js';
import type { Container } from '../types.js';

export interface ImageReady {
  handler: RuntimeHandler;
  /** The image as the store has it (undefined for a runtime that runs images the store does not hold). */
  image?: Image;
}

export interface ImageWaiting {
  reason: string;
  message: string;
  retryAt: number;
}

/** Go's time.Duration printed after Truncate(time.Millisecond): `512ms`, `1.234s`, `1m2.5s`. */
export function goMillis(ms: number): string {
  const whole = Math.max(0, Math.trunc(ms));
  if (whole < 1000) return `${whole}ms`;
  const minutes = Math.floor(whole / 60_000);
  const hours = Math.floor(minutes / 60);
  const seconds = ((whole % 60_000) / 1000).toFixed(3).replace(/\.?0+$/, '');
  return `${hours ? `${hours}h` : ''}${minutes ? `${minutes % 60}m` : ''}${seconds}s`;
}

const pullPolicy = (c: Container): PullPolicy => c.imagePullPolicy ?? 'IfNotPresent';

export async function ensureImage(ctx: PodContext, c: Container, init: boolean): Promise<ImageReady | ImageWaiting> {
  const ref = c.image ?? '';
  const at = fieldPath(c, init);
  const key = `${ctx.pod().metadata.uid}/${c.name}/pull`;
  if (ctx.pullBackoff.inBackoffSinceUpdate(key)) {
    ctx.event('Normal', 'BackOff', `Back-off pulling image "${ref}"`, at);
    return { reason: 'ImagePullBackOff', message: `Back-off pulling image "${ref}": ${ctx.pullBackoff.note(key)}`, retryAt: ctx.pullBackoff.readyAfterUpdate(key) };
  }
  try {
    const spec = { image: ref };
    const policy = pullPolicy(c);
    const pullable = ctx.images.pullable(spec);
    let image = policy === 'Always' && pullable ? undefined : await ctx.images.imageStatus(spec);
    if (!image && policy === 'Never') throw new ImageError('ErrImageNeverPull', `Container image "${ref}" is not present with pull policy of Never`);
    let pulled: { started: number; size: number } | undefined;
    if (!image && pullable) {
      ctx.event('Normal', 'Pulling', `Pulling image "${ref}"`, at);
      const started = Date.now();
      const { size } = await ctx.images.pullImage(spec);
      image = await ctx.images.imageStatus(spec);
      pulled = { started, size };
    }
    const chosen = chooseHandler(ctx.handlers, ref, image);
    if ('refused' in chosen) throw new ImageError('ErrImagePull', chosen.refused);
    // The runtime unpacks it as part of the pull, as containerd does: the Pulled event's time includes it.
    if (image) await chosen.runtime.prepareImage?.(spec);
    if (pulled) {
      const took = goMillis(Date.now() - pulled.started);
      ctx.event('Normal', 'Pulled', `Successfully pulled image "${ref}" in ${took} (${took} including waiting). Image size: ${pulled.size} bytes.`, at);
    } else if (image && chosen.runtime.reporting === 'kubelet') ctx.event('Normal', 'Pulled', `Container image "${ref}" already present on machine`, at);
    ctx.pullBackoff.forget(key);
    return { handler: chosen, image };
  } catch (err) {
    const e = err instanceof ImageError ? err : new ImageError('ErrImagePull', (err as Error).message);
    ctx.event('Warning', 'Failed', e.reason === 'ErrImageNeverPull' ? e.message : `Failed to pull image "${ref}": ${e.message}`, at);
    ctx.event('Warning', 'Failed', `Error: ${e.reason}`, at);
    ctx.pullBackoff.next(key, Date.now(), `${e.reason}: ${e.message}`);
    // Synced again soon, as the kubelet's pod worker requeues a failed sync: it then shows ImagePullBackOff.
    return { reason: e.reason, message: e.message, retryAt: Date.now() + 1000 };
  }
}
