/**
 * A function with a lifecycle: `init` loads the exchange rates before the server takes traffic,
 * a custom readiness check at /ready reports whether they are loaded, and `shutdown` releases
 * them after the server has stopped (and logs what was served).
 *
 *   func-runtime examples/lifecycle
 *   curl 'localhost:8080/ready'
 *   curl 'localhost:8080/?amount=10&from=EUR&to=USD'
 *
 * func.yaml lists /ready under deploy.healthEndpoints, so Kubernetes probes the same path.
 */
import { readFile } from 'node:fs/promises';
import type { Context, StructuredReturn } from '@func/runtime';

interface RateTable {
  base: string;
  rates: Record<string, number>;
}

let table: RateTable | undefined;
let served = 0;

/** Loaded from a fixed file beside this module; a deployed function would call a rates service. */
export async function init(): Promise<void> {
  const text = await readFile(new URL('./rates.json', import.meta.url), 'utf8');
  const parsed = JSON.parse(text) as RateTable;
  if (typeof parsed.rates !== 'object' || parsed.rates === null) throw new Error('rates.json has no rates table');
  table = parsed;
  served = 0;
}

export function shutdown(): void {
  table = undefined;
  process.stdout.write(`${JSON.stringify({ level: 30, time: Date.now(), msg: `lifecycle example stopped after ${served} conversions` })}\n`);
}

/** Healthy by returning, not ready by throwing: Kubernetes stops routing here until it passes. */
export const readiness = Object.assign(
  (): string => {
    if (!table) throw new Error('exchange rates not loaded');
    return 'ready';
  },
  { path: '/ready' },
);

function problem(status: number, title: string, detail: string): StructuredReturn {
  return { statusCode: status, headers: { 'content-type': 'application/problem+json' }, body: { status, title, detail } };
}

const single = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

export function handle(context: Context): StructuredReturn {
  if (!table) return problem(503, 'Not ready', 'The exchange rates are not loaded yet.');
  const amount = Number(single(context.query.amount));
  const from = single(context.query.from)?.toUpperCase() ?? table.base;
  const to = single(context.query.to)?.toUpperCase();
  if (!Number.isFinite(amount) || amount < 0 || single(context.query.amount) === undefined) {
    return problem(400, 'Invalid amount', 'Pass ?amount=<a number >= 0>.');
  }
  const known = Object.keys(table.rates).join(', ');
  if (!to || !Object.hasOwn(table.rates, to) || !Object.hasOwn(table.rates, from)) {
    return problem(400, 'Unknown currency', `Pass ?from=&to= with one of ${known}.`);
  }
  served++;
  const converted = Math.round((amount / table.rates[from]!) * table.rates[to]! * 100) / 100;
  return { statusCode: 200, body: { amount, from, to, converted } };
}
