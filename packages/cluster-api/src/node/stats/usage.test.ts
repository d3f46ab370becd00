/** The readers of /proc and cgroup files, over files written here (cgroup v1 and v2 layouts) and this process's own /proc. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cgroupUsage, keyedValues, nodeUsage, processUsage, schedstatNanos, singleValue, statNanos, statusRssBytes } from './usage.js';
import { resourceMetricsText } from './resource-metrics.js';
import { parseMetricsText } from '../../metrics/prometheus-text.js';

const root = mkdtempSync(join(tmpdir(), 'usage-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const files = (dir: string, content: Record<string, string>) => {
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(content)) writeFileSync(join(dir, name), text);
};

describe('parsers', () => {
  it('reads key-value files, single values, schedstat, stat and status; refuses what is not theirs', () => {
    expect(keyedValues('usage_usec 1500\nuser_usec 1000\nbogus\nx y z\nneg -1\n')).toEqual(new Map([['usage_usec', 1500], ['user_usec', 1000]]));
    expect(singleValue('42\n')).toBe(42);
    expect(singleValue('max\n')).toBeUndefined();
    expect(singleValue(undefined)).toBeUndefined();
    expect(schedstatNanos('123456789 1000 7\n')).toBe(123456789);
    expect(schedstatNanos('')).toBeUndefined();
    // The command may hold spaces and parentheses: fields count from the last ')'.
    const stat = '4242 (node (my app)) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 11 0 100 0 0';
    expect(statNanos(stat)).toBe(3e9);
    expect(statNanos('garbage')).toBeUndefined();
    expect(statusRssBytes('Name:\tnode\nVmRSS:\t   51200 kB\nThreads: 7\n')).toBe(51200 * 1024);
    expect(statusRssBytes('Name:\tnode\n')).toBeUndefined();
  });
});

describe('readers', () => {
  it('reads a cgroup v2 directory: usage_usec, memory.current less inactive_file', () => {
    files(join(root, 'v2/func-x/c1'), { 'cpu.stat': 'usage_usec 2500000\nuser_usec 2000000\n', 'memory.current': '104857600\n', 'memory.stat': 'anon 50000000\ninactive_file 4857600\n' });
    expect(cgroupUsage('/func-x/c1', true, join(root, 'v2'))).toEqual({ cpuNanoSeconds: 2.5e9, workingSetBytes: 100_000_000 });
  });

  it('reads cgroup v1 hierarchies: cpuacct.usage, memory.usage_in_bytes less total_inactive_file', () => {
    files(join(root, 'v1/cpuacct/func-x/c1'), { 'cpuacct.usage': '7000000000\n' });
    files(join(root, 'v1/memory/func-x/c1'), { 'memory.usage_in_bytes': '2000\n', 'memory.stat': 'total_inactive_file 3000\n' });
    // The working set never goes below zero.
    expect(cgroupUsage('/func-x/c1', false, join(root, 'v1'))).toEqual({ cpuNanoSeconds: 7e9, workingSetBytes: 0 });
  });

  it('answers undefined for a cgroup that is gone or holds what does not parse', () => {
    expect(cgroupUsage('/func-x/gone', true, join(root, 'v2'))).toBeUndefined();
    files(join(root, 'v2/func-x/bad'), { 'cpu.stat': 'usage_usec lots\n', 'memory.current': 'max\n' });
    expect(cgroupUsage('/func-x/bad', true, join(root, 'v2'))).toBeUndefined();
  });

  it('reads a live process and the node; a process that is gone has none', () => {
    const self = processUsage(process.pid)!;
    expect(self.cpuNanoSeconds).toBeGreaterThan(0);
    expect(self.workingSetBytes).toBeGreaterThan(1 << 20);
    expect(processUsage(2 ** 22 + 1)).toBeUndefined();
    const node = nodeUsage();
    expect(node.cpuNanoSeconds).toBeGreaterThan(0);
    expect(node.workingSetBytes).toBeGreaterThan(0);
  });
});

describe('/metrics/resource text', () => {
  it('writes containers, pods (their sums) and the node, which the scraper\'s parser reads back; label values escaped', () => {
    const at = 1_700_000_000_000;
    const text = resourceMetricsText({
      at,
      node: { cpuNanoSeconds: 5e9, workingSetBytes: 1000 },
      containers: [
        { namespace: 'default', pod: 'web', container: 'a', startedAt: at - 1000, usage: { cpuNanoSeconds: 1e9, workingSetBytes: 100 } },
        { namespace: 'default', pod: 'web', container: 'b"\\', startedAt: at - 1000, usage: { cpuNanoSeconds: 2e9, workingSetBytes: 200 } },
      ],
    });
    expect(text).toContain('# TYPE container_cpu_usage_seconds_total counter\n');
    expect(text).toContain(`container_cpu_usage_seconds_total{container="a",namespace="default",pod="web"} 1 ${at}\n`);
    expect(text).toContain(`pod_memory_working_set_bytes{namespace="default",pod="web"} 300 ${at}\n`);
    expect(text).toContain('resource_scrape_error 0\n');
    const samples = parseMetricsText(text);
    expect(samples.find((s) => s.name === 'container_cpu_usage_seconds_total' && s.labels.container === 'b"\\')).toMatchObject({ value: 2, timestamp: at });
    expect(samples.find((s) => s.name === 'node_cpu_usage_seconds_total')).toEqual({ name: 'node_cpu_usage_seconds_total', labels: {}, value: 5, timestamp: at });
  });
});
