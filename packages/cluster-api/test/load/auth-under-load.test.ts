/**
 * Authorization and token authentication under load: on a machine kept busy by CPU burners, a
 * RoleBinding is in effect for the very next request after its create is answered, and a token
 * that `kubectl create token` just issued for a just-created ServiceAccount authenticates on its
 * first use. Real clients: kubectl for the token, plain HTTPS with the served CA for the requests.
 *
 * Visibility latency is measured and printed, not asserted: from the write's answer (the binding's
 * create, the token's issue) to the first request's allowed answer, an upper bound of when the
 * authorizer or authenticator saw the write. Every request must be allowed at its first try.
 */
import { Agent, request as httpsRequest } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKubectl } from '../support/helpers.js';
import { burnCpu, percentile, type Burners } from './burners.js';
import { startServe, type ServeProcess } from './serve-process.js';

const Iterations = 12;
const Namespace = 'load';

let s: ServeProcess;
let burners: Burners;
/** One kept-alive connection: a request follows the write's answer as closely as a client can send it. */
let agent: Agent;

interface Answer {
  status: number;
  body: any;
}

function call(method: string, path: string, token: string, body?: unknown): Promise<Answer> {
  const url = new URL(path, s.url);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { method, agent, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = text;
        }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** Until `ok` holds (at most 10 s): how long after `since` it first held, and how many tries it took. */
async function firstAllowed(since: number, probe: () => Promise<Answer>, ok: (a: Answer) => boolean): Promise<{ ms: number; tries: number; first: Answer }> {
  let first: Answer | undefined;
  for (let tries = 1; ; tries++) {
    const a = await probe();
    first ??= a;
    if (ok(a)) return { ms: Date.now() - since, tries, first };
    if (Date.now() - since > 10_000) throw new Error(`not allowed 10 s after the write: ${a.status} ${JSON.stringify(a.body).slice(0, 300)}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const report = (what: string, ms: number[], load: number) =>
  process.stdout.write(`${what}: ${ms.length} writes, visibility p50 ${percentile(ms, 50)} ms, p99 ${percentile(ms, 99)} ms, max ${Math.max(...ms)} ms (load average ${load.toFixed(1)})\n`);

beforeAll(async () => {
  burners = burnCpu(170_000);
  s = await startServe(['--disable-agent', '--disable-scheduler']);
  agent = new Agent({ keepAlive: true, maxSockets: 1, ca: s.ca });
  expect((await call('POST', '/api/v1/namespaces', s.token, { metadata: { name: Namespace } })).status).toBe(201);
}, 60_000);

afterAll(async () => {
  agent?.destroy();
  await s?.close();
  await burners?.stop();
}, 30_000);

describe('authorization and authentication under load', () => {
  it(`a ServiceAccount's fresh token authenticates at once, ${Iterations} times`, async () => {
    const latencies: number[] = [];
    const firstTries: number[] = [];
    for (let i = 0; i < Iterations; i++) {
      const name = `sa-${i}`;
      expect((await call('POST', `/api/v1/namespaces/${Namespace}/serviceaccounts`, s.token, { metadata: { name } })).status).toBe(201);
      const issued = await runKubectl('kubectl', s.env, ['create', 'token', name, '-n', Namespace]);
      expect(issued.code, issued.stderr).toBe(0);
      const token = issued.stdout.trim();
      const created = Date.now();
      // SelfSubjectReview: every authenticated user may ask who it is; a 401 means the token was not accepted.
      const seen = await firstAllowed(created, () => call('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', token, { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }), (a) => a.status === 201);
      expect(seen.first.body?.status?.userInfo?.username ?? seen.first.body, `iteration ${i}`).toBe(`system:serviceaccount:${Namespace}:${name}`);
      latencies.push(seen.ms);
      firstTries.push(seen.tries);
    }
    report('ServiceAccount token authentication', latencies, burners.load());
    expect(firstTries.every((t) => t === 1), `tries per token: ${firstTries.join(',')}`).toBe(true);
  }, 150_000);

  it(`a RoleBinding allows the very next request, ${Iterations} times`, async () => {
    const latencies: number[] = [];
    const firstTries: number[] = [];
    const account = 'reader';
    expect((await call('POST', `/api/v1/namespaces/${Namespace}/serviceaccounts`, s.token, { metadata: { name: account } })).status).toBe(201);
    const issued = await runKubectl('kubectl', s.env, ['create', 'token', account, '-n', Namespace]);
    expect(issued.code, issued.stderr).toBe(0);
    const token = issued.stdout.trim();
    for (let i = 0; i < Iterations; i++) {
      // A namespace of its own each time, so that every binding is new to the authorizer.
      const ns = `${Namespace}-${i}`;
      expect((await call('POST', '/api/v1/namespaces', s.token, { metadata: { name: ns } })).status).toBe(201);
      expect((await call('GET', `/api/v1/namespaces/${ns}/configmaps`, token)).status, `iteration ${i}: allowed before the binding`).toBe(403);
      const binding = {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'read' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
        subjects: [{ kind: 'ServiceAccount', name: account, namespace: Namespace }],
      };
      expect((await call('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, s.token, binding)).status).toBe(201);
      const created = Date.now();
      const seen = await firstAllowed(created, () => call('GET', `/api/v1/namespaces/${ns}/configmaps`, token), (a) => a.status === 200);
      latencies.push(seen.ms);
      firstTries.push(seen.tries);
    }
    report('RoleBinding authorization', latencies, burners.load());
    expect(firstTries.every((t) => t === 1), `tries per binding: ${firstTries.join(',')}`).toBe(true);
  }, 150_000);
});
