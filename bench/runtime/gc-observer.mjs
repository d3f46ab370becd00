// Preloaded into a server by gc-contention.mjs (node --import): records every garbage-collection
// pause, and on SIGUSR2 writes their count and percentiles by kind to $GC_PAUSES_FILE, then starts over.
import { writeFileSync } from 'node:fs';
import { PerformanceObserver, constants } from 'node:perf_hooks';

const KINDS = { [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor', [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major', [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental', [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb' };
let pauses = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) pauses.push({ kind: KINDS[e.detail?.kind] ?? 'other', ms: e.duration });
}).observe({ entryTypes: ['gc'] });

function summary(list) {
  const ms = list.map((p) => p.ms).sort((a, b) => a - b);
  const at = (q) => ms[Math.min(ms.length - 1, Math.floor(ms.length * q))];
  return { count: ms.length, p50: at(0.5), p99: at(0.99), max: ms[ms.length - 1], totalMs: ms.reduce((a, b) => a + b, 0) };
}

process.on('SIGUSR2', () => {
  const minor = pauses.filter((p) => p.kind === 'minor');
  writeFileSync(process.env.GC_PAUSES_FILE, JSON.stringify({ minor: minor.length ? summary(minor) : null, all: pauses.length ? summary(pauses) : null }));
  pauses = [];
});
