/**
 * HTTP(S) to the API server with keep-alive: TLS from the connection (CA, client certificate,
 * server name, or no verification when the kubeconfig says so), credentials as headers. Answers of
 * 400 and above become a KubeApiError from the body's Status; no answer at all a KubeConnectionError.
 */
import { readFileSync, statSync } from 'node:fs';
import { Agent as HttpAgent, type IncomingMessage, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { connectionError, KubeApiError, statusFromBody } from './errors.js';
import type { Connection } from './kubeconfig.js';

export type Query = Record<string, string | number | boolean | undefined>;

export interface RequestOptions {
  method: string;
  path: string;
  query?: Query;
  /** An object is sent as JSON (or as contentType says); a string or Buffer as is. */
  body?: unknown;
  contentType?: string;
  accept?: string;
  signal?: AbortSignal;
  /** What the request does, for error messages (e.g. `get pods/web`). */
  what?: string;
}

export interface Response {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}

const MAX_BODY = 64 * 1024 * 1024;

export class Transport {
  private readonly base: URL;
  private readonly agent: HttpAgent | HttpsAgent;
  private token?: { value: string; mtimeMs: number; checked: number };

  constructor(readonly connection: Connection) {
    this.base = new URL(connection.server);
    this.agent = this.base.protocol === 'https:'
      ? new HttpsAgent({
        keepAlive: true,
        ca: connection.ca,
        cert: connection.credentials.clientCert,
        key: connection.credentials.clientKey,
        rejectUnauthorized: !connection.insecureSkipTlsVerify,
        servername: connection.tlsServerName,
      })
      : new HttpAgent({ keepAlive: true });
  }

  url(path: string, query?: Query): URL {
    const url = new URL(this.base.pathname.replace(/\/$/, '') + path, this.base);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    return url;
  }

  /** The Authorization header: a token (re-read from tokenFile when it changes), or Basic. */
  private authorization(): string | undefined {
    const c = this.connection.credentials;
    if (c.tokenFile) {
      const now = Date.now();
      if (!this.token || now - this.token.checked > 5_000) {
        const mtimeMs = statSync(c.tokenFile).mtimeMs;
        if (!this.token || this.token.mtimeMs !== mtimeMs) this.token = { value: readFileSync(c.tokenFile, 'utf8').trim(), mtimeMs, checked: now };
        else this.token.checked = now;
      }
      return `Bearer ${this.token.value}`;
    }
    if (c.token) return `Bearer ${c.token}`;
    if (c.username !== undefined && c.password !== undefined) return `Basic ${Buffer.from(`${c.username}:${c.password}`).toString('base64')}`;
    return undefined;
  }

  /** The response as a stream once its status is below 400; an error Status otherwise. */
  async stream(opts: RequestOptions): Promise<IncomingMessage> {
    const res = await this.send(opts);
    if ((res.statusCode ?? 0) < 400) return res;
    const body = await readBody(res);
    throw new KubeApiError(statusFromBody(body, res.statusCode ?? 0), res.statusCode ?? 0, opts.what ?? `${opts.method} ${opts.path}`);
  }

  async request(opts: RequestOptions): Promise<Response> {
    const res = await this.stream(opts);
    return { status: res.statusCode ?? 0, headers: res.headers, body: await readBody(res) };
  }

  close(): void {
    this.agent.destroy();
  }

  private send(opts: RequestOptions): Promise<IncomingMessage> {
    const url = this.url(opts.path, opts.query);
    const body = encode(opts.body);
    const headers: Record<string, string | string[]> = { accept: opts.accept ?? 'application/json', 'user-agent': 'func-kube-client/0.1' };
    const auth = this.authorization();
    if (auth) headers.authorization = auth;
    const as = this.connection.credentials.impersonate;
    if (as) {
      headers['impersonate-user'] = as.user;
      if (as.groups?.length) headers['impersonate-group'] = as.groups;
    }
    if (body !== undefined) {
      headers['content-type'] = opts.contentType ?? 'application/json';
      headers['content-length'] = String(body.length);
    }
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = send(url, { method: opts.method, headers, agent: this.agent, signal: opts.signal }, resolve);
      req.on('error', (err) => reject((err as Error).name === 'AbortError' ? err : connectionError(err, this.connection.server)));
      req.end(body);
    });
  }
}

function encode(body: unknown): Buffer | undefined {
  if (body === undefined) return undefined;
  if (Buffer.isBuffer(body)) return body;
  return Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
}

async function readBody(res: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) {
      res.destroy();
      throw new Error(`The API server's answer is larger than ${MAX_BODY} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
