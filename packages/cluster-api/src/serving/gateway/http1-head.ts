/**
 * Strict HTTP/1.1 heads and framing for the gateway's forwarding path (http1-forward.ts). A request
 * head is taken only in its plain form — a strict subset of what Node.js's parser (llhttp) accepts,
 * so the two can never disagree about where a request ends: `parseRequestHead` answers undefined
 * for anything else (another version, a method Node.js does not know, a target not in origin-form,
 * a header line that is not `token ":" OWS value OWS` with a visible value, obs-fold, a bare CR or
 * LF, too many headers, Transfer-Encoding, Content-Length repeated or not digits, no Host or two,
 * Upgrade, Expect, TE), and that request goes to node:http instead. A response head from a pod is
 * held to the same lines (anything odd: undefined, the gateway answers 502); its body ends by
 * Content-Length, by chunked framing (`ChunkScanner` finds the end of the chunks and trailers that
 * pass through unchanged), or when the pod closes.
 */
import { METHODS } from 'node:http';

/** The end of a head: the empty line. */
export const HeadEnd = Buffer.from('\r\n\r\n');
/** The longest request head the forwarding path takes (Node.js answers longer ones itself, 431 past its 16 KiB). */
export const MaxRequestHead = 8 * 1024;
/** The longest response head from a pod (Node.js's maxHeaderSize). */
export const MaxResponseHead = 16 * 1024;
/** The most header lines a request may have on the forwarding path. */
export const MaxRequestHeaders = 100;

/** Methods Node.js's parser knows, but CONNECT (a tunnel, never forwarded as a request). */
const Methods = new Set(METHODS.filter((m) => m !== 'CONNECT'));
const RequestLine = /^([A-Z-]+) (\/[\x21-\x7e]*) HTTP\/1\.1$/;
const StatusLine = /^HTTP\/1\.([01]) ([1-9]\d\d)(?: ([\t\x20-\x7e\x80-\xff]*))?$/;
/** `token ":" OWS value OWS`, the value visible ASCII or obs-text with spaces or tabs inside. */
const HeaderLine = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+:[\t\x20-\x7e\x80-\xff]*$/;
const Digits = /^\d{1,15}$/;

/** Connection-scoped headers a proxy does not pass on (RFC 9110 §7.6.1). */
export const HopByHop = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/** A header's value without its leading and trailing spaces and tabs. */
const trimOws = (s: string): string => s.replace(/^[\t ]+|[\t ]+$/g, '');

/** The lower-case tokens of a comma-separated list (Connection's). */
export const listTokens = (value: string): string[] => value.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);

export interface RequestHead {
  method: string;
  target: string;
  host: string;
  /** The body's length (0 when there is no Content-Length). */
  contentLength: number;
  /** The client asked for the connection to close after this request. */
  close: boolean;
  /** The header lines a proxy passes on, each `name: value`, as they came (not Host nor X-Forwarded-*). */
  passed: string[];
  forwardedFor?: string;
  forwardedHost?: string;
  forwardedProto?: string;
}

/** Headers whose presence sends a request to node:http: they ask for what this path does not do. */
const HandedOver = new Set(['transfer-encoding', 'upgrade', 'expect', 'te', 'prefer']);

/** Header values joined as Node.js joins a repeated header it does not drop. */
const joined = (prior: string | undefined, value: string): string => (prior === undefined ? value : `${prior}, ${value}`);

/**
 * The request head in `buf` before `end` (where `\r\n\r\n` starts), or undefined when it is not
 * in the plain form this path takes. `Prefer` hands over only when it names `respond-async`, which
 * `prefersAsync` (async.ts) tells: `prefers` is that test.
 */
export function parseRequestHead(buf: Buffer, end: number, prefersAsync: (prefer: string) => boolean): RequestHead | undefined {
  if (end > MaxRequestHead) return undefined;
  const lines = buf.toString('latin1', 0, end).split('\r\n');
  if (lines.length - 1 > MaxRequestHeaders) return undefined;
  const first = RequestLine.exec(lines[0]!);
  if (!first || !Methods.has(first[1]!)) return undefined;
  const head: RequestHead = { method: first[1]!, target: first[2]!, host: '', contentLength: 0, close: false, passed: [] };
  let host: string | undefined;
  let length: string | undefined;
  let connection: string[] | undefined;
  let named: string[] | undefined;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (!HeaderLine.test(line)) return undefined;
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).toLowerCase();
    const value = trimOws(line.slice(colon + 1));
    if (HandedOver.has(name)) {
      if (name !== 'prefer' || prefersAsync(value)) return undefined;
    }
    switch (name) {
      case 'host':
        if (host !== undefined || value === '') return undefined;
        host = value;
        continue;
      case 'content-length':
        if (length !== undefined || !Digits.test(value)) return undefined;
        length = value;
        break;
      case 'connection':
        (connection ??= []).push(...listTokens(value));
        continue;
      case 'x-forwarded-for':
        head.forwardedFor = joined(head.forwardedFor, value);
        continue;
      case 'x-forwarded-host':
        head.forwardedHost = joined(head.forwardedHost, value);
        continue;
      case 'x-forwarded-proto':
        head.forwardedProto = joined(head.forwardedProto, value);
        continue;
    }
    if (HopByHop.has(name)) continue;
    head.passed.push(`${line.slice(0, colon)}: ${value}`);
    (named ??= []).push(name);
  }
  if (host === undefined) return undefined;
  head.host = host;
  head.contentLength = length === undefined ? 0 : Number(length);
  if (connection) {
    head.close = connection.includes('close');
    // The headers Connection names are this hop's too.
    const drop = new Set(connection);
    if (named?.some((n) => drop.has(n))) head.passed = head.passed.filter((_, i) => !drop.has(named![i]!));
  }
  return head;
}

export interface ResponseHead {
  status: number;
  /** The status line and header lines to pass to the client, as one HTTP/1.1 head without its final empty line. */
  head: string;
  /** Content-Length, when given. */
  contentLength?: number;
  chunked: boolean;
  /** The pod will not take another request on this connection (it said `close`, or spoke HTTP/1.0). */
  close: boolean;
}

/** A pod's response head in `buf` before `end`, with Connection, Keep-Alive, Proxy-* and the headers Connection names left out; undefined when it is not well formed. */
export function parseResponseHead(buf: Buffer, end: number): ResponseHead | undefined {
  if (end > MaxResponseHead) return undefined;
  const lines = buf.toString('latin1', 0, end).split('\r\n');
  const first = StatusLine.exec(lines[0]!);
  if (!first) return undefined;
  const http10 = first[1] === '0';
  let length: string | undefined;
  let chunked = false;
  let connection: string[] = [];
  const kept: string[] = [];
  const names: string[] = [];
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (!HeaderLine.test(line)) return undefined;
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).toLowerCase();
    const value = trimOws(line.slice(colon + 1));
    if (name === 'content-length') {
      if (length !== undefined || !Digits.test(value)) return undefined;
      length = value;
    } else if (name === 'transfer-encoding') {
      // Only chunked, once: the framing both hops share.
      if (chunked || http10 || value.toLowerCase() !== 'chunked') return undefined;
      chunked = true;
    } else if (name === 'connection') {
      connection = connection.concat(listTokens(value));
      continue;
    } else if (name === 'keep-alive' || name.startsWith('proxy-')) continue;
    kept.push(line);
    names.push(name);
  }
  if (chunked && length !== undefined) return undefined;
  const drop = new Set(connection);
  let head = `HTTP/1.1 ${first[2]} ${first[3] ?? ''}`;
  for (let i = 0; i < kept.length; i++) if (!drop.has(names[i]!)) head += `\r\n${kept[i]}`;
  return { status: Number(first[2]), head, chunked, close: http10 || drop.has('close'), ...(length !== undefined && { contentLength: Number(length) }) };
}

const enum Chunk { Size, Ext, SizeLf, Data, DataCr, DataLf, TrailerStart, Trailer, TrailerLf, EndLf }

/** The longest chunk-size line or trailer section this scanner takes. */
const MaxChunkLine = 4096;
const MaxTrailers = 16 * 1024;

/** Finds where a chunked body ends, in the bytes as they come, holding them to RFC 9112 §7.1's grammar. */
export class ChunkScanner {
  private state = Chunk.Size;
  private size = 0;
  private digits = 0;
  private left = 0;
  private line = 0;
  private trailers = 0;

  /**
   * Scans `buf` from `from`: the index just past the body's end, -1 when the body goes on past
   * `buf`, -2 when the bytes are not chunked framing.
   */
  scan(buf: Buffer, from = 0): number {
    let i = from;
    while (i < buf.length) {
      if (this.state === Chunk.Data) {
        const n = Math.min(this.left, buf.length - i);
        this.left -= n;
        i += n;
        if (this.left === 0) this.state = Chunk.DataCr;
        continue;
      }
      const c = buf[i++]!;
      switch (this.state) {
        case Chunk.Size: {
          const d = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1;
          if (d >= 0) {
            if (++this.digits > 12) return -2;
            this.size = this.size * 16 + d;
          } else if (this.digits === 0) return -2;
          else if (c === 13) this.state = Chunk.SizeLf;
          else if (c === 59 || c === 32 || c === 9) (this.state = Chunk.Ext), (this.line = 0);
          else return -2;
          break;
        }
        case Chunk.Ext:
          if (c === 13) this.state = Chunk.SizeLf;
          else if ((c < 32 && c !== 9) || c === 127 || ++this.line > MaxChunkLine) return -2;
          break;
        case Chunk.SizeLf:
          if (c !== 10) return -2;
          if (this.size === 0) this.state = Chunk.TrailerStart;
          else (this.state = Chunk.Data), (this.left = this.size);
          this.size = 0;
          this.digits = 0;
          break;
        case Chunk.DataCr:
          if (c !== 13) return -2;
          this.state = Chunk.DataLf;
          break;
        case Chunk.DataLf:
          if (c !== 10) return -2;
          this.state = Chunk.Size;
          break;
        case Chunk.TrailerStart:
          if (c === 13) this.state = Chunk.EndLf;
          else if (c < 33 || c === 127 || c === 58) return -2;
          else this.state = Chunk.Trailer;
          break;
        case Chunk.Trailer:
          if (c === 13) this.state = Chunk.TrailerLf;
          else if ((c < 32 && c !== 9) || c === 127) return -2;
          break;
        case Chunk.TrailerLf:
          if (c !== 10) return -2;
          this.state = Chunk.TrailerStart;
          break;
        case Chunk.EndLf:
          if (c !== 10) return -2;
          this.reset();
          return i;
      }
      if (this.state >= Chunk.TrailerStart && ++this.trailers > MaxTrailers) return -2;
    }
    return -1;
  }

  reset(): void {
    this.state = Chunk.Size;
    this.size = this.digits = this.left = this.line = this.trailers = 0;
  }
}
