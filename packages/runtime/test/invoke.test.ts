/** `func-runtime invoke` as a process against a real listening function server. */
import { writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRequest, InvokeUsageError, localFunctionUrl, parseTarget, type InvokeFlags } from '../src/client/invoke-request.js';
import { describeResponse } from '../src/client/print-response.js';
import { start } from '../src/index.js';
import { FIXTURES, copyFixture, freePort, spawnCli } from './dev-helpers.js';

let server: Server;
let url: string;
const fx = copyFixture('dev-invoke');

beforeAll(async () => {
  const fn = (await import(join(FIXTURES, 'dev-invoke/index.mjs'))) as { handle: () => unknown };
  server = await start(fn, { port: 0, host: '127.0.0.1', logLevel: 'silent' });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  fx.remove();
});

async function invoke(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = spawnCli(['invoke', ...args]);
  let stdout = '';
  let stderr = '';
  proc.child.stdout!.on('data', (d: Buffer) => (stdout += d));
  proc.child.stderr!.on('data', (d: Buffer) => (stderr += d));
  const code = await proc.exited;
  return { code, stdout, stderr };
}

describe('func-runtime invoke', () => {
  it('GET: prints status, headers and the JSON body, exit 0', async () => {
    const r = await invoke(`${url}/`);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^HTTP 200 OK\n/);
    expect(r.stdout).toMatch(/^content-type: application\/json/m);
    expect(r.stdout.split('\n\n')[1]).toBe(`${JSON.stringify({ method: 'GET', header: null, received: null }, null, 2)}\n`);
  });

  it('POST with --data, -H and --method', async () => {
    const r = await invoke(`${url}/`, '--data', '{"order":7}', '-H', 'X-Test: yes', '--method', 'put');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout.split('\n\n')[1]!)).toEqual({ method: 'PUT', header: 'yes', received: { order: 7 } });
  });

  it('--data-file with --content-type', async () => {
    const file = join(fx.dir, 'note.txt');
    writeFileSync(file, 'plain words');
    const r = await invoke(`${url}/`, '--data-file', file, '--content-type', 'text/plain');
    expect(JSON.parse(r.stdout.split('\n\n')[1]!)).toEqual({ method: 'POST', header: null, received: 'plain words' });
  });

  it('--cloudevent sends a binary event and decodes the event it gets back', async () => {
    const r = await invoke(`${url}/`, '--cloudevent', '--type', 'order.created', '--source', '/shop', '--id', 'evt-42', '--data', '{"order":7}');
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/Sending CloudEvent id=evt-42 type=order\.created source=\/shop/);
    expect(r.stdout).toMatch(/^ce-type: fixture\.reply$/m);
    const decoded = r.stdout.split('\n\n')[1]!;
    expect(decoded).toMatch(/^CloudEvent:\n {2}id: .+\n/);
    expect(decoded).toMatch(/^ {2}type: fixture\.reply$/m);
    expect(decoded).toMatch(/^ {2}source: \/fixture\/invoke$/m);
    expect(decoded).toMatch(/^ {2}specversion: 1\.0$/m);
    expect(JSON.parse(decoded.split('Data:\n')[1]!)).toEqual({ echoed: { order: 7 }, id: 'evt-42', type: 'order.created', source: '/shop' });
  });

  it.each([
    ['/rejected', 422, /"code": "|"status": 422|order is incomplete/],
    ['/broken', 500, /"status": 500/],
  ])('%s: prints the %i reply and exits 1', async (path, status, body) => {
    const r = await invoke(`${url}${path}`);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(new RegExp(`^HTTP ${status} `));
    expect(r.stdout).toMatch(body);
    expect(r.stdout).not.toMatch(/internal detail/);
  });

  it('connection refused: a clear message and exit 3', async () => {
    const port = await freePort();
    const r = await invoke(`http://127.0.0.1:${port}/`);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(new RegExp(`cannot reach http://127\\.0\\.0\\.1:${port}/: connection refused \\(ECONNREFUSED\\)\\. Is the function running\\?`));
  });

  it('bad flags: exit 2 with the reason on stderr, nothing sent', async () => {
    const r = await invoke(`${url}/`, '-H', 'X-Test yes');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/-H "X-Test yes" is not a header/);
    expect(r.stdout).toBe('');
  });
});

describe('invoke flags (parsed before anything is sent)', () => {
  const flags = (over: Partial<InvokeFlags>): InvokeFlags => ({
    url: 'http://localhost:8080/', header: [], contentType: 'application/json', cloudevent: false, type: 'boson.fn', source: '/boson/fn', ...over,
  });

  it.each([
    ['a header without a colon', { header: ['X-Test yes'] }, /-H "X-Test yes" is not a header/],
    ['a header with an invalid name', { header: ['Bad Name: x'] }, /is not a header/],
    ['--data and --data-file together', { data: '1', dataFile: 'x' }, /Give --data or --data-file, not both/],
    ['a missing --data-file', { dataFile: '/nonexistent/file.json' }, /Cannot read --data-file \/nonexistent\/file\.json: ENOENT/],
    ['event data that is not JSON', { cloudevent: true, data: '{oops' }, /event data is not valid JSON .*--content-type text\/plain/],
    ['a non-HTTP URL', { url: 'ftp://example.com/' }, /Only http:\/\/ and https:\/\/ URLs can be invoked/],
    ['a malformed URL', { url: 'http://exa mple:99999/' }, /is not a URL/],
    ['a body on GET', { data: 'x', method: 'GET' }, /A GET request cannot carry --data/],
    ['a method that is not a token', { method: 'GE T' }, /--method "GE T" is not an HTTP method/],
  ])('%s → InvokeUsageError', (_name, over, message) => {
    expect(() => buildRequest(flags(over))).toThrow(InvokeUsageError);
    expect(() => buildRequest(flags(over))).toThrow(message);
  });

  it('a path is a request to the function started in this shell: localhost and PORT (8080 without)', () => {
    expect(parseTarget('/orders?id=7', { PORT: '9123' }).href).toBe('http://localhost:9123/orders?id=7');
    expect(parseTarget('/?name=you', {}).href).toBe('http://localhost:8080/?name=you');
    expect(localFunctionUrl({ PORT: '3000' })).toBe('http://localhost:3000/');
  });

  it('defaults: GET without data, POST with data or an event; a host without scheme is http', () => {
    expect(buildRequest(flags({ url: 'localhost:9000/x' }))).toMatchObject({ method: 'GET', url: new URL('http://localhost:9000/x'), body: undefined });
    expect(buildRequest(flags({ data: '{"a":1}' }))).toMatchObject({ method: 'POST', headers: { 'content-type': 'application/json' } });
    const ce = buildRequest(flags({ cloudevent: true, id: 'e1', data: '{"a":1}', header: ['X-Extra: 1'] }));
    expect(ce).toMatchObject({ method: 'POST', event: { id: 'e1', type: 'boson.fn', source: '/boson/fn' } });
    expect(ce.headers).toMatchObject({ 'ce-id': 'e1', 'ce-type': 'boson.fn', 'ce-source': '/boson/fn', 'ce-specversion': '1.0', 'x-extra': '1' });
    expect(JSON.parse(ce.body!.toString())).toEqual({ a: 1 });
  });
});

describe('invoke output', () => {
  const reply = (type: string | undefined, body: Buffer | string, extra: [string, string][] = []) =>
    describeResponse({ status: 200, statusText: 'OK', headers: [...(type ? [['content-type', type] as [string, string]] : []), ...extra], body: Buffer.from(body) });

  it.each([
    ['binary bytes are summarised, never dumped', 'application/octet-stream', Buffer.from([0, 1, 2, 3]), '(4 bytes of application/octet-stream)'],
    ['no content type counts as bytes', undefined, 'abc', '(3 bytes of application/octet-stream)'],
    ['JSON is indented', 'application/json; charset=utf-8', '{"a":[1]}', '{\n  "a": [\n    1\n  ]\n}'],
    ['problem+json is JSON', 'application/problem+json', '{"status":400}', '{\n  "status": 400\n}'],
    ['malformed JSON is shown as sent', 'application/json', '{oops', '{oops'],
    ['text as is', 'text/plain', 'hi\nthere', 'hi\nthere'],
    ['an empty body says so', 'text/plain', '', '(empty body)'],
  ])('%s', (_name, type, body, shown) => {
    expect(reply(type, body).split('\n\n').slice(1).join('\n\n')).toBe(`${shown}\n`);
  });

  it('a structured-mode CloudEvent reply is decoded: the attributes it sent, then its data', () => {
    const event = { specversion: '1.0', id: 'r1', source: '/s', type: 't', datacontenttype: 'application/json', data: { ok: true } };
    const out = reply('application/cloudevents+json', JSON.stringify(event));
    expect(out.split('\n\n')[1]).toBe('CloudEvent:\n  specversion: 1.0\n  id: r1\n  source: /s\n  type: t\n  datacontenttype: application/json\nData:\n{\n  "ok": true\n}\n');
  });

  it('a reply that claims to be a CloudEvent but is not says so and still shows the body', () => {
    const out = reply('application/cloudevents+json', '{"specversion":"1.0"}');
    expect(out).toMatch(/the reply claims to be a CloudEvent but is not a valid one: it has no id, source, type/);
    expect(out).toMatch(/"specversion": "1.0"/);
  });
});
