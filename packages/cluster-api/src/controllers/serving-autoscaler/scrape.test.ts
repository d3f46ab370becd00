import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { GatewayLoads, isLoadReport, PodStatsPath, scrapePod } from './scrape.js';

let server: Server | undefined;
afterEach(async () => {
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  server = undefined;
});

/** A pod answering its stats path with `status` and `body`. */
async function pod(status: number, body: string): Promise<number> {
  server = createServer((req, res) => {
    if (req.url !== PodStatsPath) return void res.writeHead(404).end();
    res.writeHead(status, { 'content-type': 'text/plain' }).end(body);
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

describe('scrapePod', () => {
  it('reads queue-proxy\'s gauges', async () => {
    const port = await pod(200, '# TYPE queue_average_concurrent_requests gauge\nqueue_average_concurrent_requests 2.5\n# TYPE queue_requests_per_second gauge\nqueue_requests_per_second 12\n');
    expect(await scrapePod('127.0.0.1', port)).toEqual({ concurrency: 2.5, rps: 12 });
  });

  it('is undefined for a pod that does not report: another status, a gauge missing, negative or not a number, nothing listening', async () => {
    expect(await scrapePod('127.0.0.1', await pod(404, 'queue_average_concurrent_requests 1\nqueue_requests_per_second 1\n'))).toBeUndefined();
    await new Promise((r) => server!.close(r));
    expect(await scrapePod('127.0.0.1', await pod(200, 'queue_average_concurrent_requests 1\n'))).toBeUndefined();
    await new Promise((r) => server!.close(r));
    expect(await scrapePod('127.0.0.1', await pod(200, 'queue_average_concurrent_requests -1\nqueue_requests_per_second 1\n'))).toBeUndefined();
    await new Promise((r) => server!.close(r));
    expect(await scrapePod('127.0.0.1', await pod(200, 'queue_average_concurrent_requests NaN\nqueue_requests_per_second 1\n'))).toBeUndefined();
    const port = (server!.address() as AddressInfo).port;
    await new Promise((r) => server!.close(r));
    server = undefined;
    expect(await scrapePod('127.0.0.1', port)).toBeUndefined();
  });
});

describe('the gateway\'s reports', () => {
  const report = (periodMs: number, concurrency: number, held: number, rps: number, waiting: number) => ({
    periodMs, poked: [], revisions: [{ namespace: 'ns', revision: 'r', concurrency, held, rps, waiting, readyPods: 1 }],
  });

  it('adds periods up, weighted by length, until taken; between reports the last averages stand', () => {
    const loads = new GatewayLoads();
    loads.add(report(250, 4, 2, 8, 1));
    loads.add(report(750, 0, 0, 0, 0));
    expect(loads.take('ns/r')).toEqual({ concurrency: 1, held: 0.5, rps: 2, waiting: 0 });
    expect(loads.take('ns/r')).toEqual({ concurrency: 1, held: 0.5, rps: 2, waiting: 0 });
    expect(loads.take('ns/other')).toEqual({ concurrency: 0, held: 0, rps: 0, waiting: 0 });
    loads.forget('ns/r');
    expect(loads.take('ns/r')).toEqual({ concurrency: 0, held: 0, rps: 0, waiting: 0 });
  });

  it('accepts only a report as the gateway writes it', () => {
    expect(isLoadReport(report(1000, 1, 0, 1, 0))).toBe(true);
    for (const bad of [null, 'text', {}, { periodMs: '1', poked: [], revisions: [] }, { periodMs: 1, poked: {}, revisions: [] }, { periodMs: 1, poked: [], revisions: [{ namespace: 'ns', revision: 'r', concurrency: '1', held: 0, rps: 0, waiting: 0 }] }, { periodMs: 1, poked: [], revisions: [null] }]) {
      expect(isLoadReport(bad), JSON.stringify(bad)).toBe(false);
    }
  });
});
