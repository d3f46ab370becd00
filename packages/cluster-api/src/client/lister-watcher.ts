/**
 * kube-client's Informer over any ApiClient's resource (or the store serving it now): its list, and its watch (callbacks) as the
 * async iteration the Informer reads, ApiErrors turned into the KubeApiErrors it tells a 410 by.
 */
import type { KubeList as ClientList, ListerWatcher, WatchEvent as ClientWatchEvent } from '@func/kube-client';
import { inNamespace } from '../controllers/shared.js';
import type { ResourceClient } from './interface.js';
import { asKubeError } from './lease.js';

export function apiListerWatcher<T>(source: ResourceClient | (() => ResourceClient | undefined), plural?: string): ListerWatcher<T> {
  const current = typeof source === 'function' ? source : () => source;
  const what = plural ?? (source as ResourceClient).definition.plural;
  /** The store serving the resource now; none (a resource no longer served): an error the Informer retries after. */
  const served = (): ResourceClient => {
    const resource = current();
    if (!resource) throw new Error(`${what} is not served`);
    return resource;
  };
  return {
    list: async (opts) =>
      (await served().list(inNamespace(opts.namespace || undefined), { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector, resourceVersion: opts.resourceVersion })
        .catch(asKubeError(`list ${what}`))) as unknown as ClientList<T>,
    watch: (opts) => ({
      [Symbol.asyncIterator]: () => {
        const events: ClientWatchEvent<T>[] = [];
        let failed: unknown;
        let ended = false;
        let wake: (() => void) | undefined;
        const notify = () => (wake?.(), (wake = undefined));
        const end = () => ((ended = true), notify());
        opts.signal?.addEventListener('abort', end, { once: true });
        const watching = Promise.resolve().then(() => served().watch(inNamespace(opts.namespace || undefined), { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector, resourceVersion: opts.resourceVersion, allowWatchBookmarks: opts.allowWatchBookmarks }, {
          onEvent: (e) => (events.push(e as unknown as ClientWatchEvent<T>), notify()),
          onError: (err) => ((failed = err), end()),
          onEnd: end,
        })).catch((err: unknown) => ((failed = err), end(), undefined));
        const close = async () => {
          ended = true;
          opts.signal?.removeEventListener('abort', end);
          (await watching)?.close();
        };
        return {
          async next(): Promise<IteratorResult<ClientWatchEvent<T>>> {
            for (;;) {
              if (events.length > 0) return { value: events.shift()!, done: false };
              if (ended) {
                await close();
                if (failed !== undefined) asKubeError(`watch ${what}`)(failed);
                return { value: undefined, done: true };
              }
              await new Promise<void>((resolve) => (wake = resolve));
            }
          },
          async return(): Promise<IteratorResult<ClientWatchEvent<T>>> {
            await close();
            return { value: undefined, done: true };
          },
        };
      },
    }),
  };
}
