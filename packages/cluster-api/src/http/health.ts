/**
 * /healthz, /livez and /readyz as kube-apiserver answers them (k8s.io/apiserver/pkg/server/healthz):
 * each endpoint runs its list of named checks; `ok` when all pass, or with `?verbose` one line per
 * check (`[+]etcd ok`) and `livez check passed`; a failure always lists them (`[-]etcd failed: reason
 * withheld`, the reason never leaves the server) with `readyz check failed`, HTTP 500. `?exclude=name`
 * skips a check; `/readyz/<name>` runs one. Readiness adds the post-start hooks (bootstrap the server
 * finishes before it is ready) and `shutdown`, which fails once the server drains.
 */
import type { ServerResponse } from 'node:http';
import { pathNotFound } from '../api/errors.js';
import type { Storage } from '../storage/interface.js';
import { sendText } from './respond.js';

export interface HealthCheck {
  readonly name: string;
  /** True when healthy; false or a throw is a failure. */
  check(): boolean | Promise<boolean>;
}

export const HealthEndpoints = ['healthz', 'livez', 'readyz'] as const;
export type HealthEndpoint = (typeof HealthEndpoints)[number];

export type HealthChecks = Readonly<Record<HealthEndpoint, readonly HealthCheck[]>>;

/** Storage checks give up after this long, as kube-apiserver's etcd check does (a hung store is unhealthy). */
const storageTimeoutMs = 2000;

/**
 * Bootstrap steps run before the server is ready, as kube-apiserver's post-start hooks: each is a
 * `poststarthook/<name>` check that passes once its step has finished.
 */
export class PostStartHooks {
  private readonly done = new Map<string, boolean>();

  async run<T>(name: string, step: () => Promise<T>): Promise<T> {
    this.done.set(name, false);
    const value = await step();
    this.done.set(name, true);
    return value;
  }

  checks(): HealthCheck[] {
    return [...this.done.keys()].map((name) => ({ name: `poststarthook/${name}`, check: () => this.done.get(name) === true }));
  }
}

const always: HealthCheck[] = [
  { name: 'ping', check: () => true },
  { name: 'log', check: () => true },
];

function storageCheck(storage: Pick<Storage, 'healthy'>): HealthCheck {
  return {
    name: 'etcd',
    check: () => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), storageTimeoutMs).unref()));
      return Promise.race([storage.healthy().then((h) => h.ok), timeout]).finally(() => clearTimeout(timer));
    },
  };
}

/** The API server's checks: its store (named `etcd`, whatever the backend, as kine and k3s name it), its hooks and its shutdown. */
export function apiServerHealth(deps: { storage: Pick<Storage, 'healthy'>; hooks: PostStartHooks; shuttingDown: () => boolean }): HealthChecks {
  const live = [...always, storageCheck(deps.storage), ...deps.hooks.checks()];
  return { healthz: live, livez: live, readyz: [...live, { name: 'shutdown', check: () => !deps.shuttingDown() }] };
}

const passes = async (check: HealthCheck): Promise<boolean> => {
  try {
    return (await check.check()) === true;
  } catch {
    return false;
  }
};

/** `/readyz`, `/readyz/<name>` (`rest` is what follows the endpoint's path, without the slash). */
export async function serveHealth(res: ServerResponse, endpoint: HealthEndpoint, rest: string, query: URLSearchParams, checks: HealthChecks): Promise<void> {
  const list = checks[endpoint];
  if (rest) {
    const one = list.find((c) => c.name === rest);
    if (!one) throw pathNotFound();
    return (await passes(one)) ? text(res, 200, 'ok') : text(res, 500, 'internal server error: reason withheld\n');
  }
  const excluded = new Set(query.getAll('exclude').flatMap((e) => e.split(',')).map((e) => e.trim()).filter(Boolean));
  const results = await Promise.all(list.map(async (c) => (excluded.delete(c.name) ? 'excluded' : (await passes(c)) ? 'ok' : 'failed')));
  let lines = list.map((c, i) => (results[i] === 'excluded' ? `[+]${c.name} excluded: ok` : results[i] === 'ok' ? `[+]${c.name} ok` : `[-]${c.name} failed: reason withheld`)).join('\n');
  lines += '\n';
  if (excluded.size) lines += `warn: some health checks cannot be excluded: no matches for ${[...excluded].map((e) => `"${e.slice(0, 60)}"`).join(',')}\n`;
  if (results.includes('failed')) return text(res, 500, `${lines}${endpoint} check failed\n`);
  if (!query.has('verbose')) return text(res, 200, 'ok');
  text(res, 200, `${lines}${endpoint} check passed\n`);
}

function text(res: ServerResponse, code: number, body: string): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  sendText(res, code, body);
}
