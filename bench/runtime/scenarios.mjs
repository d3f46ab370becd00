// What each scenario sends and what a correct reply looks like. Every server is checked once per
// scenario before it is measured, so a server that answers fast but wrongly cannot look fast.
import { isDeepStrictEqual } from 'node:util';

/** A JSON document of exactly 1024 bytes. */
export function kibJson() {
  const doc = { id: 42, name: 'bench', tags: ['a', 'b', 'c'], nested: { ok: true, n: 3.5 }, pad: '' };
  const base = Buffer.byteLength(JSON.stringify(doc));
  doc.pad = 'x'.repeat(1024 - base);
  return JSON.stringify(doc);
}

const ECHO_BODY = kibJson();
const CE_DATA = JSON.stringify({ message: 'ping', n: 1 });

/** @typedef {{status: number, headers: Record<string, string | string[] | undefined>, body: string}} Reply */

function check(problems, cond, what) {
  if (!cond) problems.push(what);
}

function verifyHello(res) {
  const p = [];
  check(p, res.status === 200, `status ${res.status}, want 200`);
  check(p, res.body === 'Hello, world!', `body ${JSON.stringify(res.body.slice(0, 80))}`);
  check(p, /^text\/plain/.test(res.headers['content-type'] ?? ''), `content-type ${res.headers['content-type']}`);
  return p;
}

function parseOrNull(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function verifyEcho(res) {
  const p = [];
  check(p, res.status === 200, `status ${res.status}, want 200`);
  check(p, /^application\/json/.test(res.headers['content-type'] ?? ''), `content-type ${res.headers['content-type']}`);
  check(p, isDeepStrictEqual(parseOrNull(res.body), JSON.parse(ECHO_BODY)), 'body is not the request document');
  return p;
}

function verifyCloudEvent(res, fw) {
  const p = [];
  if (fw.answersEvents === false) {
    check(p, res.status === 204, `status ${res.status}, want 204 (this framework cannot reply with an event)`);
    return p;
  }
  const h = res.headers;
  check(p, res.status === 200, `status ${res.status}, want 200`);
  check(p, h['ce-specversion'] === '1.0', `ce-specversion ${h['ce-specversion']}`);
  check(p, h['ce-type'] === 'dev.func.bench.pong', `ce-type ${h['ce-type']}`);
  check(p, h['ce-source'] === '/bench/fn', `ce-source ${h['ce-source']}`);
  check(p, typeof h['ce-id'] === 'string' && h['ce-id'].length > 0, 'no ce-id');
  check(p, isDeepStrictEqual(parseOrNull(res.body), JSON.parse(CE_DATA)), `data ${res.body.slice(0, 80)}`);
  return p;
}

/**
 * @type {Array<{id: string, label: string, method: string, path: string,
 *   headers: Record<string, string>, body?: string, verify: (res: Reply, fw: object) => string[]}>}
 */
export const scenarios = [
  { id: 'hello', label: 'GET hello', method: 'GET', path: '/', headers: {}, verify: verifyHello },
  {
    id: 'echo',
    label: 'POST 1 KiB JSON echo',
    method: 'POST',
    path: '/',
    headers: { 'content-type': 'application/json' },
    body: ECHO_BODY,
    verify: verifyEcho,
  },
  {
    id: 'cloudevent',
    label: 'CloudEvent in → CloudEvent out',
    method: 'POST',
    path: '/',
    headers: {
      'content-type': 'application/json',
      'ce-specversion': '1.0',
      'ce-id': 'bench-0001',
      'ce-source': '/bench/client',
      'ce-type': 'dev.func.bench.ping',
    },
    body: CE_DATA,
    verify: verifyCloudEvent,
  },
];

export const scenarioIds = scenarios.map((s) => s.id);

/** The request as node:http sends it (content-length set, so every client frames it the same). */
export function requestOf(scenario) {
  const headers = { ...scenario.headers };
  if (scenario.body !== undefined) headers['content-length'] = String(Buffer.byteLength(scenario.body));
  return { method: scenario.method, path: scenario.path, headers, body: scenario.body };
}
