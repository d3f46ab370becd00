// Server CPU per request, every server of a set measured over the same stretch of time. Each server
// has its own load (wrk, on the load core) for the whole measurement; the servers take turns on
// their core in short slices (the others paused with SIGSTOP), round and round, so each sees the
// machine as it was during the same few seconds. On a shared host the CPU one request costs moves
// by tens of per cent from one second to the next (other tenants' work on the same physical cores),
// which rounds of several seconds run one after another do not cancel; slices of 100 ms do.
//
// Requests are counted by each server's load generator; every server is paused before the first
// CPU reading and after the last, so requests and CPU cover the same slices. Latency is not measured
// here (a paused server's requests wait): req/s and p99 come from the rounds (throughput.mjs).
import { startOpenLoad } from './load.mjs';
import { cpuSeconds } from './procs.mjs';

export const SLICE_MS = 100;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function pause(child, paused) {
  try {
    child.kill(paused ? 'SIGSTOP' : 'SIGCONT');
  } catch {
    // gone: the round's check reports it
  }
}

/**
 * CPU µs per request of each server in `servers` ({fw, child, port}), over `seconds` of slices.
 * @returns {Promise<Map<string, {us: number, requests: number} | {error: string}>>}
 */
export async function measureInSlices(servers, scenario, { seconds, connections }, ctx) {
  const out = new Map();
  for (const s of servers) pause(s.child, true);
  const loads = [];
  try {
    for (const s of servers) loads.push(startOpenLoad({ port: s.port, scenario, bodyFile: ctx.bodyFiles[scenario.id], connections, timeoutSeconds: 30 }));
    await sleep(300); // connections open while every server is paused: none is answered yet
    const cpu0 = servers.map((s) => cpuSeconds(s.child.pid));
    const turns = Math.max(1, Math.round((seconds * 1000) / SLICE_MS / servers.length)) * servers.length;
    for (let t = 0; t < turns; t++) {
      const s = servers[t % servers.length];
      pause(s.child, false);
      await sleep(SLICE_MS);
      pause(s.child, true);
    }
    const cpu1 = servers.map((s) => cpuSeconds(s.child.pid));
    const reports = await Promise.allSettled(loads.map((l) => l.stop()));
    servers.forEach((s, i) => {
      const r = reports[i];
      if (r.status === 'rejected') out.set(s.fw.id, { error: r.reason.message });
      else if (r.value.requests === 0) out.set(s.fw.id, { error: 'no request answered during the slices' });
      else out.set(s.fw.id, { us: ((cpu1[i] - cpu0[i]) * 1e6) / r.value.requests, requests: r.value.requests });
    });
  } finally {
    for (const s of servers) pause(s.child, false);
    await Promise.allSettled(loads.map((l) => l.stop()));
  }
  return out;
}
