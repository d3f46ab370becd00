/**
 * portforward.k8s.io over a SPDY connection, as the kubelet serves it
 * (pkg/kubelet/cri/streaming/portforward/httpstream.go). For every local connection kubectl opens
 * two streams carrying `streamtype` (error, then data), `port` and `requestid` headers. Once both of
 * a request's streams are there the pod port is dialled and the data stream joined to it; the
 * error stream carries a text message when forwarding fails and is closed when the forward ends,
 * which is how kubectl learns a connection is done.
 */
import type { Duplex } from 'node:stream';
import { SpdySession } from './spdy/session.js';
import type { SpdyStream } from './spdy/stream.js';
import { dialFailure, splice } from './splice.js';

/** The only version there is; kubectl asks for it by name. */
export const PortForwardProtocolV1 = 'portforward.k8s.io';

export interface PortForwardTarget {
  /** Connects to `port` in the pod. */
  dial(port: number): Promise<Duplex>;
  /** Error messages name the pod and its uid, as the kubelet's do. */
  pod: string;
  uid: string;
}

export interface PortForwardOptions {
  /** How long the second stream of a pair may keep the first waiting (the kubelet's 30 s). */
  streamCreationTimeoutMs?: number;
  /** A connection with no frames for this long is closed (the kubelet's `--streaming-connection-idle-timeout`, 4 h). */
  idleTimeoutMs?: number;
}

interface Pair {
  id: string;
  data?: SpdyStream;
  error?: SpdyStream;
  timer: NodeJS.Timeout;
}

/** Serves port-forward streams on `transport` until either side closes it; answers the session. */
export function servePortForward(transport: Duplex, target: PortForwardTarget, options: PortForwardOptions = {}): SpdySession {
  const pairs = new Map<string, Pair>();
  const timeout = options.streamCreationTimeoutMs ?? 30_000;
  const session = new SpdySession(transport, {
    idleTimeoutMs: options.idleTimeoutMs ?? 4 * 60 * 60 * 1000,
    onStream(stream) {
      if (!validStream(stream)) return stream.reject();
      stream.accept();
      const id = requestId(stream);
      let pair = pairs.get(id);
      if (!pair) {
        pair = { id, timer: setTimeout(() => expire(pairs, id), timeout).unref() };
        pairs.set(id, pair);
      }
      if (!addToPair(pair, stream)) return;
      clearTimeout(pair.timer);
      pairs.delete(id);
      void forward(pair as Required<Pair>, target);
    },
  });
  void session.done.then(() => {
    for (const pair of pairs.values()) clearTimeout(pair.timer);
    pairs.clear();
  });
  return session;
}

/** The kubelet's httpStreamReceived: a port 1-65535 and a known stream type, or the stream is refused. */
function validStream(stream: SpdyStream): boolean {
  const port = stream.header('port') ?? '';
  const type = stream.header('streamtype');
  return /^\d{1,5}$/.test(port) && Number(port) >= 1 && Number(port) <= 65535 && (type === 'data' || type === 'error');
}

/**
 * Clients too old to send `requestid` get the kubelet's guess: an error stream's own id, a data
 * stream's id minus 2 (their streams came in consecutive pairs).
 */
function requestId(stream: SpdyStream): string {
  const id = stream.header('requestid');
  if (id) return id;
  return String(stream.header('streamtype') === 'error' ? stream.id : stream.id - 2);
}

/** True once the pair is complete. A second stream of one type is refused with a message on the error stream. */
function addToPair(pair: Pair, stream: SpdyStream): boolean {
  const type = stream.header('streamtype') as 'data' | 'error';
  if (pair[type]) {
    pair.error?.write(`error processing stream for request ${pair.id}: ${type} stream already assigned`);
    stream.destroy();
    return false;
  }
  pair[type] = stream;
  // kubectl half-closes the error stream at once; reading it lets that end arrive.
  if (type === 'error') stream.resume();
  return pair.data !== undefined && pair.error !== undefined;
}

function expire(pairs: Map<string, Pair>, id: string): void {
  const pair = pairs.get(id);
  if (!pair) return;
  pairs.delete(id);
  pair.error?.end(`(request=${id}) timed out waiting for streams`);
  pair.data?.destroy();
}

async function forward(pair: Required<Pair>, target: PortForwardTarget): Promise<void> {
  const port = Number(pair.data.header('port'));
  let backend: Duplex;
  try {
    backend = await target.dial(port);
  } catch (err) {
    pair.error.end(`error forwarding port ${port} to pod ${target.pod}, uid ${target.uid}: ${dialFailure(err)}`);
    // What the client still sends is dropped, so it cannot fill the stream and stall the connection.
    pair.data.resume();
    pair.data.end();
    return;
  }
  if (pair.data.destroyed) return void backend.destroy();
  await splice(pair.data, backend);
  pair.error.end();
}
