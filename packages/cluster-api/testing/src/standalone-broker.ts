/**
 * A broker in a process of its own with a fixed set of Brokers and Triggers (kill -9 tests, benchmarks),
 * run from the build:
 *
 *   node testing/dist/standalone-broker.js <store> <config.json> [port]
 *
 * `config.json` holds `{ brokers, triggers, channels?, subscriptions?, options?, invocationsGateway? }`; with `invocationsGateway` (a URL)
 * the broker serves asynchronous invocations, run against that URL with the default policy, and two more listeners
 * stand for the serving gateway's async path (serving/gateway/async.ts, every request queued for function `bench/fn`):
 * `inProcess` calls the broker's queue directly, as `serve`'s gateway does; `overHttp` goes through the broker's
 * `POST /invocations`, as a gateway in a process of its own does. The process prints one JSON line
 * `{"url": …, "fronts"?: {"inProcess": …, "overHttp": …}}` once it serves, then runs until killed.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { InvocationQueue } from '../../dist/broker/invocation/queue.js';
import { httpInvocationQueue, queueAsync } from '../../dist/serving/gateway/async.js';
import { startBroker } from '../../dist/broker/broker.js';
import { silentLogger } from '../../dist/broker/metrics.js';
import { StaticTriggerSource } from '../../dist/broker/source.js';
import type { Broker, Trigger } from '../../dist/broker/types.js';
import type { Channel, Subscription } from '../../dist/broker/channel/types.js';

/** A listener queueing every request as the gateway does for `Prefer: respond-async`; resolves with its URL. */
async function front(queue: InvocationQueue): Promise<string> {
  const server = createServer((req, res) => queueAsync(req, res, queue, { namespace: 'bench', name: 'fn', headers: req.headers }));
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function main(argv: readonly string[]): Promise<void> {
  const [store, configFile, port] = argv;
  if (!store || !configFile) throw new Error('usage: standalone <store> <config.json> [port]');
  const config = JSON.parse(readFileSync(configFile, 'utf8')) as { brokers: Broker[]; triggers: Trigger[]; channels?: Channel[]; subscriptions?: Subscription[]; options?: Record<string, number | boolean>; invocationsGateway?: string };
  const gateway = config.invocationsGateway;
  const source = new StaticTriggerSource([...config.brokers, ...config.triggers, ...(config.channels ?? []), ...(config.subscriptions ?? [])]);
  const broker = await startBroker({ store, triggerSource: source, port: Number(port ?? 0), logger: silentLogger, ...config.options,
    ...(gateway ? { invocations: { gatewayUrl: () => gateway, policyOf: async () => undefined } } : {}) });
  await broker.settled();
  const fronts = broker.invocations && {
    inProcess: await front(broker.invocations),
    overHttp: await front(httpInvocationQueue(() => broker.url)),
  };
  process.stdout.write(`${JSON.stringify({ url: broker.url, pid: process.pid, ...(fronts ? { fronts } : {}) })}\n`);
  const stop = () => void broker.stop().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

await main(process.argv.slice(2));
