/**
 * Which runtime runs a container: the one place the agent chooses. Handlers are asked in order
 * with the image as the node's store has it (undefined when it is not there and cannot be
 * pulled); the first that runs it wins. The node's list: those given in `NodeAgentOptions.runtimes`,
 * then the node's own runtime — `oci` for any image in the store, or `process` for function images
 * (label `dev.func.image=function`) —, then `simulated` for any other image when the node
 * simulates (kwok's way), else none: the kubelet's ErrImagePull.
 */
import { FUNCTION_IMAGE_KIND, FUNCTION_IMAGE_LABEL } from '@func/oci';
import type { Image, RuntimeService } from './cri.js';

export interface RuntimeHandler {
  runtime: RuntimeService;
  /** Whether this runtime runs the image (`image` is undefined when the node's store does not have it). */
  runs(ref: string, image: Image | undefined): boolean;
}

export const isFunctionImage = (image: Image | undefined): boolean => image?.labels[FUNCTION_IMAGE_LABEL] === FUNCTION_IMAGE_KIND;

/** The node's own runtime: `oci` runs any image the store has, `process` only function images. */
export const ownHandler = (runtime: RuntimeService): RuntimeHandler =>
  runtime.name === 'oci' ? { runtime, runs: (_ref, image) => image !== undefined } : { runtime, runs: (_ref, image) => isFunctionImage(image) };

/** The node's handlers: the given ones first, then the node's own runtime, then (when simulating) every other image. */
export function nodeHandlers(given: readonly RuntimeHandler[], own: RuntimeService, simulated: RuntimeService | undefined): RuntimeHandler[] {
  return [
    ...given,
    ownHandler(own),
    ...(simulated ? [{ runtime: simulated, runs: () => true }] : []),
  ];
}

/** The handler that runs the image, or the message of the ErrImagePull when none does. */
export function chooseHandler(handlers: readonly RuntimeHandler[], ref: string, image: Image | undefined): RuntimeHandler | { refused: string } {
  const found = handlers.find((h) => h.runs(ref, image));
  if (found) return found;
  const why = image ? `it has no label ${FUNCTION_IMAGE_LABEL}=${FUNCTION_IMAGE_KIND}` : 'not in this node\'s image store';
  return { refused: `image "${ref}" cannot run on this node: only function images run here (${why})` };
}
