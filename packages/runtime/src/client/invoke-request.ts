/**
 * The request `func-runtime invoke` sends, built from its flags: a plain HTTP request, or a
 * binary-mode CloudEvent (the mode Knative's `func invoke` sends) made with the cloudevents SDK.
 * Every bad flag is an InvokeUsageError naming the flag, before anything is sent.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

export class InvokeUsageError extends Error {
  override name = 'InvokeUsageError';
}

export interface InvokeFlags {
  url: string;
  method?: string;
  header: string[];
  data?: string;
  dataFile?: string;
  contentType: string;
  cloudevent: boolean;
  type: string;
  source: string;
  id?: string;
}

export interface OutgoingRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** The event sent, for the report. */
  event?: { id: string; type: string; source: string };
}

const requireLazy = createRequire(import.meta.url);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Where a function started in this shell listens: `PORT`, as func-runtime reads it, else 8080. */
export function localFunctionUrl(env: NodeJS.ProcessEnv = process.env): string {
  return `http://localhost:${env.PORT || 8080}/`;
}

/** An absolute URL, a host[:port][/path] without a scheme, or a path (`/orders?id=7`) on the local function. */
export function parseTarget(raw: string, env: NodeJS.ProcessEnv = process.env): URL {
  if (raw.startsWith('/')) raw = new URL(raw, localFunctionUrl(env)).href;
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new InvokeUsageError(`"${raw}" is not a URL. Give the function's address, e.g. http://localhost:8080/.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvokeUsageError(`Only http:// and https:// URLs can be invoked, got ${url.protocol}//.`);
  return url;
}

export function parseHeaders(lines: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon).trim() : '';
    if (!TOKEN.test(name)) throw new InvokeUsageError(`-H "${line}" is not a header: write it as "Name: value".`);
    out[name.toLowerCase()] = line.slice(colon + 1).trim();
  }
  return out;
}

function payload(flags: InvokeFlags): Buffer | undefined {
  if (flags.data !== undefined && flags.dataFile !== undefined) throw new InvokeUsageError('Give --data or --data-file, not both.');
  if (flags.data !== undefined) return Buffer.from(flags.data);
  if (flags.dataFile === undefined) return undefined;
  try {
    return readFileSync(flags.dataFile);
  } catch (err) {
    throw new InvokeUsageError(`Cannot read --data-file ${flags.dataFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}.`);
  }
}

const isJson = (type: string): boolean => /^application\/(?:[\w.-]+\+)?json\b/i.test(type);

function eventData(body: Buffer | undefined, type: string): unknown {
  if (body === undefined) return undefined;
  if (!isJson(type)) return body.toString('utf8');
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch (err) {
    throw new InvokeUsageError(`The event data is not valid JSON (${(err as Error).message}); fix it, or pass --content-type text/plain to send text.`);
  }
}

function cloudEventRequest(flags: InvokeFlags, body: Buffer | undefined, headers: Record<string, string>): Omit<OutgoingRequest, 'url' | 'method'> {
  const { CloudEvent, HTTP } = requireLazy('cloudevents') as typeof import('cloudevents');
  const data = eventData(body, flags.contentType);
  let event: InstanceType<typeof CloudEvent>;
  try {
    event = new CloudEvent({ id: flags.id ?? randomUUID(), type: flags.type, source: flags.source, ...(data === undefined ? {} : { datacontenttype: flags.contentType, data }) });
  } catch (err) {
    throw new InvokeUsageError(`Invalid CloudEvent attributes: ${(err as Error).message}.`);
  }
  const msg = HTTP.binary(event);
  const sent: Record<string, string> = {};
  for (const [k, v] of Object.entries(msg.headers)) sent[k.toLowerCase()] = String(v);
  const out = msg.body === undefined || msg.body === null ? undefined : Buffer.from(typeof msg.body === 'string' ? msg.body : JSON.stringify(msg.body));
  return { headers: { ...sent, ...headers }, body: out, event: { id: event.id, type: event.type, source: event.source } };
}

export function buildRequest(flags: InvokeFlags): OutgoingRequest {
  const url = parseTarget(flags.url);
  const headers = parseHeaders(flags.header);
  const body = payload(flags);
  const method = (flags.method ?? (body !== undefined || flags.cloudevent ? 'POST' : 'GET')).toUpperCase();
  if (!TOKEN.test(method)) throw new InvokeUsageError(`--method "${flags.method}" is not an HTTP method.`);
  if (flags.cloudevent) return { url, method, ...cloudEventRequest(flags, body, headers) };
  if (body !== undefined && headers['content-type'] === undefined) headers['content-type'] = flags.contentType;
  if (body !== undefined && (method === 'GET' || method === 'HEAD')) throw new InvokeUsageError(`A ${method} request cannot carry --data; use --method POST.`);
  return { url, method, headers, body };
}
