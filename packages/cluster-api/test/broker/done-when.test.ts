/**
 * Issue 23's "Done when", end to end with real processes, as a user runs them: `cluster-api serve`
 * (its embedded broker on SQLite), or `cluster-api serve --no-broker` beside `cluster-api broker
 * --broker-store nats://…` on a real nats-server; Knative's Broker and Trigger CRDs applied with
 * kubectl from shared/crds, unchanged; the cloudevents template and two more functions under
 * func-runtime; events sent with `func-runtime invoke --broker`.
 *
 * The template's reply reaches a second function through a Trigger on the reply's type; a function
 * answering 500 is retried with backoff and dead-lettered with the knativeerror* extensions; the
 * template's 400 for bad data is not retried; `kubectl get triggers` shows them Ready; an invalid
 * event at the ingress is a 400 saying why.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type NatsCluster, startNats } from '../../src/broker/log/testing/nats-server.js';
import { runKubectl } from '../support/helpers.js';
import { BROKER_CRD_FILE, brokerOf, KUBECTL, KNATIVE_CRDS, manifest, TRIGGER_CRD_FILE, triggerOf } from './cluster-helpers.js';
import { CLUSTER_API, FUNC_RUNTIME, recorded, RECORDER, renderTemplate, run, start, startFunction, stopAll } from './roles.js';
import { until } from '../../testing/src/poll.js';

type Engine = 'sqlite' | 'nats';
const ready = existsSync(KUBECTL) && existsSync(KNATIVE_CRDS) && existsSync(CLUSTER_API) && existsSync(FUNC_RUNTIME);

describe.runIf(ready).each<Engine>(['sqlite', 'nats'])('the Done-when scenario on %s', (engine) => {
  let dir: string;
  let nats: NatsCluster | undefined;
  let env: NodeJS.ProcessEnv;
  let brokerUrl: string;
  const files = { greeted: '', failing: '', dls: '' };
  const urls = { greeter: '', greeted: '', failing: '', dls: '' };
  const kubectl = (...args: string[]) => runKubectl(KUBECTL, env, args);
  const invoke = (...args: string[]) => run([FUNC_RUNTIME, 'invoke', ...args], env);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), `broker-done-${engine}-`));
    const data = join(dir, 'data');
    const kubeconfig = join(data, 'kubeconfig.yaml');
    env = { PATH: process.env.PATH, HOME: dir, KUBECONFIG: kubeconfig, KUBECACHEDIR: join(dir, 'cache') };
    if (engine === 'sqlite') {
      const api = start([CLUSTER_API, 'serve', '--port', '0', '--data-dir', data]);
      brokerUrl = (await api.line((e) => e.msg === 'listening')).broker as string;
    } else {
      nats = await startNats(1);
      const api = start([CLUSTER_API, 'serve', '--port', '0', '--data-dir', data, '--no-broker']);
      expect((await api.line((e) => e.msg === 'listening')).broker).toBeUndefined();
      const broker = start([CLUSTER_API, 'broker', '--kubeconfig', kubeconfig, '--broker-store', nats.url, '--port', '0', '--data-dir', join(dir, 'broker')]);
      brokerUrl = (await broker.line((e) => e.msg === 'listening')).url as string;
    }
    for (const name of ['greeted', 'failing', 'dls'] as const) files[name] = join(dir, `${name}.jsonl`);
    const [greeter, greeted, failing, dls] = await Promise.all([
      startFunction(renderTemplate(join(dir, 'greeter'), 'greeter')),
      startFunction(RECORDER, { RECORD_FILE: files.greeted }),
      startFunction(RECORDER, { RECORD_FILE: files.failing, ANSWER_STATUS: '500', ANSWER_BODY: 'database down' }),
      startFunction(RECORDER, { RECORD_FILE: files.dls }),
    ]);
    Object.assign(urls, { greeter: greeter.url, greeted: greeted.url, failing: failing.url, dls: dls.url });
  }, 120_000);

  afterAll(async () => {
    await stopAll();
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("installs Knative's Broker and Trigger CRDs unchanged; Triggers created with kubectl become Ready", async () => {
    const crds = await kubectl('apply', '-f', BROKER_CRD_FILE, '-f', TRIGGER_CRD_FILE);
    expect(crds.stderr).toBe('');
    await kubectl('wait', '--for=condition=Established', '--timeout=20s', '-f', BROKER_CRD_FILE, '-f', TRIGGER_CRD_FILE);
    const on = (type: string, uri: string, delivery?: object) => ({ broker: 'default', filter: { attributes: { type } }, subscriber: { uri }, ...(delivery ? { delivery } : {}) });
    const deadLetters = (backoffDelay: string) => ({ retry: 3, backoffPolicy: 'linear', backoffDelay, deadLetterSink: { uri: urls.dls } });
    writeFileSync(join(dir, 'eventing.yaml'), manifest(
      brokerOf('default'),
      triggerOf('greeter', undefined, on('com.example.customer.created', urls.greeter, deadLetters('PT0.1S'))),
      triggerOf('greeted', undefined, on('com.example.customer.greeted', urls.greeted)),
      triggerOf('orders', undefined, on('com.example.order.placed', urls.failing, deadLetters('PT0.2S'))),
    ));
    expect((await kubectl('apply', '-f', join(dir, 'eventing.yaml'))).stderr).toBe('');
    const table = await until('every Trigger Ready in kubectl get triggers', async () => {
      const out = (await kubectl('get', 'triggers')).stdout;
      return ['greeter', 'greeted', 'orders'].every((t) => new RegExp(`^${t}\\s+default\\s+http://\\S+\\s+\\S+\\s+True`, 'm').test(out)) && out;
    }, { timeoutMs: 30_000 });
    expect(table).toMatch(new RegExp(`^greeter\\s+default\\s+${urls.greeter.replaceAll('.', '\\.')}\\s`, 'm'));
    const brokers = (await kubectl('get', 'brokers')).stdout;
    expect(brokers).toMatch(new RegExp(`^default\\s+${brokerUrl}/default/default\\s+\\S+\\s+True`, 'm'));
  });

  it('hands the template\'s reply to a second function through a Trigger on the reply\'s type', async () => {
    const sent = await invoke('--broker', 'default', '--type', 'com.example.customer.created', '--source', '/signup', '--id', 'c1', '--data', '{"name":"Ada","customerId":"42"}');
    expect(sent.stderr).toContain(`to ${brokerUrl}/default/default`);
    expect(sent.stdout).toMatch(/^HTTP 202 Accepted/);
    expect(sent.code).toBe(0);
    const [reply] = await until('the greeting at the second function', () => recorded(files.greeted).length > 0 && recorded(files.greeted), { timeoutMs: 30_000 });
    expect(reply!.attributes).toMatchObject({ type: 'com.example.customer.greeted', source: '/greeter', specversion: '1.0' });
    expect(reply!.data).toEqual({ customerId: '42', message: 'Hello, Ada!' });
  });

  it('retries a function answering 500 with backoff, then dead-letters the event with the knativeerror* extensions', async () => {
    const sent = await invoke('--broker', 'default/default', '--type', 'com.example.order.placed', '--source', '/shop', '--id', 'o1', '--data', '{"order":7}');
    expect(sent.code).toBe(0);
    const [dead] = await until('the dead letter', () => recorded(files.dls).find((e) => e.attributes.id === 'o1') && recorded(files.dls).filter((e) => e.attributes.id === 'o1'), { timeoutMs: 30_000 });
    expect(dead!.attributes).toMatchObject({
      type: 'com.example.order.placed', source: '/shop',
      knativeerrorcode: '500', knativeerrordest: urls.failing, knativeerrordata: Buffer.from('database down').toString('base64'),
    });
    expect(dead!.data).toEqual({ order: 7 });
    const attempts = recorded(files.failing).filter((e) => e.attributes.id === 'o1');
    expect(attempts).toHaveLength(4);
    // Linear backoff of PT0.2S: at least 200, 400, 600 ms before retries 1, 2, 3 (a lower bound: load only lengthens it).
    attempts.slice(1).forEach((a, i) => expect(a.at - attempts[i]!.at).toBeGreaterThanOrEqual(200 * (i + 1) - 20));
  });

  it('does not retry the template\'s 400 for bad data: one attempt, then the dead-letter sink', async () => {
    const sent = await invoke('--broker', brokerUrl + '/default/default', '--type', 'com.example.customer.created', '--id', 'bad1', '--data', '{"name":""}');
    expect(sent.code).toBe(0);
    const [dead] = await until('the refused event at the dead-letter sink', () => recorded(files.dls).filter((e) => e.attributes.id === 'bad1').length > 0 && recorded(files.dls).filter((e) => e.attributes.id === 'bad1'), { timeoutMs: 30_000 });
    expect(dead!.attributes).toMatchObject({ knativeerrorcode: '400', knativeerrordest: urls.greeter });
    expect(JSON.parse(Buffer.from(String(dead!.attributes.knativeerrordata), 'base64').toString())).toMatchObject({ status: 400, title: 'Invalid event data' });
    const metrics = await (await fetch(`${brokerUrl}/metrics`)).text();
    expect(metrics).toMatch(/^broker_events_retried_total\{broker="default\/default",trigger="default\/greeter"\} 0$/m);
    expect(metrics).toMatch(/^broker_events_retried_total\{broker="default\/default",trigger="default\/orders"\} 3$/m);
    expect(recorded(files.greeted).filter((e) => e.attributes.type === 'com.example.customer.greeted')).toHaveLength(1);
  });

  it('reaches a function behind a Service through the Endpoints kubectl created', async () => {
    const port = new URL(urls.greeted).port;
    writeFileSync(join(dir, 'service.yaml'), `apiVersion: v1
kind: Service
metadata: {name: greeted}
spec: {ports: [{name: http, port: 80, targetPort: 8080}]}
---
apiVersion: v1
kind: Endpoints
metadata: {name: greeted}
subsets: [{addresses: [{ip: 127.0.0.1}], ports: [{name: http, port: ${port}}]}]
---
apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata: {name: by-service}
spec:
  broker: default
  filter: {attributes: {type: com.example.ping}}
  subscriber: {ref: {apiVersion: v1, kind: Service, name: greeted}}
`);
    expect((await kubectl('apply', '-f', join(dir, 'service.yaml'))).stderr).toBe('');
    await until('by-service Ready', async () => /^by-service\s+default\s+\S+\s+\S+\s+True/m.test((await kubectl('get', 'triggers')).stdout), { timeoutMs: 30_000 });
    expect((await kubectl('get', 'trigger', 'by-service', '-o', 'jsonpath={.status.subscriberUri}')).stdout).toBe(`http://127.0.0.1:${port}/`);
    expect((await invoke('--broker', 'default', '--type', 'com.example.ping', '--id', 'p1')).code).toBe(0);
    await until('the ping at the function behind the Service', () => recorded(files.greeted).some((e) => e.attributes.id === 'p1'), { timeoutMs: 30_000 });
  });

  it('answers an invalid event at the ingress 400 with the reason, and a Broker that does not exist 404', async () => {
    const bad = await fetch(`${brokerUrl}/default/default`, { method: 'POST', headers: { 'ce-specversion': '1.0', 'ce-source': '/x', 'ce-type': 't', 'content-type': 'application/json' }, body: '{}' });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toBe('application/problem+json');
    expect(await bad.text()).toMatch(/id/);
    const none = await invoke('--broker', 'default/nope', '--type', 't');
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('Broker "nope" not found in namespace "default"');
    const direct = await fetch(`${brokerUrl}/default/nope`, { method: 'POST', headers: { 'ce-specversion': '1.0', 'ce-id': '1', 'ce-source': '/x', 'ce-type': 't' }, body: '' });
    expect(direct.status).toBe(404);
  });
});
