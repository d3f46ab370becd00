/**
 * serve as a supervised list of parts: a part that throws at start, one that fails later, one that
 * may not be restarted, and errors nothing caught. The API keeps answering a real client throughout,
 * and every failure is logged with the part's name.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config.js';
import { serve, type Served } from '../../src/server.js';
import { part, type Part, type PartContext } from '../../src/serve/part.js';
import { PartError, Supervisor } from '../../src/serve/supervisor.js';
import { tempDir } from '../support/helpers.js';

import { cli, haveKubectl, startServe, type ServeProcess } from './process.js';
import { until } from '../../testing/src/poll.js';

type Entry = Record<string, unknown>;

const clientOf = (served: Served) => {
  const kc = new KubeConfig();
  kc.loadFromString(readFileSync(served.kubeconfig!, 'utf8'));
  return kc.makeApiClient(CoreV1Api);
};

/** The API answers: a namespace created and read back through client-node. */
const answers = async (api: CoreV1Api, name: string) => {
  await api.createNamespace({ body: { metadata: { name } } });
  expect((await api.readNamespace({ name })).metadata?.name).toBe(name);
};

describe('serve supervises its parts (in process)', () => {
  let served: Served | undefined;
  afterEach(async () => {
    await served?.server.close();
    served = undefined;
  });

  const start = async (parts: Part[], fatal: (m: string) => void = () => {}) => {
    const logs: Entry[] = [];
    const config = resolveConfig({ port: 0, dataDir: join(tempDir(), 'data'), storage: 'memory:', disable: 'node,scheduler,registry,broker,gateway' });
    served = await serve(config, (e) => logs.push(e), { parts, fatal, backoffMs: 20 });
    return { logs, api: clientOf(served) };
  };

  it('restarts a part that throws at start, with backoff, while the API answers', async () => {
    let attempts = 0;
    const flaky = part('flaky', async () => {
      if (++attempts < 3) throw new Error(`flaky start ${attempts}`);
      return { stop: async () => {} };
    });
    const { logs, api } = await start([flaky]);
    await answers(api, 'during-backoff');
    await until('flaky started on its third attempt', () => served!.supervisor.ready().flaky);
    expect(logs.filter((e) => e.part === 'flaky' && e.msg === 'part did not start').map((e) => e.error)).toEqual(['flaky start 1', 'flaky start 2']);
    expect(logs.filter((e) => e.part === 'flaky' && e.msg === 'restarting part').map((e) => e.inMs)).toEqual([20, 40]);
    expect(served!.supervisor.ready()).toEqual({ 'api-server': true, 'controller-manager': true, flaky: true });
    await answers(api, 'after-restart');
  });

  it('restarts a part that fails after it started, stopping it first', async () => {
    const seen: string[] = [];
    let ctx: PartContext | undefined;
    const later: Part = part('later', async (c) => {
      ctx = c;
      seen.push('start');
      return { stop: async () => void seen.push('stop') };
    });
    const { logs, api } = await start([later]);
    ctx!.failed(new Error('lost its watch'));
    await until('later restarted', () => logs.some((e) => e.part === 'later' && e.msg === 'part restarted'));
    expect(seen).toEqual(['start', 'stop', 'start']);
    expect(logs.find((e) => e.msg === 'part failed')).toMatchObject({ level: 'error', part: 'later', error: 'lost its watch' });
    await answers(api, 'after-failure');
  });

  it('gives up on a part that may not be restarted with one line naming it, the API still answering until the caller ends', async () => {
    let ctx: PartContext | undefined;
    const fatal: string[] = [];
    const once = part('once', async (c) => ((ctx = c), { stop: async () => {} }), { restartable: false });
    const { logs, api } = await start([once], (m) => fatal.push(m));
    ctx!.failed(new Error('its store is gone'));
    expect(fatal).toEqual(['once: failed: its store is gone']);
    expect(logs.find((e) => e.part === 'once')).toMatchObject({ msg: 'part failed', error: 'its store is gone' });
    await answers(api, 'after-fatal');
  });

  it('a part whose failure is permanent (its port is taken) ends start-up, stopping what started, in reverse', async () => {
    const order: string[] = [];
    const ok = (name: string) => part(name, async () => (order.push(`start ${name}`), { stop: async () => void order.push(`stop ${name}`) }));
    const taken = part('taken', async () => {
      throw Object.assign(new Error('listen EADDRINUSE: address already in use 127.0.0.1:1'), { code: 'EADDRINUSE' });
    });
    const supervisor = new Supervisor([ok('a'), ok('b'), taken, ok('c')], { fatal: () => {} });
    const err = await supervisor.start().then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(PartError);
    expect((err as Error).message).toBe('taken: did not start: listen EADDRINUSE: address already in use 127.0.0.1:1');
    expect(order).toEqual(['start a', 'start b', 'stop b', 'stop a']);
  });

  it('refuses two parts of one name', () => {
    const p = part('same', async () => ({ stop: async () => {} }));
    expect(() => new Supervisor([p, p], { fatal: () => {} })).toThrow('two parts named "same"');
  });

  it('names the part an error nothing caught came from, by its stack, and restarts it', async () => {
    const logs: Entry[] = [];
    let starts = 0;
    const here = new URL('./', import.meta.url);
    const owned = part('owned', async () => (starts++, { stop: async () => {} }), { source: here });
    const supervisor = new Supervisor([owned], { log: (e) => logs.push(e), fatal: () => {}, backoffMs: 10 });
    await supervisor.start();
    expect(supervisor.stray(new Error('thrown in this folder'), 'unhandled rejection')).toBe('owned');
    const foreign = new Error('thrown elsewhere');
    foreign.stack = 'Error: thrown elsewhere\n    at f (file:///elsewhere/x.js:1:1)';
    expect(supervisor.stray(foreign)).toBeUndefined();
    expect(supervisor.stray('not an error')).toBeUndefined();
    await until('owned restarted', () => starts === 2);
    expect(logs.filter((e) => e.msg === 'unhandled rejection' || e.msg === 'uncaught error').map((e) => [e.part, e.error])).toEqual([
      ['owned', 'thrown in this folder'], [undefined, 'thrown elsewhere'], [undefined, 'not an error'],
    ]);
    await supervisor.stop();
  });
});

describe.runIf(haveKubectl)('cluster-api serve (process) keeps serving past errors nothing caught', () => {
  let s: ServeProcess | undefined;
  afterEach(() => s?.close());

  it('logs an unhandled rejection and an uncaught exception, and kubectl still gets answers', async () => {
    const fixture = fileURLToPath(new URL('./fixtures/stray-errors.mjs', import.meta.url));
    s = await startServe(['--storage', 'memory:', '--disable', 'node,broker'], { NODE_OPTIONS: `--import ${fixture}` });
    await until('both logged', () => s!.log().includes('stray exception from a timer'));
    const entries = s.log().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Entry);
    expect(entries.find((e) => e.msg === 'unhandled rejection')).toMatchObject({ level: 'error', error: 'stray rejection from a part' });
    expect(entries.find((e) => e.msg === 'uncaught exception')).toMatchObject({ level: 'error', error: 'stray exception from a timer' });
    expect(s.alive()).toBe(true);
    const r = await s.kubectl('create', 'namespace', 'still-here');
    expect([r.code, r.stdout.trim()]).toEqual([0, 'namespace/still-here created']);
    expect((await s.kubectl('get', 'namespace', 'still-here', '-o', 'name')).stdout.trim()).toBe('namespace/still-here');
  });

  it('a role command whose part cannot start says why in one line and exits 1, as before it was a part', async () => {
    for (const role of ['node', 'scheduler', 'broker']) {
      const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const data = role === 'scheduler' ? [] : ['--data-dir', join(tempDir(), 'd')];
        execFile(process.execPath, [cli, role, '--kubeconfig', '/nonexistent/k.yaml', ...data], { timeout: 20_000 }, (err, _out, stderr) =>
          resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stderr }));
      });
      expect([role, r.code]).toEqual([role, 1]);
      expect(r.stderr.trim()).toBe('cluster-api: kubeconfig /nonexistent/k.yaml: cannot read it (ENOENT)');
    }
  });

  it('refuses --disable of an unknown part, or of the API server, with one line and exit 1', async () => {
    for (const [value, shown] of [['kubelet', 'kubelet'], ['api-server', 'api-server']]) {
      const err = await startServe(['--storage', 'memory:', '--disable', value!]).then(() => undefined, (e: Error) => e.message);
      expect(err).toContain(`cluster-api: --disable: "${shown}" is not a part that can be disabled; parts: controller-manager, scheduler, node, registry, broker, gateway`);
      expect(err).not.toMatch(/\n\s+at /);
    }
  });
});
