/** The scraper's parsing and rates, and the metrics API's quantities, over texts written here (no clock). */
import { describe, expect, it } from 'vitest';
import { MalformedMetrics, parseMetricsText } from './prometheus-text.js';
import { PassThrough } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import type { KubeObject } from '../api/meta.js';
import { rate, ResourceMetrics, scrapeOf } from './scraper.js';
import { until } from '../../testing/src/poll.js';
import { cpuQuantity, goDuration, memoryQuantity } from '../registry/kinds/metrics.js';

const text = (at: number, cpu: number, start = 100) => [
  '# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds',
  `container_cpu_usage_seconds_total{container="fn",namespace="default",pod="web"} ${cpu} ${at}`,
  `container_memory_working_set_bytes{container="fn",namespace="default",pod="web"} 2048 ${at}`,
  `container_start_time_seconds{container="fn",namespace="default",pod="web"} ${start} ${at}`,
  `node_cpu_usage_seconds_total ${cpu * 10} ${at}`,
  `node_memory_working_set_bytes 4096 ${at}`,
  'resource_scrape_error 0',
  '',
].join('\n');

describe('parseMetricsText', () => {
  it('reads names, labels (escapes), values and timestamps; skips comments and blank lines', () => {
    expect(parseMetricsText('# c\n\nup 1\nx{a="q\\"\\\\\\n",b="2"} 1.5e3 17\nnan NaN\ninf +Inf\n')).toEqual([
      { name: 'up', labels: {}, value: 1 },
      { name: 'x', labels: { a: 'q"\\\n', b: '2' }, value: 1500, timestamp: 17 },
      { name: 'nan', labels: {}, value: NaN },
      { name: 'inf', labels: {}, value: Infinity },
    ]);
  });

  it('refuses a malformed line', () => {
    for (const bad of ['{a="b"} 1', 'x{a="b} 1', 'x{a=b} 1', 'x{="b"} 1', 'x', 'x one', 'x 1 2 3', 'x 1 1.5', 'x{a="b"}']) {
      expect(() => parseMetricsText(bad), bad).toThrow(MalformedMetrics);
    }
  });
});

describe('rates between two scrapes', () => {
  it('gives nanocores over the window and the last working set', () => {
    const prev = scrapeOf(parseMetricsText(text(10_000, 1)), 0);
    const last = scrapeOf(parseMetricsText(text(12_000, 1.5)), 0);
    expect(rate(prev.containers.get('default/web/fn'), last.containers.get('default/web/fn'))).toEqual({ timestamp: 12_000, windowMs: 2000, cpuNanoCores: 250_000_000, memoryBytes: 2048 });
    expect(rate(prev.node, last.node)).toMatchObject({ windowMs: 2000, cpuNanoCores: 2_500_000_000, memoryBytes: 4096 });
  });

  it('gives none for one scrape, a restart (another start time, a counter gone back) or no time between', () => {
    const prev = scrapeOf(parseMetricsText(text(10_000, 5)), 0);
    expect(rate(undefined, prev.node)).toBeUndefined();
    const restarted = scrapeOf(parseMetricsText(text(12_000, 6, 200)), 0);
    expect(rate(prev.containers.get('default/web/fn'), restarted.containers.get('default/web/fn'))).toBeUndefined();
    const back = scrapeOf(parseMetricsText(text(12_000, 1)), 0);
    expect(rate(prev.containers.get('default/web/fn'), back.containers.get('default/web/fn'))).toBeUndefined();
    expect(rate(prev.node, prev.node)).toBeUndefined();
  });

  it('uses the read time for samples without a timestamp and ignores container samples without their labels', () => {
    const s = scrapeOf(parseMetricsText('node_cpu_usage_seconds_total 3\nnode_memory_working_set_bytes 9\ncontainer_cpu_usage_seconds_total{pod="p"} 1\n'), 777);
    expect(s.node).toEqual({ at: 777, cpuSeconds: 3, memoryBytes: 9 });
    expect(s.containers.size).toBe(0);
  });
});

describe('metrics API quantities', () => {
  it('prints CPU as scaled nanocores, memory as BinarySI bytes, windows as Go durations', () => {
    expect([cpuQuantity(0), cpuQuantity(1_234_567), cpuQuantity(5_000_000), cpuQuantity(2e9), cpuQuantity(1500)]).toEqual(['0', '1234567n', '5m', '2', '1500n']);
    expect([memoryQuantity(1536 * 1024), memoryQuantity(1_234_567), memoryQuantity(0)]).toEqual(['1536Ki', '1234567', '0']);
    expect([goDuration(15_000), goDuration(1013), goDuration(800), goDuration(60_250)]).toEqual(['15s', '1.013s', '800ms', '1m0.25s']);
  });
});

describe('ResourceMetrics', () => {
  it('serves the nodes that answer well; one unreachable, failing or answering what does not parse has none; stop ends the rounds', async () => {
    const node = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Node', metadata: { name } });
    let cpu = 0;
    const answer = (status: number, body: string) => {
      const res = Object.assign(new PassThrough(), { statusCode: status }) as unknown as IncomingMessage;
      (res as unknown as PassThrough).end(body);
      return res;
    };
    const asked: string[] = [];
    const metrics = new ResourceMetrics({
      resolutionMs: 5,
      nodes: async () => ['good', 'down', 'failing', 'garbled'].map(node),
      kubelet: {
        request: async (n) => {
          const name = n.metadata.name!;
          asked.push(name);
          if (name === 'down') throw new Error('connect ECONNREFUSED');
          if (name === 'failing') return answer(500, 'Internal Error');
          if (name === 'garbled') return answer(200, 'node_cpu_usage_seconds_total one two three\n');
          cpu += 1;
          return answer(200, text(Date.now(), cpu));
        },
      },
    });
    const nodes = await until('two scrapes of the good node', async () => {
      const n = await metrics.nodes();
      return n.length ? n : undefined;
    });
    metrics.stop();
    expect(nodes.map((n) => n.name)).toEqual(['good']);
    expect((await metrics.pods()).map((p) => [p.namespace, p.name, p.containers.map((c) => c.name)])).toEqual([['default', 'web', ['fn']]]);
    expect(new Set(asked)).toEqual(new Set(['good', 'down', 'failing', 'garbled']));
  });
});
