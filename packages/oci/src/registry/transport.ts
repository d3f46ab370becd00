/**
 * One HTTP exchange with a registry over node:http/https with keep-alive agents. Redirects (blob
 * downloads often go to object storage) are followed for GET and HEAD; the Authorization header is
 * dropped when a redirect leaves the registry's host, so a token never reaches a third party.
 */
import { Agent as HttpAgent, type IncomingMessage, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import { connectionError } from './errors.js';

export interface TransportOptions {
  /** PEM CA certificates to trust besides the system's. */
  ca?: string | Buffer;
  /** Accept any TLS certificate (testing only). */
  rejectUnauthorized?: boolean;
}

export interface HttpRequest {
  method: string;
  url: URL;
  headers?: Record<string, string>;
  body?: Buffer | Readable;
}

export interface HttpResponse {
  status: number;
  headers: IncomingMessage['headers'];
  url: URL;
  /** The body as a stream; call text()/buffer() or consume it, never both. */
  stream: IncomingMessage;
  buffer(limit?: number): Promise<Buffer>;
  text(): Promise<string>;
}

const MAX_BUFFERED = 64 * 1024 * 1024;

export class Transport {
  private readonly http = new HttpAgent({ keepAlive: true, maxSockets: 8 });
  private readonly https: HttpsAgent;

  constructor(readonly registry: string, options: TransportOptions = {}) {
    this.https = new HttpsAgent({ keepAlive: true, maxSockets: 8, ca: options.ca, rejectUnauthorized: options.rejectUnauthorized ?? true });
  }

  async send(req: HttpRequest, redirects = 5): Promise<HttpResponse> {
    const res = await this.once(req);
    const location = res.headers.location;
    if ([301, 302, 303, 307, 308].includes(res.status) && location && (req.method === 'GET' || req.method === 'HEAD') && redirects > 0) {
      res.stream.resume();
      const next = new URL(location, req.url);
      const headers = { ...req.headers };
      if (next.host !== req.url.host) delete headers.authorization;
      return this.send({ ...req, url: next, headers }, redirects - 1);
    }
    return res;
  }

  close(): void {
    this.http.destroy();
    this.https.destroy();
  }

  private once(req: HttpRequest): Promise<HttpResponse> {
    const secure = req.url.protocol === 'https:';
    const send = secure ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const r = send(req.url, { method: req.method, headers: req.headers, agent: secure ? this.https : this.http }, (stream) => {
        resolve(wrap(stream, req.url));
      });
      r.on('error', (err) => reject(connectionError(err, this.registry)));
      if (req.body === undefined) r.end();
      else if (Buffer.isBuffer(req.body)) r.end(req.body);
      else req.body.on('error', (err) => r.destroy(err)).pipe(r);
    });
  }
}

function wrap(stream: IncomingMessage, url: URL): HttpResponse {
  const buffer = async (limit = MAX_BUFFERED): Promise<Buffer> => {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) {
        stream.destroy();
        throw new Error(`The registry's answer from ${url.pathname} is larger than ${limit} bytes`);
      }
      chunks.push(chunk);
    }
    return Buffer.concat(chunks);
  };
  return { status: stream.statusCode ?? 0, headers: stream.headers, url, stream, buffer, text: async () => (await buffer()).toString('utf8') };
}
