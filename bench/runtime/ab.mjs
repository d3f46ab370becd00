// `node bench/runtime/ab.mjs [options] NAME=COMMAND …`: server CPU per request of several server
// commands, for judging a change of a few per cent (a variant build, a floor with one more piece of
// work). All servers run at once, each under its own load, and take turns on one core in 100 ms
// slices (slices.mjs), so that each repetition measures every server over the same seconds; the
// first server is the reference, and each other gets the median of its per-repetition ratios to it.
// Servers are pinned to core 0, the load generator (wrk, with the bench's scenarios) to core 1,
// 127.0.0.1 only. In COMMAND, PORT is replaced by the server's port; each server must answer the
// scenario (a server's own argument names it, as in bench/runtime/functions/node-http/server.mjs).
//
//   node bench/runtime/ab.mjs --repeats 5 --seconds 20 \
//     "floor=node bench/runtime/functions/node-http/server.mjs hello PORT" \
//     "ours=node packages/runtime/dist/cli.js bench/runtime/functions/knative/hello.mjs --port PORT" \
//     "ours-again=node packages/runtime/dist/cli.js bench/runtime/functions/knative/hello.mjs --port PORT"
//
// Options: --sets N of fresh server processes (1; two processes of one build differ by a few per
// cent, so a change that small needs several), --repeats N per set (5), --seconds S of slices per
// repetition (20), --warmup S per server (2),
// --connections N (50), --scenario hello|echo|cloudevent (hello): the request, as in `npm run bench`.
// Naming the same command twice shows the spread between two processes of one build.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { bodyFileFor, runLoad, wrkAvailable } from './load.mjs';
import { positiveInt } from './options.mjs';
import { freePort, installCleanup, pinSelf, SERVER_CPU, spawnPinned, stop, waitForReply } from './procs.mjs';
import { requestOf, scenarios } from './scenarios.mjs';
import { measureInSlices, SLICE_MS } from './slices.mjs';
import { median } from '../lib/stats.mjs';

/** One set of fresh server processes: started, warmed up, `repeats` measurements in slices, stopped. */
async function measureSet(specs, scenario, o, ctx) {
  const servers = [];
  for (const { name, command } of specs) {
    const port = await freePort();
    const args = command.replaceAll('PORT', String(port)).split(' ').slice(1);
    servers.push({ fw: { id: name }, port, child: spawnPinned(SERVER_CPU, args), us: [] });
  }
  try {
    for (const s of servers) {
      const ready = await waitForReply(s.child, s.port, requestOf(scenario), 15_000);
      if (!ready.ok) throw new Error(`${s.fw.id} did not start: ${ready.reason}`);
      const warm = await runLoad('wrk', { port: s.port, scenario, bodyFile: ctx.bodyFiles[scenario.id], connections: o.connections, seconds: o.warmup });
      if (warm.errors > 0 || warm.non2xx > 0) throw new Error(`${s.fw.id}: ${warm.errors} socket errors, ${warm.non2xx} non-2xx replies in the warm-up`);
    }
    for (let r = 0; r < o.repeats; r++) {
      const cpu = await measureInSlices(servers, scenario, { seconds: o.seconds, connections: o.connections }, ctx);
      for (const s of servers) {
        const m = cpu.get(s.fw.id);
        if (m.error) throw new Error(`${s.fw.id}: ${m.error}`);
        s.us.push(m.us);
      }
      process.stderr.write('.');
    }
  } finally {
    await Promise.all(servers.map((s) => stop(s.child)));
  }
  return servers;
}

async function main() {
  const { values: v, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      sets: { type: 'string', default: '1' },
      repeats: { type: 'string', default: '5' },
      seconds: { type: 'string', default: '20' },
      warmup: { type: 'string', default: '2' },
      connections: { type: 'string', default: '50' },
      scenario: { type: 'string', default: 'hello' },
    },
  });
  const scenario = scenarios.find((x) => x.id === v.scenario);
  if (!scenario) throw new Error(`--scenario: unknown "${v.scenario}"; known: ${scenarios.map((x) => x.id).join(', ')}`);
  if (!wrkAvailable()) throw new Error('wrk is not installed (apt-get install wrk)');
  const tmp = mkdtempSync(join(tmpdir(), 'func-ab-'));
  process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
  const o = { sets: positiveInt('sets', v.sets), repeats: positiveInt('repeats', v.repeats), seconds: positiveInt('seconds', v.seconds), warmup: positiveInt('warmup', v.warmup), connections: positiveInt('connections', v.connections) };
  if (positionals.length < 2 || positionals.some((p) => !p.includes('='))) throw new Error('give at least two NAME=COMMAND arguments (see the header of this file)');
  installCleanup();
  pinSelf();
  const ctx = { bodyFiles: { [scenario.id]: bodyFileFor(tmp, scenario) } };
  const specs = positionals.map((spec) => {
    const at = spec.indexOf('=');
    const command = spec.slice(at + 1);
    if (!command.startsWith('node ')) throw new Error(`${spec}: the command must start with "node"`);
    return { name: spec.slice(0, at), command };
  });
  const us = new Map(specs.map((x) => [x.name, []]));
  for (let set = 0; set < o.sets; set++) {
    for (const r of await measureSet(specs, scenario, o, ctx)) us.get(r.fw.id).push(...r.us);
    process.stderr.write(` set ${set + 1} done\n`);
  }
  const servers = specs.map((x) => ({ fw: { id: x.name }, us: us.get(x.name) }));
  const ref = servers[0];
  const lines = ['| server | CPU per request, µs | × first (median of the repetitions\' ratios) | ratios, lowest–highest |', '|---|--:|--:|--:|'];
  for (const s of servers) {
    const ratios = s.us.map((us, i) => us / ref.us[i]);
    lines.push(`| ${s.fw.id} | ${median(s.us).toFixed(2)} | ${median(ratios).toFixed(3)} | ${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)} |`);
  }
  process.stdout.write(`${scenario.label}: ${o.sets} set(s) of fresh server processes, ${o.repeats} repetitions each of ${o.seconds} s in which the servers take turns in ${SLICE_MS} ms slices, each under its own load (wrk, ${o.connections} connections), after ${o.warmup} s of warm-up per server; medians.\n\n${lines.join('\n')}\n`);
}

main().catch((err) => {
  process.stderr.write(`ab: ${err.message}\n`);
  process.exit(1);
});
