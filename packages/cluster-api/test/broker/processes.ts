/** Broker processes started from the build, for kill -9 and multi-process tests. */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Broker, Trigger } from '../../src/broker/types.js';

const entry = fileURLToPath(new URL('../../testing/dist/standalone-broker.js', import.meta.url));

export interface BrokerProcess {
  readonly url: string;
  /** With `invocationsGateway`: listeners queueing every request as the gateway's async path does (standalone-broker.ts). */
  readonly fronts?: { readonly inProcess: string; readonly overHttp: string };
  readonly child: ChildProcess;
  kill9(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts `standalone-broker.js` (testing/src/standalone-broker.ts) with `objects` on `store`; resolves once it serves. */
export async function spawnBroker(dir: string, store: string, objects: { brokers: Broker[]; triggers: Trigger[]; options?: object; invocationsGateway?: string }): Promise<BrokerProcess> {
  if (!existsSync(entry)) throw new Error(`${entry} is missing: build first (npx tsc -b)`);
  const config = join(dir, `config-${Date.now()}-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(config, JSON.stringify(objects));
  const child = spawn(process.execPath, [entry, store, config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const { url, fronts } = await new Promise<Pick<BrokerProcess, 'url' | 'fronts'>>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line) as Pick<BrokerProcess, 'url' | 'fronts'>);
    });
    child.once('exit', (code) => reject(new Error(`broker process exited (${code}): ${stderr}`)));
    setTimeout(() => reject(new Error(`broker process did not start: ${stderr}`)), 30_000).unref();
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    url,
    ...(fronts ? { fronts } : {}),
    child,
    kill9: async () => {
      child.kill('SIGKILL');
      await exited;
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
