/**
 * Watch stream framing: one WatchEvent JSON per line (or one length-prefixed protobuf WatchEvent), written as it happens. The headers go out as
 * soon as the store watch is established, because client-go and client-node wait for them before
 * reporting the watch as started (kubectl delete --wait and informers depend on that ordering).
 * Closing the connection, the timeout or a terminal error all free the store watch exactly once.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KubeObject, WatchEvent } from '../api/meta.js';
import type { RequestContext, ResourceStore, WatchQuery } from '../registry/definition.js';
import { encodeWatchFrame, ProtobufWatchMediaType } from '../protobuf/codec.js';
import { statusOf } from './status.js';
import type { IncludeObjectPolicy } from './table.js';
import { toTable } from './table.js';

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
  pretty: boolean;
  /** Holds the response while the stream is open (server shutdown ends what it finds there). */
  openWatches?: Set<ServerResponse>;
}

const defaultTimeoutSeconds = (): number => 1800 + Math.floor(Math.random() * 1800);

export async function serveWatch(req: IncomingMessage, res: ServerResponse, w: WatchRequest): Promise<void> {
  let started = false;
  let finished = false;
  const pending: (string | Buffer)[] = [];
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
  const write = (line: string | Buffer): void => {
    if (finished || res.writableEnded) return;
    if (!started) return void pending.push(line);
    const socket = res.socket;
    // Events delivered in one turn leave in one write: many watchers × many events is many syscalls otherwise.
    if (socket && !socket.writableCorked) (socket.cork(), process.nextTick(uncork, socket));
    // Once the headers are out, a chunk already framed goes to the socket as one buffer: through
    // res.write every event would be three (size line, data, CRLF) per watcher.
    if (socket && res.chunkedEncoding && typeof line !== 'string' && line.length > 0) socket.write(chunkOf(line));
    else res.write(line);
    if (res.writableLength > MaxWatchBufferBytes) (finish(), res.destroy());
  };
  const frame = (event: WatchEvent<unknown>): string | Buffer =>
    w.protobuf ? encodeWatchFrame(event) : `${JSON.stringify(event, null, w.pretty ? 2 : undefined)}\n`;

  res.once('close', finish);
  handle = await w.store.watch(w.ctx, w.query, {
    onEvent: (event) => write(sharedFrame(w, event) ?? frame(render(w, event))),
    onError: (err) => (write(frame({ type: 'ERROR', object: statusOf(err) })), finish()),
  });
  // The client may have gone, or the store ended the watch, while it was being set up.
  if (finished) return void handle.close();
  start();
  timer = setTimeout(finish, (w.timeoutSeconds ?? defaultTimeoutSeconds()) * 1000);
  timer.unref();
  req.socket.setTimeout(0);
}

const uncork = (socket: NodeJS.WritableStream & { uncork(): void }): void => socket.uncork();

/** HTTP/1.1 chunked framing of one watch frame, made once per shared frame and reused for every watcher. */
const chunks = new WeakMap<Buffer, Buffer>();
const CRLF = Buffer.from('\r\n');
function chunkOf(frame: Buffer): Buffer {
  let chunk = chunks.get(frame);
  if (chunk === undefined) chunks.set(frame, (chunk = Buffer.concat([Buffer.from(`${frame.length.toString(16)}\r\n`), frame, CRLF])));
  return chunk;
}

function render(w: WatchRequest, event: WatchEvent<KubeObject>): WatchEvent<unknown> {
  if (!w.table || event.type === 'BOOKMARK' || event.type === 'ERROR') return event;
  return { type: event.type, object: toTable(w.store.definition, event.object, w.table.include, w.table.version) };
}

/**
 * The registry hands every watcher of a change the same object: its plain JSON line (or protobuf
 * frame) is built once and shared, so fan-out to many watchers costs one serialisation per event, not one per watcher.
 */
const sharedFrames = new WeakMap<object, Map<string, Buffer>>();
function sharedFrame(w: WatchRequest, event: WatchEvent<KubeObject>): Buffer | undefined {
  if (w.table || w.pretty || event.type === 'BOOKMARK') return undefined;
  let frames = sharedFrames.get(event.object);
  if (!frames) sharedFrames.set(event.object, (frames = new Map()));
  const key = w.protobuf ? `protobuf:${event.type}` : event.type;
  let line = frames.get(key);
  if (line === undefined) frames.set(key, (line = w.protobuf ? encodeWatchFrame(event) : Buffer.from(`${JSON.stringify(event)}\n`)));
  return line;
}
