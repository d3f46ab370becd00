/**
 * The node agent against a real cluster API: registration, a function pod running as a process
 * (Running + Ready, reachable at podIP:8080, logs), deletion with SIGTERM, simulated images.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Resources, type KubeClient } from '@func/kube-client';
import { startServer, type ClusterApiServer } from '../src/server.js';
import { MemoryStorage } from '../src/storage/memory/memory.js';
import { NodeAgent } from '../src/node/agent.js';
import { functionImage, plainClient, until, type Obj } from './node-fixtures.js';

let server: ClusterApiServer;
let kube: KubeClient;
let agent: NodeAgent;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'node-agent-'));
  server = await startServer({ storage: new MemoryStorage() });
  kube = plainClient(server.url);
  await functionImage(join(dir, 'images'), 'hello', 'hello:latest');
  agent = new NodeAgent({ kube, name: 'node-a', dataDir: dir, retryMs: 500, log: (e) => console.error(JSON.stringify(e)) });
  await agent.start();
  await kube.patch(Resources.nodes, 'node-a', { spec: { podCIDR: '127.64.0.0/20' } }, { type: 'merge' });
}, 120_000);

afterAll(async () => {
  await agent?.stop();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const pod = (name: string, image: string, extra: object = {}) => ({ metadata: { name }, spec: { containers: [{ name: 'fn', image, ...extra }] } });

describe('node agent', () => {
  it('registers its Node with a Lease', async () => {
    const node = await kube.get<Obj>(Resources.nodes, 'node-a');
    expect(node.status.conditions.find((c: Obj) => c.type === 'Ready').status).toBe('True');
    const lease = await kube.get<Obj>(Resources.leases, 'node-a', { namespace: 'kube-node-lease' });
    expect(lease.spec.holderIdentity).toBe('node-a');
  });

  it('runs a function pod as a process: Running, Ready, reachable at podIP:8080', async () => {
    await kube.create(Resources.pods, pod('hello', 'hello'));
    await kube.bind('hello', 'node-a');
    const running = await until('hello Running', async () => {
      const p = await kube.get<Obj>(Resources.pods, 'hello');
      return p.status?.phase === 'Running' && p.status.conditions?.find((c: Obj) => c.type === 'Ready')?.status === 'True' && p;
    });
    const ip = running.status.podIP;
    expect(ip).toMatch(/^127\.64\.0\.\d+$/);
    const answer = await until('the function answers', () => fetch(`http://${ip}:8080/?name=pod`).then((r) => r.text(), () => undefined));
    expect(answer).toBe('Hello, pod!\n');
  });

  it('simulates an nginx pod as kwok does', async () => {
    await kube.create(Resources.pods, pod('web', 'nginx'));
    await kube.bind('web', 'node-a');
    const p = await until('web Running', async () => {
      const p = await kube.get<Obj>(Resources.pods, 'web');
      return p.status?.phase === 'Running' && p;
    });
    expect(p.status.containerStatuses[0]).toEqual({ name: 'fn', image: 'nginx', ready: true, restartCount: 0, state: { running: { startedAt: expect.any(String) } } });
  });

  it('deletes a function pod: SIGTERM, final status, then gone', async () => {
    await kube.delete(Resources.pods, 'hello');
    await until('hello gone', () => kube.get(Resources.pods, 'hello').then(() => false, () => true));
  });
});

describe('simulated deletion', () => {
  it('deletes a simulated pod at once', async () => {
    await kube.delete(Resources.pods, 'web');
    await until('web gone', () => kube.get(Resources.pods, 'web').then(() => false, () => true), 10_000);
  });
});
