/**
 * fetch() for URLs whose host is a `*.localhost` name (a Knative URL on the local cluster's
 * gateway, `http://hello.default.localhost:8092/`): such names are this machine (RFC 6761) and
 * curl and browsers resolve them so, but Node's resolver asks the system's, which may not know
 * them, and fetch() sets Host from the URL only. These go out through node:http with the name
 * looked up as the loopback address, so the Host header stays the URL's; every other URL goes to
 * fetch() as it is. Either way the caller gets a Response.
 */
import { request } from 'node:http';
import type { LookupFunction } from 'node:net';
import { Readable } from 'node:stream';

export const isLocalhostName = (url: URL): boolean => url.hostname.endsWith('.localhost');

const loopback: LookupFunction = (_host, options, callback) => {
  if ((options as { all?: boolean }).all) (callback as unknown as (err: null, addresses: { address: string; family: number }[]) => void)(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(null, '127.0.0.1', 4);
};

interface SendInit {
  method?: string;
  headers?: Record<string, string>;
  body?: Buffer;
  signal?: AbortSignal;
  redirect?: 'follow' | 'manual' | 'error';
}

export function send(url: URL, init: SendInit = {}): Promise<Response> {
  if (!isLocalhostName(url) || url.protocol !== 'http:') return fetch(url, init);
  return new Promise((resolve, reject) => {
    const req = request(url, { method: init.method ?? 'GET', headers: init.headers, lookup: loopback, signal: init.signal }, (res) => {
      const headers = new Headers();
      for (const [name, value] of Object.entries(res.headers)) for (const v of ([] as string[]).concat(value ?? [])) headers.append(name, v);
      const status = res.statusCode ?? 502;
      const bodyless = init.method === 'HEAD' || status === 204 || status === 304;
      if (bodyless) res.resume();
      resolve(new Response(bodyless ? null : (Readable.toWeb(res) as ReadableStream), { status, statusText: res.statusMessage, headers }));
    });
    // As fetch() rejects: the signal's reason when aborted (a TimeoutError), else TypeError with the socket error as its cause.
    req.on('error', (err) => reject(init.signal?.aborted ? init.signal.reason : Object.assign(new TypeError('fetch failed'), { cause: err })));
    req.end(init.body);
  });
}
