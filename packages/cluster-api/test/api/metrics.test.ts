/**
 * /metrics: kube-apiserver's request, latency, in-flight, long-running, watcher and storage metrics in
 * the Prometheus text format, readable by system:masters and the system:monitoring group (the bootstrap
 * ClusterRole and binding of that name), forbidden to anyone else.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { runKubectl, startKubectlServer, type KubectlServer } from '../support/helpers.js';

/** `name{labels} value` lines of a scrape, labels parsed; `# HELP` / `# TYPE` kept apart. */
function parse(text: string): { samples: { name: string; labels: Record<string, string>; value: number }[]; types: Map<string, string> } {
  const samples = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types.set(type[1]!, type[2]!);
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1]!, l[2]!]));
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return { samples, types };
}

describe('/metrics', () => {
  let k: KubectlServer;
  const kubectl = (...args: string[]) => runKubectl('kubectl', k.env, args);
  const scrape = async (...as: string[]) => {
    const r = await kubectl('get', '--raw', '/metrics', ...as);
    expect(r.code, r.stderr).toBe(0);
    return parse(r.stdout);
  };
  beforeAll(async () => {
    k = await startKubectlServer();
  });
  afterAll(() => k?.close());

  it('counts requests by verb, resource, scope and code, with their latency', async () => {
    expect((await kubectl('get', 'pods', '-n', 'default')).code).toBe(0);
    expect((await kubectl('get', 'pod', 'missing', '-n', 'default')).code).not.toBe(0);
    expect((await kubectl('create', 'deployment', 'web', '--image=nginx:1.27')).code).toBe(0);
    const { samples, types } = await scrape();
    expect(types.get('apiserver_request_total')).toBe('counter');
    expect(types.get('apiserver_request_duration_seconds')).toBe('histogram');
    const find = (name: string, labels: Record<string, string>) => samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
    const list = { component: 'apiserver', dry_run: '', group: '', version: 'v1', resource: 'pods', subresource: '', scope: 'namespace', verb: 'LIST' };
    expect(find('apiserver_request_total', { ...list, code: '200' })?.value).toBeGreaterThanOrEqual(1);
    expect(find('apiserver_request_total', { verb: 'GET', resource: 'pods', scope: 'resource', code: '404' })?.value).toBe(1);
    expect(find('apiserver_request_total', { verb: 'POST', group: 'apps', resource: 'deployments', scope: 'resource', code: '201' })?.value).toBe(1);
    expect(find('apiserver_request_duration_seconds_bucket', { ...list, le: '+Inf' })?.value).toBeGreaterThanOrEqual(1);
    expect(find('apiserver_request_duration_seconds_count', list)?.value).toBe(find('apiserver_request_duration_seconds_bucket', { ...list, le: '+Inf' })?.value);
    // Buckets are cumulative.
    const buckets = samples.filter((s) => s.name === 'apiserver_request_duration_seconds_bucket' && s.labels.resource === 'pods' && s.labels.verb === 'LIST').map((s) => s.value);
    expect(buckets).toEqual([...buckets].sort((a, b) => a - b));
    // The scrape itself is a read-only request in flight.
    expect(find('apiserver_current_inflight_requests', { request_kind: 'readOnly' })?.value).toBeGreaterThanOrEqual(1);
    expect(find('apiserver_current_inflight_requests', { request_kind: 'mutating' })?.value).toBe(0);
    expect(find('apiserver_storage_objects', { resource: 'deployments.apps' })?.value).toBe(1);
    expect(find('apiserver_storage_objects', { resource: 'namespaces' })?.value).toBeGreaterThanOrEqual(4);
  });

  it('counts open watches as long-running requests and registered watchers', async () => {
    const watch = spawn('kubectl', ['get', 'configmaps', '-n', 'default', '--watch'], { env: k.env, stdio: 'ignore' });
    try {
      // kubectl lists, then watches: poll until its watch is open.
      let samples: ReturnType<typeof parse>['samples'] = [];
      const watching = () => samples.find((s) => s.name === 'apiserver_registered_watchers' && s.labels.kind === 'ConfigMap');
      for (const deadline = Date.now() + 20_000; !watching() && Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) samples = (await scrape()).samples;
      expect(watching()).toMatchObject({ labels: { group: '', version: 'v1', kind: 'ConfigMap' }, value: 1 });
      const long = samples.find((s) => s.name === 'apiserver_longrunning_requests' && s.labels.resource === 'configmaps');
      expect(long).toMatchObject({ labels: { verb: 'WATCH', scope: 'namespace', component: 'apiserver' }, value: 1 });
      // A watch is not a request in flight (kube-apiserver's max-inflight filter skips long-running ones).
      expect(samples.find((s) => s.name === 'apiserver_current_inflight_requests' && s.labels.request_kind === 'readOnly')?.value).toBe(1);
    } finally {
      watch.kill();
    }
    // Once the watch ends, it is no longer counted.
    let after = (await scrape()).samples;
    for (const deadline = Date.now() + 20_000; after.some((s) => s.name === 'apiserver_registered_watchers' && s.labels.kind === 'ConfigMap') && Date.now() < deadline; await new Promise((r) => setTimeout(r, 100)))
      after = (await scrape()).samples;
    expect(after.find((s) => s.name === 'apiserver_longrunning_requests' && s.labels.resource === 'configmaps')?.value).toBe(0);
  });

  it('is readable by the system:monitoring group and forbidden to an ordinary user', async () => {
    const monitoring = await kubectl('get', '--raw', '/metrics', '--as=prometheus', '--as-group=system:monitoring');
    expect(monitoring.code, monitoring.stderr).toBe(0);
    expect(monitoring.stdout).toContain('# TYPE apiserver_request_total counter');
    const user = await kubectl('get', '--raw', '/metrics', '--as=carol');
    expect(user.code).not.toBe(0);
    expect(user.stderr).toMatch(/Forbidden/);
    expect(user.stdout).not.toContain('apiserver_request_total');
    // The 403s are counted too, as requests for the path.
    const { samples } = await scrape();
    expect(samples.find((s) => s.name === 'apiserver_request_total' && s.labels.subresource === '/metrics' && s.labels.code === '403')?.value).toBeGreaterThanOrEqual(1);
  });

  it('refuses a write to /metrics and keeps unknown paths, resources and values out of its labels', async () => {
    expect((await kubectl('create', '--raw', '/metrics', '-f', '-')).code).not.toBe(0);
    await kubectl('get', '--raw', '/no-such-path/abc');
    await kubectl('get', '--raw', '/api/v1/no-such-things');
    await kubectl('get', '--raw', '/api/v1/namespaces/default/pods/p/no-such-sub');
    await kubectl('get', '--raw', '/api/v1/pods?dryRun=anything-at-all');
    const { samples } = await scrape();
    expect(samples.some((s) => Object.values(s.labels).some((v) => /no-such|anything-at-all/.test(v)))).toBe(false);
  });
});
