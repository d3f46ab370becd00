/**
 * The first function pod on a fresh `serve` while the machine is busy: CPU burners (child
 * processes, for a bounded time) keep every core loaded, `serve` starts with an empty image store,
 * and one pod names a function image in a loopback registry (a real `docker-registry`). The pod
 * becomes Ready, and the kubelet's events say what happened, in order: Scheduled, Pulling, Pulled
 * (with the pull's duration and the image's size), Created, Started. What each step took is
 * printed (no timed assertion: speed belongs in bench/).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { cpus } from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient, Resources } from '@func/kube-client';
import { ImageLayout, pushImage } from '@func/oci';
import { haveRegistry, startRegistry, type RunningRegistry } from '../../../oci/test/registry-server.js';
import { eventsOf, functionImage, isReady, podUntil, probeFunction, type EventObj, type Obj } from '../support/node-fixtures.js';
import { until } from '../../testing/src/poll.js';

const cli = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
/** How long the burners run at most (they are killed when the test ends). */
const BurnMs = 120_000;

let dir: string;
let registry: RunningRegistry | undefined;
const children = new Set<ChildProcess>();

function spawnChild(args: string[]): ChildProcess {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** One busy loop per core plus as many again (a load average of about twice the cores), each ending by itself after BurnMs. */
function burn(): void {
  for (let i = 0; i < cpus().length * 2; i++) spawnChild(['-e', `const end = Date.now() + ${BurnMs}; while (Date.now() < end) {}`]);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'first-pod-'));
  if (!haveRegistry) return;
  registry = await startRegistry();
  const scratch = join(dir, 'scratch');
  await functionImage(scratch, probeFunction, 'probe:v1');
  await pushImage(await ImageLayout.open(scratch), 'probe:v1', `${registry.host}/fn/probe:v1`);
}, 180_000);

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await registry?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe.runIf(haveRegistry)('the first function pod on a fresh serve under load', () => {
  it('becomes Ready, with Scheduled, Pulling, Pulled, Created and Started in order', async () => {
    const data = join(dir, 'data');
    burn();
    const started = Date.now();
    const serve = spawnChild([cli, 'serve', '--port', '0', '--data-dir', data, '--node-name', 'main']);
    let log = '';
    await new Promise<void>((resolve, reject) => {
      serve.stderr!.on('data', (d: Buffer) => ((log += d.toString()), /"msg":"listening"/.test(log) && resolve()));
      serve.once('exit', (code) => reject(new Error(`serve exited ${code}: ${log}`)));
    });
    const listening = Date.now();
    const kube = KubeClient.fromKubeconfig({ kubeconfig: join(data, 'kubeconfig.yaml') });
    const image = `${registry!.host}/fn/probe:v1`;
    await until('the default ServiceAccount', () => kube.get(Resources.serviceAccounts, 'default', { namespace: 'default' }).then(() => true), { timeoutMs: 60_000 });
    await kube.create(Resources.pods, { metadata: { name: 'first' }, spec: { containers: [{ name: 'fn', image }] } });
    const created = Date.now();
    const pod = await podUntil(kube, 'first', 'Ready', isReady, 120_000);
    const ready = Date.now();
    const steps = ['Scheduled', 'Pulling', 'Pulled', 'Created', 'Started'];
    // Events are written after what they tell of: wait until all five are there, then read their order.
    const events = await until('the five events', async () => {
      const all = await eventsOf(kube, 'first');
      return steps.every((r) => all.some((e) => e.reason === r)) && all;
    }, { timeoutMs: 60_000 });
    const at = (e: EventObj) => Date.parse(e.firstTimestamp ?? e.eventTime);
    events.sort((a, b) => at(a) - at(b));
    for (const e of events) console.log(`${e.firstTimestamp ?? e.eventTime} ${e.source?.component ?? e.reportingComponent}/${e.reason}: ${e.message}`);
    console.log(`serve listening after ${listening - started} ms; pod Ready ${ready - created} ms after its create (${pod.status.containerStatuses[0].state.running.startedAt})`);
    // In order (the timestamps have seconds: each step no earlier than the one before), each once.
    const step = steps.map((r) => events.filter((e: Obj) => e.reason === r));
    expect(step.map((list) => list.length)).toEqual([1, 1, 1, 1, 1]);
    for (let i = 1; i < steps.length; i++) expect(at(step[i]![0]!), `${steps[i]} after ${steps[i - 1]}`).toBeGreaterThanOrEqual(at(step[i - 1]![0]!));
    expect(events.find((e: Obj) => e.reason === 'Pulling')?.message).toBe(`Pulling image "${image}"`);
    expect(events.find((e: Obj) => e.reason === 'Pulled')?.message).toMatch(new RegExp(`^Successfully pulled image "${image.replace(/[.]/g, '\\.')}" in \\d+(\\.\\d+)?m?s \\(\\d+(\\.\\d+)?m?s including waiting\\)\\. Image size: \\d+ bytes\\.$`));
    expect(events.filter((e: Obj) => e.type === 'Warning')).toEqual([]);
  }, 240_000);
});
