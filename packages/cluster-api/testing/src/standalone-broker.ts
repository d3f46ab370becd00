/**
 * A broker in a process of its own with a fixed set of Brokers and Triggers (kill -9 tests, benchmarks),
 * run from the build:
 *
 *   node testing/dist/standalone-broker.js <store> <config.json> [port]
 *
 * `config.json` holds `{ brokers, triggers, channels?, subscriptions?, options?, invocationsGateway? }`; with `invocationsGateway` (a URL)
 * the broker serves asynchronous invocations, run against that URL with the default policy. The process prints one JSON line
 * `{"url": …}` once it serves, then runs until killed.
 */
import { readFileSync } from 'node:fs';
import { startBroker } from '../../dist/broker/broker.js';
import { silentLogger } from '../../dist/broker/metrics.js';
import { StaticTriggerSource } from '../../dist/broker/source.js';
import type { Broker, Trigger } from '../../dist/broker/types.js';
import type { Channel, Subscription } from '../../dist/broker/channel/types.js';

async function main(argv: readonly string[]): Promise<void> {
  const [store, configFile, port] = argv;
  if (!store || !configFile) throw new Error('usage: standalone <store> <config.json> [port]');
  const config = JSON.parse(readFileSync(configFile, 'utf8')) as { brokers: Broker[]; triggers: Trigger[]; channels?: Channel[]; subscriptions?: Subscription[]; options?: Record<string, number | boolean>; invocationsGateway?: string };
  const gateway = config.invocationsGateway;
  const source = new StaticTriggerSource([...config.brokers, ...config.triggers, ...(config.channels ?? []), ...(config.subscriptions ?? [])]);
  const broker = await startBroker({ store, triggerSource: source, port: Number(port ?? 0), logger: silentLogger, ...config.options,
    ...(gateway ? { invocations: { gatewayUrl: () => gateway, policyOf: async () => undefined } } : {}) });
  await broker.settled();
  process.stdout.write(`${JSON.stringify({ url: broker.url, pid: process.pid })}\n`);
  const stop = () => void broker.stop().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

await main(process.argv.slice(2));
