/**
 * `cluster-api serve --container-runtime oci`, as a user runs it, twice on one machine: each
 * prints its runtime in the `listening` line, gets a pod CIDR of private addresses of its own (a
 * bridge of its own), and runs a function pod under runc; the two pods answer on their own IPs with
 * no collision. From inside a pod the API answers at KUBERNETES_SERVICE_HOST:PORT (the `kubernetes`
 * Service's clusterIP, over TLS verified with the pod's ca.crt) to the pod's own token, RBAC
 * applied. A graceful stop takes the node's namespaces, bridge and clusterIP addresses with it. A pod
 * reaches a Knative Service by its cluster-local name and the broker's ingress by name (cluster DNS).
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { nodeKey } from '../../src/node/runtime/oci/runtime.js';
import { functionImage, probeFunction } from '../support/node-fixtures.js';
import { ociMissing } from '../support/oci-fixtures.js';
import { haveKubectl, startServe, stopServe, type ServeProcess } from '../serve/process.js';
import { until } from '../../testing/src/poll.js';

const started: ServeProcess[] = [];

const stop = stopServe;

afterAll(async () => {
  await Promise.all(started.map(stop));
}, 60_000);

describe.skipIf(ociMissing || !haveKubectl)(`serve --container-runtime oci${ociMissing ? ` (skipped: ${ociMissing})` : ''}`, () => {
  it('two serves side by side: each its own pod CIDR and bridge, function pods on both answering at their own IPs; nothing left after a stop', async () => {
    const serves = await Promise.all([0, 1].map(() => startServe(['--container-runtime', 'oci', '--no-broker'])));
    started.push(...serves);
    for (const s of serves) expect(s.log()).toMatch(/"msg":"listening".*"containerRuntime":"oci"/);
    await Promise.all(serves.map((s) => functionImage(join(s.dir, 'data', 'images'), probeFunction, 'probe:v1')));
    for (const s of serves) expect((await s.kubectl('run', 'fn', '--image=probe:v1', '--port=8080')).code).toBe(0);
    const ips = await Promise.all(serves.map((s) => until('fn Ready', async () => {
      const r = await s.kubectl('get', 'pod', 'fn', '-o', 'jsonpath={.status.containerStatuses[0].ready} {.status.podIP}');
      const [ready, ip] = r.stdout.split(' ');
      return ready === 'true' && ip ? ip : undefined;
    }, { timeoutMs: 90_000 })));
    expect(ips[0]!.split('.').slice(0, 2)).not.toEqual(ips[1]!.split('.').slice(0, 2));
    for (const ip of ips) {
      expect(ip.startsWith('10.')).toBe(true);
      expect(await until(`${ip} answers`, () => fetch(`http://${ip}:8080/`).then((r) => r.ok, () => false))).toBe(true);
    }
    // The pod's service account may discover the API but not list pods: the request is the pod's own, through the Service.
    const ask = `const fs = require("fs"), sa = "/var/run/secrets/kubernetes.io/serviceaccount/";
      const get = (path) => new Promise((done) => require("https").get({ host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT, path, ca: fs.readFileSync(sa + "ca.crt"), headers: { authorization: "Bearer " + fs.readFileSync(sa + "token", "utf8") } },
        (r) => { let b = ""; r.on("data", (c) => (b += c)); r.on("end", () => done(r.statusCode + " " + (JSON.parse(b).message ?? JSON.parse(b).kind))); }).on("error", (e) => done("failed " + e.code)));
      Promise.all([get("/api"), get("/api/v1/namespaces/default/pods")]).then((a) => console.log(a.join("\\n")));`;
    const asked = await serves[0]!.kubectl('exec', 'fn', '--', 'node', '-e', ask);
    expect(asked.stdout).toBe('200 APIVersions\n403 pods is forbidden: User "system:serviceaccount:default:default" cannot list resource "pods" in API group "" in the namespace "default"\n');
    const env = await serves[0]!.kubectl('exec', 'fn', '--', 'node', '-e', 'console.log(process.env.KUBERNETES_SERVICE_HOST, process.env.KUBERNETES_SERVICE_PORT)');
    const svc = await serves[0]!.kubectl('get', 'svc', 'kubernetes', '-o', 'jsonpath={.spec.clusterIP}');
    expect(env.stdout).toBe(`${svc.stdout} 443\n`);
    expect(svc.stdout.startsWith('10.')).toBe(true);
    const keys = serves.map((s) => nodeKey(join(s.dir, 'data', 'agent')));
    const loLabels = () => execFileSync('ip', ['-4', '-o', 'addr', 'show', 'dev', 'lo']).toString();
    expect(loLabels()).toContain(`lo:${keys[0]}`);
    expect(execFileSync('ip', ['link', 'show', `fbr${keys[0]}`]).toString()).toContain(`fbr${keys[0]}`);
    await stop(serves[0]!);
    const netns = execFileSync('ip', ['netns', 'list']).toString();
    expect(netns).not.toContain(`func${keys[0]}`);
    expect(netns).toContain(`func${keys[1]}`);
    expect(() => execFileSync('ip', ['link', 'show', `fbr${keys[0]}`], { stdio: 'ignore' })).toThrow();
    expect(loLabels()).not.toContain(`lo:${keys[0]}`);
    expect(loLabels()).toContain(`lo:${keys[1]}`);
  }, 240_000);

  it('a pod reaches a Knative Service by its cluster-local name (cluster DNS, the Route\'s placeholder, the gateway\'s Service) and the broker\'s ingress by name', async () => {
    const s = await startServe(['--container-runtime', 'oci']);
    started.push(s);
    await functionImage(join(s.dir, 'data', 'images'), probeFunction, 'probe:v1');
    const ksvc = join(s.dir, 'hello.yaml');
    writeFileSync(ksvc, 'apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata:\n  name: hello\nspec:\n  template:\n    spec:\n      containers:\n        - image: probe:v1\n');
    await until('the serving kinds served', async () => (await s.kubectl('apply', '-f', ksvc)).code === 0, { timeoutMs: 60_000 });
    expect((await s.kubectl('wait', '--for=condition=Ready', 'ksvc/hello', '--timeout=120s')).code).toBe(0);
    for (const [ns, name] of [['knative-serving', 'gateway'], ['knative-eventing', 'broker-ingress'], ['kube-system', 'kube-dns']])
      expect((await s.kubectl('get', 'svc', '-n', ns, name, '-o', 'jsonpath={.spec.clusterIP}')).stdout).toMatch(/^10\./);
    const pod = (await s.kubectl('get', 'pods', '-l', 'serving.knative.dev/service=hello', '-o', 'jsonpath={.items[0].metadata.name}')).stdout;
    const fetchFrom = (url: string) => s.kubectl('exec', pod, '--', 'node', '-e', `fetch(${JSON.stringify(url)}).then(async (r) => console.log(r.status, await r.text()), (e) => console.log("failed", e.cause?.code ?? e.message))`);
    const local = await until('hello by its cluster-local name', async () => {
      const r = await fetchFrom('http://hello.default.svc.cluster.local/');
      return r.stdout.startsWith('200 ') && r.stdout;
    }, { timeoutMs: 30_000 });
    expect(local).toMatch(/^200 hello from hello-00001-deployment-/);
    const broker = await fetchFrom('http://broker-ingress.knative-eventing.svc.cluster.local/default/nope');
    expect(broker.stdout).toMatch(/^\d{3} /);
    expect(broker.stdout).not.toMatch(/^failed/);
  }, 240_000);
});

