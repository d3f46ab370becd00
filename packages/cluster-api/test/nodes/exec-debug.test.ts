/**
 * Ephemeral containers: `kubectl debug <pod> --image=… --target=…` (kubectl 1.32) through the
 * pods/ephemeralcontainers subresource, kube-apiserver's rules for it (only additions; no ports,
 * probes or resources; a unique name; a target that exists), and the node agent running what it
 * can: a function image as a process (`kubectl debug -i` then talks to it through attach), any
 * other image simulated with a Warning event saying so; `status.ephemeralContainerStatuses` either way.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { Resources, type KubeClient } from '@func/kube-client';
import { eventsOf, isReady, podUntil, privatePodAddresses, useNodeCluster, type Obj } from '../support/node-fixtures.js';
import { until } from '../../testing/src/poll.js';

const kubectlBin = '/usr/bin/kubectl';
const current = useNodeCluster(privatePodAddresses());
let kube: KubeClient;
const path = '/api/v1/namespaces/default/pods/shell/ephemeralcontainers';

function kubectl(args: readonly string[], input?: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(kubectlBin, [`--server=${current.cluster.server.url}`, ...args], { env: { PATH: process.env.PATH, HOME: current.cluster.dir } });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('error', reject);
    child.once('close', (code) => (clearTimeout(timer), resolve({ code, out })));
    child.stdin.end(input);
  });
}

async function api(method: string, body?: unknown, contentType = 'application/strategic-merge-patch+json'): Promise<{ status: number; json: Json }> {
  const res = await fetch(current.cluster.server.url + path, { method, headers: { 'content-type': contentType }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as Json };
}

type Json = Record<string, any>;

const statusOf = (p: Obj, name: string) => (p.status?.ephemeralContainerStatuses ?? []).find((s: Obj) => s.name === name);

beforeAll(async () => {
  kube = current.kube;
  await kube.create(Resources.pods, { metadata: { name: 'shell' }, spec: { containers: [{ name: 'fn', image: 'probe:v1' }] } });
  await podUntil(kube, 'shell', 'Ready', isReady);
}, 60_000);

describe('pods/ephemeralcontainers', () => {
  it('answers the Pod on GET and refuses what kube-apiserver refuses', async () => {
    const got = await api('GET');
    expect([got.status, got.json.kind, got.json.metadata.name]).toEqual([200, 'Pod', 'shell']);
    const add = (c: Record<string, unknown>) => api('PATCH', { spec: { ephemeralContainers: [{ name: 'bad', image: 'busybox:1.36', ...c }] } });
    const causes = async (c: Record<string, unknown>) => {
      const r = await add(c);
      expect([r.status, r.json.reason]).toEqual([422, 'Invalid']);
      return r.json.details.causes.map((x: Obj) => `${x.field}: ${x.message}`);
    };
    expect(await causes({ ports: [{ containerPort: 80 }] })).toEqual(['spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container']);
    expect(await causes({ readinessProbe: { tcpSocket: { port: 80 } } })).toEqual(['spec.ephemeralContainers[0].readinessProbe: Forbidden: cannot be set for an Ephemeral Container']);
    expect(await causes({ resources: { limits: { memory: '64Mi' } } })).toEqual(['spec.ephemeralContainers[0].resources: Forbidden: cannot be set for an Ephemeral Container']);
    expect(await causes({ targetContainerName: 'nope' })).toEqual(['spec.ephemeralContainers[0].targetContainerName: Not found: "nope"']);
    expect(await causes({ name: 'fn' })).toEqual(['spec.ephemeralContainers[0].name: Duplicate value: "fn"']);
    expect(await causes({ image: '' })).toEqual(['spec.ephemeralContainers[0].image: Required value']);
    const notJson = await fetch(current.cluster.server.url + path, { method: 'PATCH', headers: { 'content-type': 'application/strategic-merge-patch+json' }, body: '{nope' });
    expect(notJson.status).toBe(400);
  });

  it.runIf(existsSync(kubectlBin))('kubectl debug: another image is simulated, with an event and its status', async () => {
    const r = await kubectl(['debug', 'shell', '--image=busybox:1.36', '--target=fn', '-c', 'debugger', '--', 'sh']);
    expect(r.code, r.out).toBe(0);
    const p = await podUntil(kube, 'shell', 'debugger running', (x) => statusOf(x, 'debugger')?.state?.running);
    expect(p.spec.ephemeralContainers).toEqual([expect.objectContaining({ name: 'debugger', image: 'busybox:1.36', targetContainerName: 'fn', command: ['sh'], imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File' })]);
    const event = await until('the Simulated event', async () => (await eventsOf(kube, 'shell')).find((e) => e.reason === 'Simulated'));
    expect(event.message).toBe('Ephemeral container debugger is simulated: image "busybox:1.36" is not one this node runs, so nothing runs in it and exec and attach are not available');
    // Existing ephemeral containers are neither changed nor removed.
    const changed = await api('PATCH', { spec: { ephemeralContainers: [{ name: 'debugger', image: 'busybox:1.37' }] } });
    expect([changed.status, changed.json.details.causes[0].message]).toEqual([422, 'Forbidden: existing ephemeral containers "debugger" may not be changed']);
    const removed = await api('PATCH', [{ op: 'remove', path: '/spec/ephemeralContainers/0' }], 'application/json-patch+json');
    expect([removed.status, removed.json.details.causes[0].message]).toEqual([422, 'Forbidden: existing ephemeral containers "debugger" may not be removed']);
    // Attaching to a simulated container: the runtime's refusal reaches kubectl on the error channel,
    // and kubectl says so and falls back to the container's logs (there are none).
    const attach = await kubectl(['debug', '-i', 'shell', '--image=busybox:1.36', '-c', 'second', '--', 'sh'], 'echo hi\n');
    expect(attach.out).toContain('warning: couldn\'t attach to pod/shell, falling back to streaming logs: the simulated container runtime does not support attach: container "second" runs without a process to attach to');
  });

  it('a pod cannot be created with ephemeral containers', async () => {
    const res = await fetch(`${current.cluster.server.url}/api/v1/namespaces/default/pods`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ metadata: { name: 'early' }, spec: { containers: [{ name: 'fn', image: 'probe:v1' }], ephemeralContainers: [{ name: 'dbg', image: 'busybox:1.36' }] } }),
    });
    const body = (await res.json()) as Json;
    expect([res.status, body.details.causes]).toEqual([422, [{ reason: 'FieldValueForbidden', field: 'spec.ephemeralContainers', message: 'Forbidden: cannot be set on create' }]]);
  });

  it.runIf(existsSync(kubectlBin))('kubectl debug -i: a function image runs as a process, and its stdin and stdout reach kubectl through attach', async () => {
    const echo = 'process.stdin.once("data", (d) => process.stdout.write("debug saw " + d, () => process.exit(0)))';
    const r = await kubectl(['debug', '-i', 'shell', '--image=probe:v1', '--target=fn', '-c', 'echoer', '--', 'node', '-e', echo], 'hello\n');
    expect(r.out).toContain('debug saw hello\n');
    const p = await podUntil(kube, 'shell', 'echoer ran', (x) => statusOf(x, 'echoer')?.state?.running || statusOf(x, 'echoer')?.state?.terminated);
    expect(statusOf(p, 'echoer').containerID).toMatch(/^func:\/\//);
  });
});
