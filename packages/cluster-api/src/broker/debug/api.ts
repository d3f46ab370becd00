/**
 * The event debugger's HTTP API, served by the broker beside its ingress, over the log's journal
 * (journal.ts): every broker process answers for every event, on SQLite and NATS alike.
 *
 * | request                                                              | answers                                  |
 * | -------------------------------------------------------------------- | ---------------------------------------- |
 * | `GET  /debug/v1/namespaces/{ns}/brokers/{b}/events[?filter=&follow=true&last=N]` | the events stored, as NDJSON (one `event` step a line), the last N (default 100) then, with `follow`, each as it is stored; `filter` a CESQL expression |
 * | `GET  /debug/v1/namespaces/{ns}/brokers/{b}/events/{id}`            | the event's whole path: `{event, steps}`  |
 * | `POST /debug/v1/namespaces/{ns}/brokers/{b}/events/{id}/replay`     | stores the event again (every Trigger evaluates it anew): 202 `{replayed: [id]}` |
 * | `POST /debug/v1/namespaces/{ns}/brokers/{b}/replay?from=dead-letter` | the same for every journaled event a Trigger dead-lettered or dropped |
 * | `GET  /debug/v1/namespaces/{ns}/triggers/{t}/filter-test[?last=N]`  | the Trigger's filter against the last N (default 100) stored events: `{trigger, broker, results: [{id, type, source, matched, why}]}` |
 *
 * Authorized by RBAC through the cluster API: the bearer token is asked about with a TokenReview,
 * then a SubjectAccessReview for the `events` subresource of the Broker (`eventing.knative.dev`,
 * `brokers/events`): `get` to read, `create` to replay. No token or one the API does not know: 401;
 * not allowed: 403. Errors are Kubernetes Status objects.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AccessAttributes, DelegatedUser } from '../../auth/delegated.js';
import { decodeRecord, DEFAULT_TTL, encodeRecord } from '../event/event.js';
import { compileFilter, type Predicate } from '../filter/filters.js';
import type { EventLog } from '../log/interface.js';
import type { Logger } from '../metrics.js';
import type { Trigger } from '../types.js';
import { explainMismatch } from './explain.js';
import { eventStep, type Journal, type JournaledStep, readSteps } from './journal.js';

export const DEBUG_PATH = '/debug/v1/';

/** Who asks, and whether they may: the cluster broker's DelegatedAuth. */
export interface DebugAuth {
  authenticateBearer(header: string | undefined): Promise<DelegatedUser | null>;
  allowed(user: DelegatedUser, attrs: AccessAttributes): Promise<boolean>;
}

export interface DebugDeps {
  readonly log: EventLog;
  readonly journal: Journal;
  readonly logger: Logger;
  readonly auth: DebugAuth;
  /** Whether the Broker `ns/name` exists (and its stream is ready). */
  readonly brokerReady: (key: string) => boolean | undefined;
  readonly trigger: (namespace: string, name: string) => Trigger | undefined;
  /** How often a follow reads the journal again. */
  readonly followEveryMs?: number;
}

const DEFAULT_LAST = 100;
const MAX_LAST = 2_000;

function status(res: ServerResponse, code: number, reason: string, message: string): void {
  if (res.headersSent) return void res.destroy();
  const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
}

function json(res: ServerResponse, code: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
}

class BadRequest extends Error {}

function lastOf(q: URLSearchParams): number {
  const v = q.get('last');
  if (v === null) return DEFAULT_LAST;
  const n = Number(v);
  if (!/^\d+$/.test(v) || n < 1 || n > MAX_LAST) throw new BadRequest(`last must be an integer from 1 to ${MAX_LAST}`);
  return n;
}

function cesql(q: URLSearchParams): Predicate {
  const expr = q.get('filter');
  if (expr === null || expr.trim() === '') return () => true;
  const compiled = compileFilter({ broker: '', subscriber: {}, filters: [{ cesql: expr }] });
  if ('problems' in compiled) throw new BadRequest(`filter: ${compiled.problems.map((p) => p.message).join('; ')}`);
  return compiled.predicate;
}

const events = (steps: JournaledStep[]) => steps.filter((s): s is Extract<JournaledStep, { k: 'event' }> => s.k === 'event');

/** A step as shown: without the stored record. */
const shown = (s: JournaledStep): JournaledStep => {
  if (s.k !== 'event') return s;
  const { record: _r, ...rest } = s;
  return rest;
};
/** One line of `events`: the event's attributes and where it came from. */
const line = (s: JournaledStep) => `${JSON.stringify(shown(s))}\n`;

export function debugHandler(deps: DebugDeps): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const segment = (s: string) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return '';
    }
  };
  return async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://broker');
    const p = url.pathname.slice(DEBUG_PATH.length).split('/').map(segment);
    // namespaces/{ns}/(brokers|triggers)/{name}/...
    if (p[0] !== 'namespaces' || !p[1] || (p[2] !== 'brokers' && p[2] !== 'triggers') || !p[3]) return status(res, 404, 'NotFound', 'the server could not find the requested resource');
    const [ns, kind, name, ...rest] = [p[1], p[2], p[3], ...p.slice(4)];
    const user = await deps.auth.authenticateBearer(req.headers.authorization);
    if (!user) return status(res, 401, 'Unauthorized', 'Unauthorized');
    const trigger = kind === 'triggers' ? deps.trigger(ns, name) : undefined;
    const broker = kind === 'brokers' ? name : trigger?.spec.broker;
    const route = `${req.method} ${rest.join('/')}`;
    const verb = req.method === 'POST' ? 'create' : 'get';
    const attrs = { verb, group: 'eventing.knative.dev', resource: 'brokers', subresource: 'events', namespace: ns, name: broker ?? name };
    if (!(await deps.auth.allowed(user, { resourceAttributes: attrs })))
      return status(res, 403, 'Forbidden', `brokers.eventing.knative.dev "${attrs.name}" is forbidden: User "${user.name}" cannot ${verb} resource "brokers/events" in API group "eventing.knative.dev" in the namespace "${ns}"`);
    if (kind === 'triggers' && !trigger) return status(res, 404, 'NotFound', `triggers.eventing.knative.dev "${name}" not found`);
    const key = `${ns}/${broker}`;
    if (!deps.brokerReady(key)) return status(res, 404, 'NotFound', `brokers.eventing.knative.dev "${broker}" not found`);
    try {
      if (kind === 'triggers' && route === 'GET filter-test') return await filterTest(deps, res, key, trigger!, lastOf(url.searchParams));
      if (kind === 'brokers' && route === 'GET events') return await tail(deps, req, res, key, url.searchParams);
      if (kind === 'brokers' && rest.length === 2 && rest[0] === 'events' && req.method === 'GET') return await path(deps, res, key, rest[1]!);
      if (kind === 'brokers' && rest.length === 3 && rest[0] === 'events' && rest[2] === 'replay' && req.method === 'POST') return await replay(deps, res, key, [rest[1]!]);
      if (kind === 'brokers' && route === 'POST replay') {
        if (url.searchParams.get('from') !== 'dead-letter') throw new BadRequest('replay needs an event id, or from=dead-letter');
        return await replay(deps, res, key, undefined);
      }
      return status(res, 404, 'NotFound', 'the server could not find the requested resource');
    } catch (err) {
      if (err instanceof BadRequest) return status(res, 400, 'BadRequest', err.message);
      deps.logger('warn', 'debugger request failed', { broker: key, error: (err as Error).message });
      return status(res, 503, 'ServiceUnavailable', 'the event log cannot be read now; try again');
    }
  };
}

async function tail(deps: DebugDeps, req: IncomingMessage, res: ServerResponse, key: string, q: URLSearchParams): Promise<void> {
  const keep = cesql(q);
  const last = lastOf(q);
  const follow = q.get('follow') === 'true';
  const steps = await readSteps(deps.log, key);
  let after = steps.at(-1)?.seq ?? 0;
  res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-cache' });
  for (const e of events(steps).filter((s) => keep(s.attributes)).slice(-last)) res.write(line(e));
  if (!follow) return void res.end();
  let open = true;
  req.on('close', () => (open = false));
  res.on('close', () => (open = false));
  while (open) {
    await new Promise((r) => setTimeout(r, deps.followEveryMs ?? 200));
    if (!open) break;
    try {
      const more = await readSteps(deps.log, key, after);
      if (more.length > 0) after = more.at(-1)!.seq;
      for (const e of events(more)) if (keep(e.attributes)) res.write(line(e));
    } catch (err) {
      deps.logger('warn', 'debugger follow failed', { broker: key, error: (err as Error).message });
      break;
    }
  }
  res.end();
}

async function path(deps: DebugDeps, res: ServerResponse, key: string, id: string): Promise<void> {
  const steps = (await readSteps(deps.log, key)).filter((s) => s.id === id || (s.k === 'event' && s.replyTo === id));
  const event = steps.find((s) => s.k === 'event' && s.id === id);
  if (!event) return status(res, 404, 'NotFound', `event "${id}" is not in the journal of broker ${key} (it keeps the newest steps only)`);
  json(res, 200, { broker: key, event: shown(event), steps: steps.map(shown) });
}

async function replay(deps: DebugDeps, res: ServerResponse, key: string, ids: string[] | undefined): Promise<void> {
  const steps = await readSteps(deps.log, key);
  const wanted = ids ?? [...new Set(steps.filter((s) => s.k === 'deadletter' || s.k === 'dropped').map((s) => s.id))];
  const stored = new Map(events(steps).map((s) => [s.id, s]));
  const records: Buffer[] = [];
  const replayed: string[] = [];
  for (const id of wanted) {
    const e = stored.get(id);
    if (!e?.record) {
      if (ids) return status(res, 404, 'NotFound', e ? `event "${id}" is too large to have been kept for replay` : `event "${id}" is not in the journal of broker ${key}`);
      continue;
    }
    const { event, traceparent, tracestate } = decodeRecord(Buffer.from(e.record, 'base64'));
    records.push(encodeRecord({ event, ttl: DEFAULT_TTL, ...(traceparent ? { traceparent } : {}), ...(tracestate ? { tracestate } : {}) }));
    replayed.push(id);
  }
  if (records.length > 0) await deps.log.append(key, records);
  for (const r of records) deps.journal.add(key, eventStep(decodeRecord(r).event, r, 'replay'));
  json(res, 202, { replayed });
}

async function filterTest(deps: DebugDeps, res: ServerResponse, key: string, trigger: Trigger, last: number): Promise<void> {
  const compiled = compileFilter(trigger.spec);
  if ('problems' in compiled) return status(res, 400, 'BadRequest', `the Trigger's filter is invalid: ${compiled.problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`);
  const recent = events(await readSteps(deps.log, key)).filter((s) => s.via !== 'replay').slice(-last);
  const results = recent.map((s) => {
    const matched = compiled.predicate(s.attributes);
    return { id: s.id, type: s.attributes.type, source: s.attributes.source, matched, ...(matched ? {} : { why: explainMismatch(trigger.spec, s.attributes) }) };
  });
  json(res, 200, { trigger: `${trigger.metadata.namespace}/${trigger.metadata.name}`, broker: key, results });
}
