/**
 * Watch stream framing: one WatchEvent JSON per line (or one length-prefixed protobuf WatchEvent), written as it happens. The headers go out as
 * soon as the store watch is established, because client-go and client-node wait for them before
 * reporting the watch as started (kubectl delete --wait and informers depend on that ordering).
 * Closing the connection, the timeout or a terminal error all free the store watch exactly once.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KubeObject, WatchEvent } from '../api/meta.js';
import type { DeliveredEvent, RequestContext, ResourceStore, WatchQuery } from '../registry/rest.js';
import { encodeWatchFrame, ProtobufWatchMediaType } from '../protobuf/codec.js';
import { statusOf } from './status.js';
import type { IncludeObjectPolicy } from './table.js';
import { toTable } from './table.js';
import { goJson } from './json.js';
import { partialObject } from './partial.js';

/** A watcher whose socket stops draining is cut off past this many buffered bytes (bounded memory). */
export const MaxWatchBufferBytes = 16 * 1024 * 1024;

export const WatchContentType = 'application/json;stream=watch';

export interface WatchRequest {
  store: ResourceStore;
  ctx: RequestContext;
  query: WatchQuery;
  /** Seconds until the server ends the stream cleanly; undefined → Kubernetes' random 30–60 min. */
  timeoutSeconds?: number;
  /** Table events for `kubectl get -w`; undefined for plain objects. */
  table?: { include: IncludeObjectPolicy; version: string };
  /** Frames in Kubernetes' protobuf stream format instead of JSON lines. */
  protobuf?: boolean;
  /** meta.k8s.io version of PartialObjectMetadata events (metadata-only watchers); undefined for whole objects. */
  partial?: string;
  /** Holds the response while the stream is open (server shutdown ends what it finds there). */
  openWatches?: Set<ServerResponse>;
  /** Logs a server error the stream ends with; answers the request id its ERROR event names. */
  report?: (err: unknown) => string | undefined;
}

const defaultTimeoutSeconds = (): number => 1800 + Math.floor(Math.random() * 1800);

export async function serveWatch(req: IncomingMessage, res: ServerResponse, w: WatchRequest): Promise<void> {
  let started = false;
  let finished = false;
  const pending: (string | Uint8Array)[] = [];
  let handle: { close(): void } | undefined;
  let timer: NodeJS.Timeout | undefined;

  const start = (): void => {
    started = true;
    w.openWatches?.add(res);
    res.writeHead(200, { 'Content-Type': w.protobuf ? ProtobufWatchMediaType : WatchContentType, 'Cache-Control': 'no-cache, private' });
    res.flushHeaders();
    for (const line of pending.splice(0)) res.write(line);
  };
  const finish = (): void => {
    if (finished) return;
    finished = true;
    w.openWatches?.delete(res);
    clearTimeout(timer);
    handle?.close();
    if (res.destroyed || res.writableEnded) return;
    if (!started) start();
    res.end();
  };
  /** `shared`: the event whose frames hold `line`'s chunk, when `line` is a shared frame. */
  const write = (line: string | Uint8Array, shared?: DeliveredEvent): void => {
    if (finished || res.writableEnded) return;
    if (!started) return void pending.push(line);
    const socket = res.socket;
    // Events delivered in one turn leave in one write: many watchers × many events is many syscalls otherwise.
    if (socket && !socket.writableCorked) (socket.cork(), process.nextTick(uncork, socket));
    // Once the headers are out, a chunk already framed goes to the socket as one buffer: through
    // res.write every event would be three (size line, data, CRLF) per watcher.
    if (socket && res.chunkedEncoding && typeof line !== 'string' && line.length > 0) socket.write(shared ? sharedChunk(shared, line) : chunkOf(line));
    else res.write(line);
    if (res.writableLength > MaxWatchBufferBytes) (finish(), res.destroy());
  };
  // Never pretty: kube-apiserver's stream serializer is the compact one whatever `pretty` says.
  const frame = (event: WatchEvent<unknown>): string | Buffer => (w.protobuf ? encodeWatchFrame(event) : goJson(event));

  res.once('close', finish);
  handle = await w.store.watch(w.ctx, w.query, {
    onEvent: (event) => {
      const shared = sharedFrame(w, event);
      write(shared ?? frame(render(w, event)), shared && event);
    },
    onError: (err) => (write(frame({ type: 'ERROR', object: statusOf(err, w.report?.(err)) })), finish()),
    onEnd: finish,
  });
  // The client may have gone, or the store ended the watch, while it was being set up.
  if (finished) return void handle.close();
  start();
  timer = setTimeout(finish, (w.timeoutSeconds ?? defaultTimeoutSeconds()) * 1000);
  timer.unref();
  req.socket.setTimeout(0);
}

const uncork = (socket: NodeJS.WritableStream & { uncork(): void }): void => socket.uncork();

const CRLF = Buffer.from('\r\n');

/** HTTP/1.1 chunked framing of one watch frame. */
const chunkOf = (frame: Uint8Array): Buffer => Buffer.concat([Buffer.from(`${frame.length.toString(16)}\r\n`), frame, CRLF]);

function render(w: WatchRequest, event: WatchEvent<KubeObject>): WatchEvent<unknown> {
  if (event.type === 'ERROR') return { type: event.type, object: event.object };
  if (w.partial) return { type: event.type, object: partialObject(event.object, w.partial) };
  if (!w.table || event.type === 'BOOKMARK') return { type: event.type, object: event.object };
  return { type: event.type, object: toTable(w.store.definition, event.object, w.table.include, w.table.version) };
}

/**
 * A change's event is the same object for all its watchers: its plain JSON line (or protobuf frame),
 * and that frame's chunked framing, are made once and kept in the event's `frames`, so fan-out to many
 * watchers costs one serialisation per event, not one per watcher.
 */
function sharedFrame(w: WatchRequest, event: DeliveredEvent): Uint8Array | undefined {
  if (w.table || w.partial || !event.frames) return undefined;
  const format = w.protobuf ? 'protobuf' : 'json';
  let frame = event.frames.get(format);
  if (frame === undefined) {
    const plain = { type: event.type, object: event.object };
    event.frames.set(format, (frame = w.protobuf ? encodeWatchFrame(plain) : Buffer.from(goJson(plain))));
  }
  return frame;
}

/** The chunk of a shared frame, kept beside it. */
function sharedChunk(event: DeliveredEvent, frame: Uint8Array): Uint8Array {
  if (!event.frames) return chunkOf(frame);
  const key = frame === event.frames.get('protobuf') ? 'protobuf+chunked' : 'json+chunked';
  let chunk = event.frames.get(key);
  if (chunk === undefined) event.frames.set(key, (chunk = chunkOf(frame)));
  return chunk;
}
