/** Starts brokers for tests on either engine, and stops everything they started. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { type BrokerOptions, type RunningBroker, startBroker } from '../../src/broker/broker.js';
import { type LogLevel, silentLogger } from '../../src/broker/metrics.js';
import { StaticTriggerSource } from '../../src/broker/source.js';
import { type NatsCluster, startNats } from '../../src/broker/log/testing/nats-server.js';
import type { Broker, Trigger } from '../../src/broker/types.js';
import { type Subscriber, subscriber } from './helpers.js';
import type { Channel, Subscription } from '../../src/broker/channel/types.js';

export type Engine = 'sqlite' | 'nats';

export interface Harness {
  readonly broker: RunningBroker;
  readonly source: StaticTriggerSource;
  readonly logs: { level: LogLevel; msg: string; fields?: Record<string, unknown> }[];
  ingress(namespace: string, name?: string): string;
}

/** Registers the engine's lifecycle hooks; `start` then opens brokers that are stopped after each test. */
export function engineHarness(engine: Engine) {
  const dir = mkdtempSync(join(tmpdir(), `broker-${engine}-`));
  let nats: NatsCluster | undefined;
  let n = 0;
  const running: RunningBroker[] = [];
  beforeAll(async () => {
    if (engine === 'nats') nats = await startNats(1);
  }, 60_000);
  afterEach(async () => {
    for (const b of running.splice(0)) await b.stop();
  });
  afterAll(async () => {
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    /** A store of its own for this test (sqlite) or the shared server (nats). */
    store: () => (engine === 'sqlite' ? `sqlite:${join(dir, `broker-${n++}.db`)}` : nats!.url),
    start: async (objects: (Broker | Trigger | Channel | Subscription)[], opts: Partial<BrokerOptions> & { store?: string } = {}): Promise<Harness> => {
      const source = new StaticTriggerSource();
      source.apply(...objects);
      const logs: Harness['logs'] = [];
      const broker = await startBroker({
        store: opts.store ?? (engine === 'sqlite' ? `sqlite:${join(dir, `broker-${n++}.db`)}` : nats!.url),
        triggerSource: source,
        resyncMs: 200,
        logger: (level, msg, fields) => {
          logs.push({ level, msg, fields });
          silentLogger(level, msg, fields);
        },
        ...opts,
      });
      running.push(broker);
      await broker.settled();
      return { broker, source, logs, ingress: (ns, name = 'default') => `${broker.url}/${ns}/${name}` };
    },
  };
}

let ns = 0;
/** A namespace no other test uses (streams on a shared NATS server stay apart). */
export const freshNamespace = () => `ns-${process.pid}-${ns++}`;

/** `sub(respond?)` starts an HTTP subscriber (helpers.ts) that is closed after each test of the suite. */
export function subscribersPerTest(): (...a: Parameters<typeof subscriber>) => Promise<Subscriber> {
  const subs: Subscriber[] = [];
  afterEach(async () => {
    for (const s of subs.splice(0)) await s.close();
  });
  return async (...a) => {
    const s = await subscriber(...a);
    subs.push(s);
    return s;
  };
}
