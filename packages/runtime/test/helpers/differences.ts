/**
 * The places this runtime's default (spec 001) behaviour differs from faas-js-runtime 4, one row
 * each: what faas-js-runtime does, what we do, why, and what compatibility mode
 * (FUNC_COMPAT=faas-js-runtime) does: `same` (it behaves as faas-js-runtime did) or the reason it
 * keeps our behaviour. compat.test.ts runs the rows in the default mode, compat-mode.test.ts in
 * compatibility mode; the README's migration table lists the same rows.
 */
import { expect } from 'vitest';
import { fixture } from './cli.js';
import { get, post, type AnyFn, type Observation } from './peers.js';

export interface Difference {
  name: string;
  why: string;
  fn: AnyFn;
  send: (url: string) => Promise<Response>;
  /** start() options for both runtimes. */
  options?: Record<string, unknown>;
  faas: (o: Observation) => void;
  ours: (o: Observation) => void;
  /** In compatibility mode: `same` as faas-js-runtime, or why ours is kept. */
  compat: 'same' | { kept: string };
}

export const ceHeaders = { 'ce-specversion': '1.0', 'ce-id': 'c-1', 'ce-source': '/compat', 'ce-type': 'compat.test', 'content-type': 'application/json' };
const json = (o: Observation) => JSON.parse(o.body) as Record<string, unknown>;
const text = { 'content-type': 'text/plain' };

export const differences: Difference[] = [
  {
    name: 'second argument of handle for a CloudEvent',
    why: 'spec 001: the second parameter is the event\'s data; faas-js-runtime 4 passes the whole event. Migration: use `data` directly, or context.cloudevent for attributes.',
    fn: (_c: unknown, d: { id?: string; x?: number }) => ({ id: d?.id ?? null, x: d?.x ?? null }),
    send: post('{"x":1}', ceHeaders),
    faas: (o) => expect(json(o)).toEqual({ id: 'c-1', x: null }),
    ours: (o) => expect(json(o)).toEqual({ id: null, x: 1 }),
    compat: 'same',
  },
  {
    name: 'thrown error with statusCode',
    why: 'spec 001: "throwing an error that has a statusCode property" sets the status; faas-js-runtime 4 reads only `code`.',
    fn: () => { throw Object.assign(new Error('missing'), { statusCode: 404 }); },
    send: get(),
    faas: (o) => expect(o.status).toBe(500),
    ours: (o) => expect([o.status, o.type]).toEqual([404, 'application/problem+json']),
    compat: 'same',
  },
  {
    name: 'a 500 never shows the error message',
    why: 'internal messages can hold secrets; faas-js-runtime 4 sends err.message to the client.',
    fn: () => { throw new Error('password=hunter2'); },
    send: get(),
    faas: (o) => expect([o.status, o.type, o.body]).toEqual([500, 'text/plain', 'password=hunter2']),
    ours: (o) => expect(o.body).not.toContain('hunter2'),
    compat: 'same',
  },
  {
    name: 'a thrown 4xx is problem+json',
    why: 'RFC 9457 problem details carry the status, a code and the message; faas-js-runtime 4 sends the message as text/plain.',
    fn: () => { throw Object.assign(new Error('Unavailable for Legal Reasons'), { code: 451 }); },
    send: get(),
    faas: (o) => expect([o.status, o.type, o.body]).toEqual([451, 'text/plain', 'Unavailable for Legal Reasons']),
    ours: (o) => expect([o.status, o.type, json(o).detail]).toEqual([451, 'application/problem+json', 'Unavailable for Legal Reasons']),
    compat: 'same',
  },
  {
    name: 'an invalid CloudEvent (ce-specversion without ce-id)',
    why: 'an event with missing attributes is a client error to report; faas-js-runtime 4 silently treats it as plain HTTP.',
    fn: () => 'handled',
    send: post('{}', { 'ce-specversion': '1.0', 'content-type': 'application/json' }),
    faas: (o) => expect(o.status).toBe(200),
    ours: (o) => expect([o.status, json(o).code]).toEqual([400, 'invalid_cloudevent']),
    compat: { kept: 'bad input stays a 400 with the reason: a function never receives an event that breaks the spec' },
  },
  {
    name: 'paths other than /',
    why: 'every path reaches handle (nodeshift/faas-js-runtime#451); faas-js-runtime 4 routes only /.',
    fn: () => 'handled',
    send: get('/orders/7'),
    faas: (o) => expect(o.status).toBe(404),
    ours: (o) => expect([o.status, o.body]).toEqual([200, 'handled']),
    compat: { kept: 'a function written for / still answers /; no client depends on the 404' },
  },
  {
    name: 'query parameters copied onto the context',
    why: 'faas-js-runtime 4 also copies each query parameter onto context itself (context.name); we keep them in context.query only, so a parameter cannot shadow a Context field such as `log` or `body`.',
    fn: (c: Record<string, unknown>) => ({ name: c.name ?? null }),
    send: get('/?name=ann'),
    faas: (o) => expect(json(o)).toEqual({ name: 'ann' }),
    ours: (o) => expect(json(o)).toEqual({ name: null }),
    compat: 'same',
  },
  {
    name: 'context.rawBody is the bytes',
    why: 'a webhook signature is computed over bytes; faas-js-runtime 4 gives a UTF-8 string, which loses bytes that are not UTF-8.',
    fn: (c: { rawBody?: unknown }) => ({ kind: Buffer.isBuffer(c.rawBody) ? 'Buffer' : typeof c.rawBody }),
    options: { includeRaw: true },
    send: post('lunch=tacos', { 'content-type': 'application/x-www-form-urlencoded' }),
    faas: (o) => expect(json(o)).toEqual({ kind: 'string' }),
    ours: (o) => expect(json(o)).toEqual({ kind: 'Buffer' }),
    compat: 'same',
  },
  {
    name: 'an empty text/plain body',
    why: 'no body is undefined, whatever its type; faas-js-runtime 4 passes \'\' for an empty text/plain body.',
    fn: (c: { body?: unknown }, d: unknown) => ({ contextBody: c.body === undefined ? 'undefined' : c.body, data: d === undefined ? 'undefined' : d }),
    send: post('', text),
    faas: (o) => expect(json(o)).toEqual({ contextBody: '', data: '' }),
    ours: (o) => expect(json(o)).toEqual({ contextBody: 'undefined', data: 'undefined' }),
    compat: 'same',
  },
  {
    name: 'a text/* body other than text/plain',
    why: 'every text/* body is a string; faas-js-runtime 4 parses only text/plain as text and passes any other text type as a Buffer.',
    fn: (c: { body?: unknown }) => ({ kind: Buffer.isBuffer(c.body) ? 'Buffer' : typeof c.body }),
    send: post('<b>hi</b>', { 'content-type': 'text/html' }),
    faas: (o) => expect(json(o)).toEqual({ kind: 'Buffer' }),
    ours: (o) => expect(json(o)).toEqual({ kind: 'string' }),
    compat: 'same',
  },
  {
    name: '{ statusCode } without a body',
    why: 'a status alone answers with no body; faas-js-runtime 4 sends the returned object itself as the JSON body.',
    fn: () => ({ statusCode: 451, statusMessage: 'Unavailable For Legal Reasons' }),
    send: get(),
    faas: (o) => expect([o.status, o.type, json(o)]).toEqual([451, 'application/json', { statusCode: 451, statusMessage: 'Unavailable For Legal Reasons' }]),
    ours: (o) => expect([o.status, o.type, o.body]).toEqual([451, null, '']),
    compat: 'same',
  },
  {
    name: 'func.yaml is Knative\'s, checked against func.schema.json',
    why: 'a typo in func.yaml is reported at start-up; faas-js-runtime 4 reads its own keys (a top-level logLevel) unchecked. Migration: set FUNC_LOG_LEVEL in run.envs.',
    fn: (c: { log: { level: string } }) => c.log.level,
    // No logLevel option: faas-js-runtime lets func.yaml override start()'s options, we do not.
    options: { config: fixture('faas-func-yaml'), logLevel: undefined },
    send: get(),
    faas: (o) => expect([o.status, o.body]).toEqual([200, 'info']),
    ours: (o) => expect(o.body).toMatch(/does not match func\.schema\.json: .*unknown field "logLevel"/),
    compat: 'same',
  },
];
