/**
 * kube-client's Informer over any ApiClient's resource: its list, and its watch (callbacks) as the
 * async iteration the Informer reads, ApiErrors turned into the KubeApiErrors it tells a 410 by.
 */
import type { KubeList as ClientList, ListerWatcher, WatchEvent as ClientWatchEvent } from '@func/kube-client';
import { inNamespace } from '../controllers/shared.js';
import type { ResourceClient } from './interface.js';
import { asKubeError } from './lease.js';

export function apiListerWatcher<T>(resource: ResourceClient): ListerWatcher<T> {
  const what = resource.definition.plural;
  return {
    list: async (opts) =>
      (await resource.list(inNamespace(opts.namespace || undefined), { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector, resourceVersion: opts.resourceVersion })
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
        const watching = resource.watch(inNamespace(opts.namespace || undefined), { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector, resourceVersion: opts.resourceVersion, allowWatchBookmarks: opts.allowWatchBookmarks }, {
          onEvent: (e) => (events.push(e as unknown as ClientWatchEvent<T>), notify()),
          onError: (err) => ((failed = err), end()),
          onEnd: end,
        }).catch((err: unknown) => ((failed = err), end(), undefined));
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
