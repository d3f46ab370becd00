// The contended variant: another process busy on the server's core for the whole scenario (warm-up
// and rounds), as on a shared node where a neighbour's work lands on the same CPU. The scheduler
// then splits the core; what is measured is how each server's tail latency and CPU per request
// hold up when it runs in slices.
import { SERVER_CPU, spawnPinned, stop } from './procs.mjs';

const BUSY_LOOP = 'for (;;) {}';

/** Starts the busy process; resolves to a function that stops it. */
export async function occupyServerCore() {
  const hog = spawnPinned(SERVER_CPU, ['-e', BUSY_LOOP]);
  // Give the scheduler a moment to account for it before the warm-up starts.
  await new Promise((resolve) => setTimeout(resolve, 200));
  return () => stop(hog, 500);
}

/** Each selected scenario, and with `contended` its twin that runs beside the busy process. */
export function withVariants(scenarios, contended) {
  if (!contended) return scenarios;
  return scenarios.flatMap((s) => [s, { ...s, id: `${s.id}-busy`, base: s.id, label: `${s.label}, core shared`, contended: true }]);
}
