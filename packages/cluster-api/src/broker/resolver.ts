/**
 * Destination resolution (Knative control-plane spec, "Destination resolution"): `uri` alone must be
 * an absolute URL; `ref` resolves to the base address of the object it names (a Service through its
 * Endpoints, an Addressable through `status.address.url`) and an optional `uri` is read relative to
 * it (`/update` against `http://fn.ns.svc/` → `http://fn.ns.svc/update`).
 *
 * The broker needs only `SubscriberResolver`; the API wiring implements it over Services and
 * Endpoints. `functionResolver` adapts a plain function, for tests and embedders.
 */
import type { Resolution } from './status/status.js';
import type { Destination, KReference } from './types.js';

/** A reference with its namespace filled in. */
export type ResolvedRef = KReference & { readonly name: string; readonly namespace: string };

export interface SubscriberResolver {
  /** The absolute base URL of the object `ref` names; throws with the reason it cannot be reached. */
  resolve(ref: ResolvedRef): Promise<string>;
  /**
   * Every base URL `ref` reaches, the first being `resolve`'s: a Service's ready endpoints, over
   * which deliveries are spread. Without it, `resolve`'s one URL.
   */
  resolveAll?(ref: ResolvedRef): Promise<string[]>;
  /** Calls `listener` when resolutions may have changed (Endpoints moved). Returns an unsubscribe. */
  subscribe?(listener: () => void): () => void;
}

/** A resolver from a function; `changed()` tells the broker to resolve again. */
export function functionResolver(fn: (ref: ResolvedRef) => Promise<string> | string): SubscriberResolver & { changed(): void } {
  const listeners = new Set<() => void>();
  return {
    resolve: async (ref) => fn(ref),
    subscribe: (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    changed: () => {
      for (const l of listeners) l();
    },
  };
}

/** The resolver when none is configured: every `ref` fails, saying so. */
export const noResolver: SubscriberResolver = {
  resolve: (ref) => Promise.reject(new Error(`cannot resolve ${ref.kind ?? 'object'} "${ref.name}": no resolver for references is configured`)),
};

function absolute(uri: string): URL | undefined {
  try {
    const url = new URL(uri);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

/** The URL `dest` names for an object in `namespace`, or why not. */
export async function resolveDestination(dest: Destination, namespace: string, resolver: SubscriberResolver): Promise<Resolution> {
  if (!dest.ref) {
    if (!dest.uri) return { error: 'expected exactly one, got neither: ref, uri' };
    const url = absolute(dest.uri);
    return url ? { uri: url.href } : { error: `URI "${dest.uri}" is not an absolute http or https URL` };
  }
  if (!dest.ref.name) return { error: 'ref.name is missing' };
  let bases: string[];
  try {
    const ref = { ...dest.ref, name: dest.ref.name, namespace: dest.ref.namespace || namespace };
    bases = resolver.resolveAll ? await resolver.resolveAll(ref) : [await resolver.resolve(ref)];
  } catch (err) {
    return { error: (err as Error).message };
  }
  const uris: string[] = [];
  for (const base of bases) {
    const joined = join(dest, base);
    if ('error' in joined) return joined;
    uris.push(joined.uri);
  }
  if (uris.length === 0) return { error: `${dest.ref.kind ?? 'object'} "${dest.ref.name}" resolved to no address` };
  return uris.length > 1 ? { uri: uris[0]!, endpoints: uris } : { uri: uris[0]! };
}

/** `dest.uri` (if any) read against one base address of `dest.ref`. */
function join(dest: Destination, base: string): { uri: string } | { error: string } {
  const url = absolute(base);
  if (!url) return { error: `${dest.ref?.kind ?? 'object'} "${dest.ref?.name}" resolved to "${base}", which is not an absolute URL` };
  if (!dest.uri) return { uri: url.href };
  try {
    const joined = new URL(dest.uri, url);
    return absolute(joined.href) ? { uri: joined.href } : { error: `URI "${dest.uri}" does not resolve against ${url.href}` };
  } catch {
    return { error: `URI "${dest.uri}" does not resolve against ${url.href}` };
  }
}
