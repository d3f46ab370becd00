/**
 * The gateway's HTTP/1.1 forwarding path: a connection's requests read straight off its socket
 * (http1-head.ts), each routed as node:http's path routes it (the gateway's `route`, the activator's
 * slot, its hold and 503s, the revision's timeout and 504, 502 and the retries of a bodiless request,
 * cold starts counted), and written to the pod on a pooled keep-alive connection as bytes: the
 * request line, the passed headers, `Host` and `X-Forwarded-*`, then exactly Content-Length body
 * bytes as they arrive; the pod's answer goes back as it comes, its head checked and this hop's
 * headers left out, its body framed by Content-Length, by chunks (passed through unchanged, their
 * end found by `ChunkScanner`) or by the pod closing (the client's connection closes after it).
 * Requests of a connection go one at a time (pipelined ones wait, buffered). Whatever this path does
 * not take — a head that is not in the plain form, a host no Route answers on, a Route with an h2c
 * revision — is handed to node:http with the connection (its bytes put back), which is possible
 * whenever no request of it is in flight. Both directions keep to the slower reader (a socket paused
 * while the other's writes wait). A connection idles at most `KeepAliveMs` between requests, and a
 * request head that trickles in is cut at the gateway's headers deadline.
 */
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Activator, Acquired, PodSlot } from './activator.js';
import type { ColdStarts } from './cold-starts.js';
import { prefersAsync } from './async.js';
import { forwardedHeaders } from './forwarded.js';
import { ChunkScanner, HeadEnd, MaxRequestHead, MaxResponseHead, parseRequestHead, parseResponseHead, type RequestHead } from './http1-head.js';
import { plainAnswer } from './upgrade.js';

/** How long a client connection may idle between requests (Node.js's keepAliveTimeout). */
export const KeepAliveMs = 5_000;
/** How long a pod connection idles in the pool before it is closed (under Node.js's 5 s, so the gateway closes first). */
const PodIdleMs = 2_000;
/** Bytes buffered from a client beyond the request in flight before its socket is paused. */
const MaxBuffered = 64 * 1024;
/** A request with no body whose pod could not be reached is tried this often in all, 100 ms more apart each time (as node:http's path). */
const RetryAttempts = 3;
const RetryDelayMs = 100;
const Unreachable = 'the revision could not be reached\n';

/** Where a request goes: a revision, with its timeouts. */
export interface Http1Target {
  key: string;
  ns: string;
  revision: string;
  timeoutMs: number;
  holdMs: number;
}

/** What the forwarding path needs of the gateway. */
export interface Http1Gateway {
  /** The revision a request goes to; `{ refused }`: a 503 with that text; undefined: node:http's path takes it. */
  route(head: RequestHead): Http1Target | { refused: string } | undefined;
  readonly activator: Activator;
  readonly coldStarts: ColdStarts;
  readonly pods: PodConnections;
  readonly headersTimeoutMs: number;
  /** Takes the connection to node:http's server (no request of it in flight; what it sent and was not read is put back). */
  handOver(socket: Socket): void;
}

/** The user of a pod connection: what it reads, and its close. */
interface PodUser {
  podData(d: Buffer): void;
  podDrain(): void;
  podClosed(c: PodConnection): void;
}

class PodConnection {
  owner: PodUser | undefined;

  constructor(private readonly pool: PodConnections, readonly id: string, readonly socket: Socket) {
    socket.setNoDelay(true);
    // A pooled connection idle this long is closed; one in use is timed by its request.
    socket.setTimeout(PodIdleMs);
    socket.on('timeout', () => this.owner || socket.destroy());
    // A pod that writes while no request is out is out of step: its connection goes.
    socket.on('data', (d: Buffer) => (this.owner ? this.owner.podData(d) : socket.destroy()));
    socket.on('drain', () => this.owner?.podDrain());
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      this.pool.gone(this);
      const owner = this.owner;
      this.owner = undefined;
      owner?.podClosed(this);
    });
  }
}

/** Keep-alive connections to pods, by `ip:port`. */
export class PodConnections {
  private readonly idle = new Map<string, PodConnection[]>();
  private readonly open = new Set<PodConnection>();

  /** An idle connection to the pod, or a new one; `owner` gets what it reads. */
  take(ip: string, port: number, owner: PodUser): PodConnection {
    const id = `${ip}:${port}`;
    let c = this.idle.get(id)?.pop();
    if (!c) {
      c = new PodConnection(this, id, connect({ host: ip, port }));
      this.open.add(c);
    }
    c.owner = owner;
    return c;
  }

  /** Back to the pool, the exchange on it complete. */
  give(c: PodConnection): void {
    c.owner = undefined;
    c.socket.resume();
    let list = this.idle.get(c.id);
    if (!list) this.idle.set(c.id, (list = []));
    list.push(c);
  }

  gone(c: PodConnection): void {
    this.open.delete(c);
    const list = this.idle.get(c.id);
    const at = list ? list.indexOf(c) : -1;
    if (at >= 0) list!.splice(at, 1);
    if (list?.length === 0) this.idle.delete(c.id);
  }

  close(): void {
    for (const c of this.open) c.socket.destroy();
    this.open.clear();
    this.idle.clear();
  }
}

const enum Res { Head, Length, Chunked, UntilClose, Done }

/** One client connection on the forwarding path. */
export class Http1Connection implements PodUser {
  /** Bytes read and not yet taken: the next request(s). */
  private pending: Buffer | undefined;
  private headTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly remote: string;

  // The request in flight.
  private head: RequestHead | undefined;
  private target: Http1Target | undefined;
  private pod: PodSlot | undefined;
  private counted = false;
  private cold = false;
  private arrived = 0;
  private attempt = 1;
  private timer: NodeJS.Timeout | undefined;
  private onGone: (() => void) | undefined;
  /** Body bytes still to come from the client. */
  private bodyLeft = 0;
  /** Body bytes that came before the pod connection. */
  private early: Buffer[] = [];
  private earlyBytes = 0;
  private upstream: PodConnection | undefined;
  private upBlocked = false;

  // Its response.
  private res = Res.Done;
  private resBuf: Buffer | undefined;
  private resLeft = 0;
  private readonly chunks = new ChunkScanner();
  /** Something of the pod's answer (a 1xx included) reached the client, or the pod sent something. */
  private headSent = false;
  private heard = false;
  private reusable = true;
  private closeAfter = false;
  private resPaused = false;

  constructor(private readonly socket: Socket, private readonly gw: Http1Gateway) {
    this.remote = socket.remoteAddress ?? '';
    socket.setNoDelay(true);
    socket.setTimeout(KeepAliveMs);
    socket.on('data', this.onData);
    socket.on('timeout', this.onIdle);
    socket.on('drain', this.onDrain);
    socket.on('close', this.onClose);
  }

  private get inFlight(): boolean {
    return this.head !== undefined;
  }

  private readonly onData = (chunk: Buffer): void => {
    if (this.bodyLeft > 0) {
      const n = Math.min(this.bodyLeft, chunk.length);
      this.body(n === chunk.length ? chunk : chunk.subarray(0, n));
      if (n === chunk.length) return;
      chunk = chunk.subarray(n);
    }
    this.pending = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    if (!this.inFlight) this.next();
    else if (this.pending.length > MaxBuffered) this.socket.pause();
  };

  private readonly onIdle = (): void => {
    if (!this.inFlight && !this.pending) this.socket.destroy();
  };

  private readonly onDrain = (): void => {
    if (this.resPaused) {
      this.resPaused = false;
      this.upstream?.socket.resume();
    }
  };

  private readonly onClose = (): void => {
    this.closed = true;
    clearTimeout(this.headTimer);
    clearTimeout(this.timer);
    this.onGone?.();
    if (!this.inFlight) return;
    // The client went away: so does the request to the pod.
    this.dropUpstream();
    this.release();
    this.count(false);
  };

  private readonly onHeadLate = (): void => {
    this.socket.destroy();
  };

  /** The next request from what is buffered, when there is no request in flight. */
  private next(): void {
    const buf = this.pending;
    if (!buf || this.closed) return;
    const end = buf.indexOf(HeadEnd);
    if (end < 0) {
      if (buf.length > MaxRequestHead + HeadEnd.length) return this.handOver();
      if (!this.headTimer) (this.headTimer = setTimeout(this.onHeadLate, this.gw.headersTimeoutMs)).unref();
      return;
    }
    const head = parseRequestHead(buf, end, prefersAsync);
    const to = head && this.gw.route(head);
    if (!to) return this.handOver();
    clearTimeout(this.headTimer);
    this.headTimer = undefined;
    const rest = buf.subarray(end + HeadEnd.length);
    this.pending = undefined;
    this.head = head;
    this.bodyLeft = head.contentLength;
    this.res = Res.Head;
    this.closeAfter = head.close;
    if ('refused' in to) this.answer(503, to.refused);
    else {
      this.target = to;
      this.arrived = performance.now();
      this.attempt = 1;
      this.acquire();
    }
    if (rest.length > 0) this.onData(rest);
  }

  /** node:http's server takes the connection from here. */
  private handOver(): void {
    clearTimeout(this.headTimer);
    const s = this.socket;
    s.setTimeout(0);
    s.off('data', this.onData).off('timeout', this.onIdle).off('drain', this.onDrain).off('close', this.onClose);
    s.pause();
    if (this.pending) s.unshift(this.pending);
    this.pending = undefined;
    this.gw.handOver(s);
    s.resume();
  }

  private readonly cancelled = (stop: () => void): (() => void) => {
    this.onGone = stop;
    return this.unhook;
  };

  private readonly unhook = (): void => {
    this.onGone = undefined;
  };

  private acquire(): void {
    void this.gw.activator.acquire(this.target!.key, this.target!.holdMs, this.cancelled).then(this.acquired);
  }

  private readonly acquired = (got: Acquired): void => {
    if (got === 'gone') return;
    if (typeof got !== 'string' && (this.closed || !this.inFlight)) return void this.gw.activator.release(this.target!.key, got.pod);
    // A retry that finds no pod: the revision could not be reached.
    if (typeof got === 'string' && this.attempt > 1) return this.answer(502, Unreachable);
    if (got === 'full') return this.answer(503, `too many requests waiting for revision ${JSON.stringify(this.target!.revision)}\n`);
    if (got === 'timeout') return this.answer(503, `no ready endpoint for revision ${JSON.stringify(this.target!.revision)}\n`);
    this.pod = got.pod;
    if (!this.counted) {
      this.counted = true;
      this.cold = got.cold;
    }
    clearTimeout(this.timer);
    (this.timer = setTimeout(this.timedOut, this.target!.timeoutMs)).unref();
    this.send();
  };

  /** The request to the pod: its head and the body come so far, in one write. */
  private send(): void {
    const head = this.head!;
    const up = (this.upstream = this.gw.pods.take(this.pod!.ip, this.pod!.port, this));
    const f = forwardedHeaders(this.remote, { for: head.forwardedFor, host: head.forwardedHost, proto: head.forwardedProto }, head.host);
    let text = `${head.method} ${head.target} HTTP/1.1\r\n`;
    for (const line of head.passed) text += `${line}\r\n`;
    text += `host: ${head.host}\r\nx-forwarded-for: ${f['x-forwarded-for']}\r\nx-forwarded-host: ${f['x-forwarded-host']}\r\nx-forwarded-proto: ${f['x-forwarded-proto']}\r\n\r\n`;
    this.heard = false;
    this.res = Res.Head;
    let ok: boolean;
    if (this.earlyBytes === 0) ok = up.socket.write(text, 'latin1');
    else {
      ok = up.socket.write(Buffer.concat([Buffer.from(text, 'latin1'), ...this.early]));
      this.early = [];
      this.earlyBytes = 0;
      this.socket.resume();
    }
    if (!ok) this.blockClient();
  }

  /** Request body bytes from the client. */
  private body(piece: Buffer): void {
    this.bodyLeft -= piece.length;
    if (this.upstream) {
      if (!this.upstream.socket.write(piece)) this.blockClient();
    } else if (this.res !== Res.Done) {
      this.early.push(piece);
      this.earlyBytes += piece.length;
      if (this.earlyBytes > MaxBuffered) this.socket.pause();
    }
    // Else the request is answered already (a 503, a 504): the rest of its body is read and dropped.
    if (this.bodyLeft === 0 && this.res === Res.Done) this.finish();
  }

  private blockClient(): void {
    this.upBlocked = true;
    this.socket.pause();
  }

  podDrain(): void {
    if (!this.upBlocked) return;
    this.upBlocked = false;
    this.socket.resume();
  }

  /** Bytes of the pod's answer. */
  podData(d: Buffer): void {
    this.heard = true;
    let head = '';
    let at = 0;
    while (this.res === Res.Head) {
      const buf: Buffer = this.resBuf ? Buffer.concat([this.resBuf, d]) : d;
      const end = buf.indexOf(HeadEnd);
      if (end < 0) {
        if (buf.length > MaxResponseHead + HeadEnd.length) return this.badResponse();
        this.resBuf = buf;
        return;
      }
      this.resBuf = undefined;
      const r = parseResponseHead(buf, end);
      // A 101 to a request that asked for no upgrade is not an answer.
      if (!r || r.status === 101) return this.badResponse();
      d = buf;
      at = end + HeadEnd.length;
      if (r.status < 200) {
        // An interim answer (103 Early Hints…) passes; the final one follows.
        this.writeClient(Buffer.from(`${r.head}\r\n\r\n`, 'latin1'));
        this.headSent = true;
        d = buf.subarray(at);
        at = 0;
        if (d.length === 0) return;
        continue;
      }
      if (r.close) this.reusable = false;
      const bodiless = this.head!.method === 'HEAD' || r.status === 204 || r.status === 304;
      if (bodiless) this.res = Res.Done;
      else if (r.chunked) this.res = Res.Chunked;
      else if (r.contentLength !== undefined) (this.res = r.contentLength === 0 ? Res.Done : Res.Length), (this.resLeft = r.contentLength);
      else (this.res = Res.UntilClose), (this.reusable = false), (this.closeAfter = true);
      head = `${r.head}${this.closeAfter ? '\r\nconnection: close' : ''}\r\n\r\n`;
    }
    let out = at === 0 ? d : d.subarray(at);
    switch (this.res) {
      case Res.Length: {
        if (out.length > this.resLeft) (out = out.subarray(0, this.resLeft)), (this.reusable = false);
        this.resLeft -= out.length;
        if (this.resLeft === 0) this.res = Res.Done;
        break;
      }
      case Res.Chunked: {
        const end = this.chunks.scan(out);
        if (end === -2) return head ? this.badResponse() : this.broken();
        if (end >= 0) {
          if (end < out.length) (out = out.subarray(0, end)), (this.reusable = false);
          this.res = Res.Done;
        }
        break;
      }
      case Res.Done:
        // A pod that sends more than its answer is out of step.
        if (out.length > 0) this.reusable = false;
        out = out.subarray(0, 0);
        break;
    }
    if (head) {
      this.headSent = true;
      this.writeClient(out.length > 0 ? Buffer.concat([Buffer.from(head, 'latin1'), out]) : Buffer.from(head, 'latin1'));
    } else if (out.length > 0) this.writeClient(out);
    if (this.res === Res.Done) this.responseDone();
  }

  private writeClient(b: Buffer): void {
    if (!this.socket.write(b) && this.upstream) {
      this.resPaused = true;
      this.upstream.socket.pause();
    }
  }

  /** The pod connection closed. */
  podClosed(c: PodConnection): void {
    if (c !== this.upstream) return;
    this.upstream = undefined;
    if (this.res === Res.UntilClose) return this.responseDone();
    if (this.res === Res.Done) return;
    clearTimeout(this.timer);
    this.release();
    if (this.headSent) return this.broken();
    // Not reached (or gone before answering): a request with no body goes again, to another pod.
    if (!this.heard && this.head!.contentLength === 0 && this.attempt < RetryAttempts) {
      setTimeout(this.retry, RetryDelayMs * this.attempt).unref();
      this.attempt++;
      return;
    }
    this.answer(502, Unreachable);
  }

  private readonly retry = (): void => {
    if (!this.closed && this.inFlight) this.acquire();
  };

  private readonly timedOut = (): void => {
    this.dropUpstream();
    this.answer(504, 'request timeout\n');
  };

  /** A pod's answer that cannot be passed on. */
  private badResponse(): void {
    this.dropUpstream();
    this.answer(502, Unreachable);
  }

  /** The answer cannot go on: the client's connection goes. */
  private broken(): void {
    this.dropUpstream();
    this.socket.destroy();
  }

  /** An answer of the gateway's own, unless the pod's already began (then the connection goes). */
  private answer(code: number, text: string): void {
    if (this.headSent) return this.broken();
    this.headSent = true;
    this.socket.write(plainAnswer(code, text, this.closeAfter));
    this.res = Res.Done;
    this.responseDone();
  }

  /** The answer is complete (or given up): the slot is free, the pod connection back in the pool. */
  private responseDone(): void {
    this.res = Res.Done;
    clearTimeout(this.timer);
    this.release();
    const up = this.upstream;
    if (up) {
      this.upstream = undefined;
      // A pod connection with body bytes still to send is not reused: the pod answered before it read them.
      if (this.reusable && this.bodyLeft === 0 && !this.upBlocked) this.gw.pods.give(up);
      else (up.owner = undefined), up.socket.destroy();
    }
    if (this.upBlocked) this.podDrain();
    if (this.bodyLeft === 0) return this.finish();
    // The rest of the body is read and dropped (a client paused while it was buffered for the pod reads again).
    this.early = [];
    this.earlyBytes = 0;
    this.socket.resume();
  }

  /** Request and answer are both over: the next request, or the end of the connection. */
  private finish(): void {
    this.count(true);
    this.head = undefined;
    this.target = undefined;
    this.counted = false;
    this.cold = false;
    this.headSent = false;
    this.reusable = true;
    this.resPaused = false;
    this.early = [];
    this.earlyBytes = 0;
    this.chunks.reset();
    this.resBuf = undefined;
    if (this.closeAfter) return void this.socket.end();
    this.socket.resume();
    if (this.pending) this.next();
  }

  private count(complete: boolean): void {
    const t = this.target;
    if (!this.counted || !t) return;
    this.counted = false;
    this.gw.coldStarts.answered(t.ns, t.revision);
    if (complete && this.cold) this.gw.coldStarts.observe(t.ns, t.revision, (performance.now() - this.arrived) / 1000);
  }

  private release(): void {
    if (!this.pod) return;
    this.gw.activator.release(this.target!.key, this.pod);
    this.pod = undefined;
  }

  private dropUpstream(): void {
    const up = this.upstream;
    if (!up) return;
    this.upstream = undefined;
    up.owner = undefined;
    up.socket.destroy();
  }
}
