/**
 * A watch (`?watch=true`, `application/json;stream=watch`: one JSON event per line) as an async
 * iterator. An ERROR event carries a Status and ends the iteration with a KubeApiError (410 Expired
 * when the resourceVersion is too old: list again). Ending the loop early (break, return, abort)
 * closes the connection.
 */
import type { IncomingMessage } from 'node:http';
import type { KubeClient } from './client.js';
import { KubeApiError, type Status } from './errors.js';
import type { ResourceType } from './resources.js';
import type { Query } from './transport.js';
import type { WatchEvent } from './types.js';

export interface WatchOptions {
  namespace?: string;
  /** Start after this version (from a list or the last event seen); absent = from now, with ADDED for what exists. */
  resourceVersion?: string;
  labelSelector?: string;
  fieldSelector?: string;
  allowWatchBookmarks?: boolean;
  timeoutSeconds?: number;
  signal?: AbortSignal;
}

const MAX_LINE = 16 * 1024 * 1024;

async function* lines(res: IncomingMessage): AsyncGenerator<string> {
  let buffer = '';
  for await (const chunk of res as AsyncIterable<Buffer>) {
    buffer += chunk.toString('utf8');
    if (buffer.length > MAX_LINE) throw new Error('A watch event is larger than 16 MiB');
    let nl: number;
    while ((nl = buffer.indexOf('\n')) !== -1) {
      const line = buffer.slice(0, nl).trim();
      buffer = buffer.slice(nl + 1);
      if (line) yield line;
    }
  }
  if (buffer.trim()) yield buffer.trim();
}

export async function* watchStream<T>(client: KubeClient, type: ResourceType, opts: WatchOptions): AsyncGenerator<WatchEvent<T>> {
  const { namespace, signal, ...rest } = opts;
  const path = client.path(type, { namespace });
  const res = await client.transport.stream({ method: 'GET', path, query: { watch: true, ...rest } as Query, signal, what: `watch ${type.plural}` });
  try {
    for await (const line of lines(res)) {
      const event = JSON.parse(line) as { type: string; object: unknown };
      if (event.type === 'ERROR') {
        const status = event.object as Status;
        throw new KubeApiError(status, status.code ?? 500, `watch ${type.plural}`);
      }
      yield event as WatchEvent<T>;
    }
  } finally {
    res.destroy();
  }
}
