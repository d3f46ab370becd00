// `node bench/runtime/ab.mjs [options] NAME=COMMAND …`: server CPU per request of several server
// commands in many short interleaved rounds, for judging a change of a few per cent (a variant
// build, a floor with one more piece of work). The first server is the reference: besides the
// median CPU per request, each server gets the median of its per-round ratios to the reference's
// round just before it (paired, so that the machine's drift cancels). Servers are pinned to core 0,
// the load generator (the bench's, with the bench's scenarios) to core 1, 127.0.0.1 only. In COMMAND,
// PORT is replaced by the server's port; each server must answer the scenario (a server's own
// argument names it, as in bench/runtime/functions/node-http/server.mjs).
//
//   node bench/runtime/ab.mjs --rounds 25 --seconds 1 \
//     "floor=node bench/runtime/functions/node-http/server.mjs hello PORT" \
//     "ours=node packages/runtime/dist/cli.js bench/runtime/functions/knative/hello.mjs --port PORT" \
//     "ours-again=node packages/runtime/dist/cli.js bench/runtime/functions/knative/hello.mjs --port PORT"
//
// Options: --rounds N (25), --seconds S per round (1), --warmup S per server (2), --connections N (50),
// --scenario hello|echo|cloudevent (hello): the request, as in `npm run bench`.
// Naming the same command twice shows the spread between two processes of one build.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { bodyFileFor, runLoad, wrkAvailable } from './load.mjs';
import { positiveInt } from './options.mjs';
import { requestOf, scenarios } from './scenarios.mjs';
import { median } from './stats.mjs';
import { cpuSeconds, freePort, installCleanup, SERVER_CPU, spawnPinned, stop, waitForReply } from './procs.mjs';

/** CPU seconds of a server so far: all its threads, and its main thread alone. */
function cpuOf(pid) {
  return { all: cpuSeconds(pid), main: cpuSeconds(pid, pid) };
}

/** Requests served in one round of the scenario's load (the bench's own load generator). */
async function load(port, seconds, o) {
  const r = await runLoad(o.loader, { port, scenario: o.scenario, bodyFile: o.bodyFile, connections: o.connections, seconds });
  if (r.errors > 0 || r.non2xx > 0) throw new Error(`port ${port}: ${r.errors} socket errors, ${r.non2xx} non-2xx replies in a round`);
  return r.requests;
}

async function main() {
  const { values: v, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      rounds: { type: 'string', default: '25' },
      seconds: { type: 'string', default: '1' },
      warmup: { type: 'string', default: '2' },
      connections: { type: 'string', default: '50' },
      scenario: { type: 'string', default: 'hello' },
    },
  });
  const scenario = scenarios.find((x) => x.id === v.scenario);
  if (!scenario) throw new Error(`--scenario: unknown "${v.scenario}"; known: ${scenarios.map((x) => x.id).join(', ')}`);
  const tmp = mkdtempSync(join(tmpdir(), 'func-ab-'));
  process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
  const o = { rounds: positiveInt('rounds', v.rounds), seconds: positiveInt('seconds', v.seconds), warmup: positiveInt('warmup', v.warmup), connections: positiveInt('connections', v.connections), scenario, bodyFile: bodyFileFor(tmp, scenario), loader: wrkAvailable() ? 'wrk' : 'autocannon' };
  if (positionals.length < 2 || positionals.some((p) => !p.includes('='))) throw new Error('give at least two NAME=COMMAND arguments (see the header of this file)');
  installCleanup();
  const servers = [];
  for (const spec of positionals) {
    const port = await freePort();
    const at = spec.indexOf('=');
    const [cmd, ...args] = spec.slice(at + 1).replaceAll('PORT', String(port)).split(' ');
    if (cmd !== 'node') throw new Error(`${spec}: the command must start with "node"`);
    const child = spawnPinned(SERVER_CPU, args);
    servers.push({ name: spec.slice(0, at), port, child, rounds: [] });
  }
  try {
    for (const s of servers) {
      const ready = await waitForReply(s.child, s.port, requestOf(scenario), 15_000);
      if (!ready.ok) throw new Error(`${s.name} did not start: ${ready.reason}`);
    }
    for (const s of servers) await load(s.port, o.warmup, o);
    for (let r = 0; r < o.rounds; r++) {
      for (const s of servers) {
        const before = cpuOf(s.child.pid);
        const requests = await load(s.port, o.seconds, o);
        const after = cpuOf(s.child.pid);
        s.rounds.push({ us: ((after.all - before.all) * 1e6) / requests, otherUs: ((after.all - before.all - (after.main - before.main)) * 1e6) / requests });
      }
      process.stderr.write('.');
    }
    process.stderr.write('\n');
  } finally {
    await Promise.all(servers.map((s) => stop(s.child)));
  }
  const ref = servers[0];
  const lines = ['| server | CPU per request, µs | × first | paired × first | other threads, µs |', '|---|--:|--:|--:|--:|'];
  for (const s of servers) {
    const us = median(s.rounds.map((x) => x.us));
    const paired = median(s.rounds.map((x, i) => x.us / ref.rounds[i].us));
    lines.push(`| ${s.name} | ${us.toFixed(2)} | ${(us / median(ref.rounds.map((x) => x.us))).toFixed(3)} | ${paired.toFixed(3)} | ${median(s.rounds.map((x) => x.otherUs)).toFixed(2)} |`);
  }
  process.stdout.write(`${scenario.label}: ${o.rounds} interleaved rounds of ${o.seconds} s (${o.loader}), ${o.connections} connections, after ${o.warmup} s of warm-up per server; medians.\n\n${lines.join('\n')}\n`);
}

main().catch((err) => {
  process.stderr.write(`ab: ${err.message}\n`);
  process.exit(1);
});
