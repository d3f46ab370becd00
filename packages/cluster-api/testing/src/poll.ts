/**
 * The one poll used by the cluster-api tests: waits for an observable state, never for a duration.
 * It lives here, in the built test-support project, because that project (rootDir testing/src) cannot
 * import from test/, while test/ and src/**\/testing/ can import from here.
 */

export interface PollOptions {
  /** Bounds the wait so a test fails instead of hanging; generous, since CI machines are loaded. */
  timeoutMs?: number;
  everyMs?: number;
}

const describe = (last: unknown): string => {
  if (last instanceof Error) return last.message;
  try {
    return String(JSON.stringify(last)).slice(0, 2000);
  } catch {
    return String(last);
  }
};

/**
 * Calls `probe` until it returns a truthy value and returns that value. A probe that throws counts
 * as "not yet". After `timeoutMs` it fails with `what` and the last value or error seen.
 */
export async function until<T>(
  what: string,
  probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  { timeoutMs = 20_000, everyMs = 50 }: PollOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      last = await probe();
      if (last) return last as T;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${describe(last)}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
