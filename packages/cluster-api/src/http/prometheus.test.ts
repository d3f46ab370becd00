import { describe, expect, it } from 'vitest';
import { MetricsRegistry } from './prometheus.js';

describe('MetricsRegistry', () => {
  it('writes counters, gauges and cumulative histograms in the text format', async () => {
    const r = new MetricsRegistry();
    const c = r.counter('jobs_total', 'Jobs done.', ['queue']);
    c.labels('a').inc();
    c.labels('a').inc(2);
    r.gauge('depth', 'Queue depth.').labels().set(7);
    const h = r.histogram('latency_seconds', 'Latency.', ['op'], [0.1, 1]);
    for (const v of [0.05, 0.5, 0.5, 3]) h.labels('get').observe(v);
    expect(await r.text()).toBe(
      [
        '# HELP jobs_total Jobs done.', '# TYPE jobs_total counter', 'jobs_total{queue="a"} 3',
        '# HELP depth Queue depth.', '# TYPE depth gauge', 'depth 7',
        '# HELP latency_seconds Latency.', '# TYPE latency_seconds histogram',
        'latency_seconds_bucket{op="get",le="0.1"} 1', 'latency_seconds_bucket{op="get",le="1"} 3', 'latency_seconds_bucket{op="get",le="+Inf"} 4',
        'latency_seconds_sum{op="get"} 4.05', 'latency_seconds_count{op="get"} 4', '',
      ].join('\n'),
    );
  });

  it('escapes label values and help text', async () => {
    const r = new MetricsRegistry();
    r.counter('odd_total', 'a\\b\nc', ['v']).labels('q"u\\o\nte').inc();
    expect(await r.text()).toContain('# HELP odd_total a\\\\b\\nc\n');
    expect(await r.text()).toContain('odd_total{v="q\\"u\\\\o\\nte"} 1\n');
  });

  it('keeps one series per label values', () => {
    const c = new MetricsRegistry().counter('x_total', 'x', ['a', 'b']);
    expect(c.labels('1', '2')).toBe(c.labels('1', '2'));
    expect(c.labels('1', '2')).not.toBe(c.labels('12', ''));
    expect(() => c.labels('only-one')).toThrow(/2 label values/);
  });

  it('collects gauges at scrape time; a failing collector leaves its metric empty', async () => {
    const r = new MetricsRegistry();
    r.gauge('objects', 'Stored.', ['resource'], async () => [[['pods'], 3]]);
    r.gauge('broken', 'Fails.', [], async () => Promise.reject(new Error('store down at 10.0.0.1')));
    const text = await r.text();
    expect(text).toContain('objects{resource="pods"} 3\n');
    expect(text).toContain('# TYPE broken gauge\n');
    expect(text).not.toContain('10.0.0.1');
  });

  it('refuses invalid and duplicate names', () => {
    const r = new MetricsRegistry();
    r.counter('a_total', 'a');
    expect(() => r.counter('a_total', 'again')).toThrow(/already registered/);
    expect(() => r.gauge('bad-name', 'x')).toThrow(/invalid/);
    expect(() => r.gauge('ok', 'x', ['__reserved'])).toThrow(/invalid/);
  });
});
