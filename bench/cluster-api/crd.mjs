// Custom resources against built-ins, in one `cluster-api serve` process (SQLite): how long a new CRD
// takes to be served, what a custom resource create costs next to a Pod create of the same size, and
// a list of 10,000 custom resources. Rounds interleave the two kinds in blocks, so a slow minute on
// this shared machine hits both alike. Prints a table; asserts nothing.
//   node bench/cluster-api/crd.mjs [--rounds 5] [--per-round 2000] [--cpu 0]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { httpClient } from './http-client.mjs';
import { cpuMs } from '../lib/process.mjs';
import { median } from '../lib/stats.mjs';
import { canPin, inParallel, podBody, startServer } from './server.mjs';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, 'per-round': { type: 'string', default: '2000' }, cpu: { type: 'string', default: '0' } } });
const rounds = Number(values.rounds);
const perRound = Number(values['per-round']);
const Block = 500;

const crd = (plural) => JSON.stringify({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `${plural}.bench.example.com` },
  spec: {
    group: 'bench.example.com', scope: 'Namespaced',
    names: { plural, kind: plural[0].toUpperCase() + plural.slice(1, -1) },
    versions: [{
      name: 'v1', served: true, storage: true, subresources: { status: {} },
      additionalPrinterColumns: [{ name: 'Image', type: 'string', jsonPath: '.spec.containers[0].image' }],
      schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: {
        containers: { type: 'array', items: { type: 'object', required: ['name'], properties: {
          name: { type: 'string' }, image: { type: 'string' },
          ports: { type: 'array', items: { type: 'object', properties: { containerPort: { type: 'integer', minimum: 1, maximum: 65535 } } } },
          env: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, value: { type: 'string' } } } },
        } } },
      } }, status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } },
    }],
  },
});

/** The Pod body, as a custom resource of the same size. */
const crBody = (name) => podBody(name).replace('"apiVersion":"v1","kind":"Pod"', '"apiVersion":"bench.example.com/v1","kind":"Widget"');


const dir = mkdtempSync(join(tmpdir(), 'crd-bench-'));
const cpu = canPin(values.cpu) ? values.cpu : undefined;
const server = await startServer({ storage: `sqlite:${join(dir, 'state.db')}`, dataDir: dir, cpu });
const call = httpClient(server.url, { token: server.token });
const pods = '/api/v1/namespaces/default/pods';
const widgets = '/apis/bench.example.com/v1/namespaces/default/widgets';
const results = { served: [], pod: { ms: 0, cpu: 0, n: 0 }, cr: { ms: 0, cpu: 0, n: 0 }, listCr: [], listPod: [] };

/** A fresh CRD: from its POST to the first 200 on its collection. */
const timeFirstServed = async (plural) => {
  const start = performance.now();
  const created = await call('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd(plural));
  if (created.status !== 201) throw new Error(`CRD create: ${created.status} ${created.body}`);
  while ((await call('GET', `/apis/bench.example.com/v1/namespaces/default/${plural}`)).status !== 200);
  return performance.now() - start;
};

const createBlock = async (kind, from) => {
  const before = cpuMs(server.child.pid);
  const ms = await inParallel(Block, 50, async (i) => {
    const name = `${kind}-${from + i}`;
    const r = await call('POST', kind === 'pod' ? pods : widgets, kind === 'pod' ? podBody(name) : crBody(name));
    if (r.status !== 201) throw new Error(`${kind} create: ${r.status} ${r.body}`);
  });
  const t = results[kind];
  t.ms += ms;
  t.cpu += cpuMs(server.child.pid) - before;
  t.n += Block;
};

const timeList = async (path, n) => {
  const start = performance.now();
  const r = await call('GET', path);
  const ms = performance.now() - start;
  if (JSON.parse(r.body).items.length !== n) throw new Error(`list of ${path}: not ${n} items`);
  return ms;
};

try {
  await timeFirstServed('widgets');
  for (let round = 0; round < rounds; round++) {
    results.served.push(await timeFirstServed(`gadget${round}s`));
    for (let b = 0; b < perRound / Block; b++) {
      const from = round * perRound + b * Block;
      for (const kind of b % 2 === 0 ? ['pod', 'cr'] : ['cr', 'pod']) await createBlock(kind, from);
    }
  }
  const total = rounds * perRound;
  for (let i = 0; i < 5; i++) {
    results.listCr.push(await timeList(widgets, total));
    results.listPod.push(await timeList(pods, total));
  }
  const rate = (t) => Math.round((t.n / t.ms) * 1000);
  const perCreate = (t) => Math.round((t.cpu * 1000) / t.n);
  console.log(`| measure | custom resource | built-in (Pod) | target |\n|---|---:|---:|---|`);
  console.log(`| CRD created → first served request (median of ${rounds}) | ${median(results.served).toFixed(0)} ms | | ≤ 1,000 ms |`);
  console.log(`| creates/s (${total} each, ~2 KiB, 50 in flight) | ${rate(results.cr)}/s | ${rate(results.pod)}/s | |`);
  console.log(`| server CPU per create | ${perCreate(results.cr)} µs | ${perCreate(results.pod)} µs | CR ≤ 1.5 × Pod (${(perCreate(results.cr) / perCreate(results.pod)).toFixed(2)} ×) |`);
  console.log(`| list of ${total} (median of 5) | ${median(results.listCr).toFixed(0)} ms | ${median(results.listPod).toFixed(0)} ms | CR ≤ 500 ms |`);
} finally {
  call.close();
  server.child.kill();
  rmSync(dir, { recursive: true, force: true });
}
