// The markdown table: one column per framework, ratios against faas-js-runtime, and a numbered note
// for every cell that has no number (a server that failed to start or answered wrongly).
import { FLOOR, REFERENCE, SAME_HEADERS_FLOOR } from './frameworks.mjs';
import { SLICE_MS } from './slices.mjs';
import { median } from '../lib/stats.mjs';

const int = (n) => Math.round(n).toLocaleString('en-US');
const ms = (n) => (n < 10 ? n.toFixed(2) : n.toFixed(1));
const mib = (kib) => (kib / 1024).toFixed(1);

/** One cell per framework for a metric; failures become references to numbered notes. */
function row(label, fws, get, notes, { format, ratio = false, ratioTo = REFERENCE }) {
  const ref = get(ratioTo);
  const cells = fws.map((fw) => {
    const r = get(fw.id);
    if (!r) return '–';
    if (!r.ok) return `n/a (note ${notes.add(`${fw.label}: ${r.reason}`)})`;
    let cell = format(r.value) + (r.suffix ?? '');
    if (ratio && ref?.ok && ref.value > 0) cell += ` (${(r.value / ref.value).toFixed(2)}×)`;
    for (const flag of r.flags ?? []) cell += ` (note ${notes.add(flag)})`;
    return cell;
  });
  return `| ${label} | ${cells.join(' | ')} |`;
}

class Notes {
  items = [];
  add(text) {
    const i = this.items.indexOf(text);
    if (i >= 0) return i + 1;
    this.items.push(text);
    return this.items.length;
  }
}

function throughputFlags(fw, scenario, r) {
  const flags = [];
  if (scenario.id === 'cloudevent' && fw.answersEvents === false)
    flags.push(`${fw.label} cannot reply with a CloudEvent: its CloudEvent function answers 204 with no body, so its row does less work`);
  if (r.non2xx > 0) flags.push(`${fw.label}, ${scenario.label}: ${int(r.non2xx)} non-2xx replies during the measured rounds`);
  if (r.errors > 0) flags.push(`${fw.label}, ${scenario.label}: ${int(r.errors)} socket errors during the measured rounds`);
  if (r.timeouts > 0)
    flags.push(`${fw.label}, ${scenario.label}: ${int(r.timeouts)} requests unanswered within the load generator's timeout (2 s for wrk) during the measured rounds`);
  return flags;
}

const us = (n) => n.toFixed(1);

/**
 * The CPU one request costs the server and its ratio to the floor's. Measured in slices
 * (slices.mjs), every server of a process set over the same seconds: the median over the sets, and
 * the median of the per-set ratios to the floor (paired: same set, same seconds). Without slices
 * (autocannon, or --cpu-seconds 0), from the rounds: the median of the rounds, and the median of
 * the per-round ratios to the floor's round of the same interleaved pass.
 */
function cpuPerRequest(result, floors) {
  if (!result) return undefined;
  if (!result.ok) return { ok: false, reason: result.reason };
  if (result.cpuUs !== undefined) return { ok: true, value: result.cpuUs, suffix: ratiosSuffix(floors, (floor) => pairedRatio(result, floor)) };
  const value = 1e6 / result.reqPerCpuS;
  return { ok: true, value, suffix: ratiosSuffix(floors, (floor) => roundRatio(result, floor)) };
}

/** The median of the per-set ratios to a floor measured in slices, or undefined. */
function pairedRatio(result, floor) {
  if (!floor?.ok || floor.cpuUs === undefined) return undefined;
  const bySet = new Map(floor.slices.map((x) => [x.set, x.us]));
  const ratios = result.slices.filter((x) => bySet.has(x.set)).map((x) => x.us / bySet.get(x.set));
  return ratios.length > 0 ? median(ratios) : undefined;
}

/** The median of the per-round ratios to a floor's round of the same interleaved pass, or undefined. */
function roundRatio(result, floor) {
  if (!floor?.ok || floor.rounds.length !== result.rounds.length) return undefined;
  return median(result.rounds.map((r, i) => floor.rounds[i].reqPerCpuS / r.reqPerCpuS));
}

/**
 * " (1.05× / 1.01×)": the ratio to each floor that ran, in order, "–" where one has none (it
 * failed), so each ratio stays under its label; "" when no floor ran.
 */
function ratiosSuffix(floors, ratioTo, digits = 2) {
  const ran = floors.filter((floor) => floor !== undefined);
  if (ran.length === 0) return '';
  return ` (${ran.map((floor) => { const r = ratioTo(floor); return r === undefined ? '–' : `${r.toFixed(digits)}×`; }).join(' / ')})`;
}

/** Main-thread instructions per request under callgrind (instructions.mjs), and the ratio to the floor's. */
function instructionsPerRequest(result, floors) {
  if (!result) return undefined;
  if (!result.ok) return { ok: false, reason: result.reason };
  return { ok: true, value: result.perRequest, suffix: ratiosSuffix(floors, (floor) => (floor?.ok ? result.perRequest / floor.perRequest : undefined), 3) };
}

function pick(result, key, flags) {
  if (!result) return undefined;
  return result.ok ? { ok: true, value: result[key], flags } : { ok: false, reason: result.reason };
}

/** RSS per scenario in one cell; a scenario whose server failed shows "–" (its reason is noted above). */
function rssCell(run, fwId, scenarios) {
  const parts = scenarios.map((s) => run.throughput[s.id]?.[fwId]);
  if (!parts.some(Boolean)) return undefined;
  return { ok: true, value: parts.map((p) => (p?.ok ? mib(p.rssKiB) : '–')).join(' / ') };
}

export function renderTable(run, fws, scenarios) {
  const notes = new Notes();
  const floorsLabel = [[FLOOR, '× node:http'], [SAME_HEADERS_FLOOR, '× node:http with the same headers']]
    .filter(([id]) => fws.some((f) => f.id === id)).map(([, label]) => label).join(' / ') || '× node:http';
  const lines = [`| | ${fws.map((f) => f.label).join(' | ')} |`, `|---|${fws.map(() => '--:|').join('')}`];
  for (const s of scenarios) {
    const res = run.throughput[s.id] ?? {};
    const fwOf = (id) => fws.find((f) => f.id === id);
    lines.push(row(`${s.label}, req/s`, fws, (id) => pick(res[id], 'rps', res[id]?.ok ? throughputFlags(fwOf(id), s, res[id]) : []), notes, { format: int, ratio: true }));
    lines.push(row(`${s.label}, p99 ms`, fws, (id) => pick(res[id], 'p99Ms', []), notes, { format: ms, ratio: true }));
    lines.push(row(`${s.label}, server CPU per request, µs (${floorsLabel})`, fws, (id) => cpuPerRequest(res[id], [res[FLOOR], res[SAME_HEADERS_FLOOR]]), notes, { format: us }));
    const counted = run.instructions?.[s.id];
    if (counted) lines.push(row(`${s.label}, main-thread instructions per request (${floorsLabel})`, fws, (id) => instructionsPerRequest(counted[id], [counted[FLOOR], counted[SAME_HEADERS_FLOOR]]), notes, { format: int }));
  }
  if (run.cold) {
    lines.push(row('cold start, spawn → first 200, median ms', fws, (id) => pick(run.cold[id], 'medianMs', []), notes, { format: ms, ratio: true }));
    lines.push(row('cold start, server CPU time to first 200, median ms', fws, (id) => pick(run.cold[id], 'cpuMs', []), notes, { format: int, ratio: true }));
  }
  const rssLabel = `RSS after warm-up, MiB (${scenarios.map((s) => s.id).join(' / ')})`;
  lines.push(row(rssLabel, fws, (id) => rssCell(run, id, scenarios), notes, { format: String }));
  const noteLines = notes.items.map((t, i) => `${i + 1}. ${t}`);
  return [...lines, ...(noteLines.length ? ['', 'Notes:', '', ...noteLines] : [])].join('\n');
}

/** The server's share of its core during the rounds: well under 100 % means something else ran there. */
function busyRange(run) {
  const all = Object.values(run.throughput).flatMap((byFw) => Object.values(byFw).filter((r) => r.ok).map((r) => r.busy));
  if (all.length === 0) return 'n/a';
  return `${Math.round(Math.min(...all) * 100)}–${Math.round(Math.max(...all) * 100)} %`;
}

function cpuMethod(o) {
  if (o.cpuSeconds > 0 && o.loader === 'wrk')
    return `Server CPU per request: after the rounds of each process set, ${o.cpuSeconds} s in which the servers take turns in ${SLICE_MS} ms slices, each under its own load (slices.mjs); × node:http is the median of the per-set ratios.`;
  return 'Server CPU per request from the rounds; × node:http is the median of the per-round ratios.';
}

export function renderReport(run, fws, scenarios) {
  const m = run.machine;
  const o = run.options;
  return [
    `### Function runtime: side by side (${run.date})`,
    '',
    `Machine: ${m.cpuModel}, ${m.cores} cores, ${m.memGiB} GiB RAM, Linux ${m.kernel}, Node ${m.node}; ` +
      `load average ${run.loadBefore} before, ${run.loadAfter} after; the server's CPU share of its core ` +
      `during the rounds was ${busyRange(run)} (median per framework and scenario).`,
    `Load: ${run.loaderVersion}, ${o.connections} connections, ${o.rounds} interleaved rounds of ${o.duration} s ` +
      `${(o.processes ?? 1) > 1 ? `over ${Math.min(o.processes, o.rounds)} fresh sets of server processes, each ` : ''}` +
      `after a ${o.warmup} s warm-up per server${o.prime > 0 ? `, each round after ${o.prime} s of discarded load on its server` : ''}; medians. ${cpuMethod(o)} Servers pinned to core 0, load generator to core 1. ` +
      `${o.coldStarts > 0 ? `Cold start: median of ${o.coldStarts} runs. ` : ''}func-runtime: commit ${run.runtimeCommit}, build of ${run.runtimeBuiltAt ?? 'n/a'} (copied before the run)` +
      `${run.baseline ? `; func-runtime (before): ${run.baseline}` : ''}.` +
      `${o.contended ? ' "core shared": another process busy on the server\'s core for the whole scenario.' : ''}`,
    ...(run.instructions ? [`Instructions: callgrind, main thread only, ${o.instructionRequests} requests one after another on one connection after ${o.instructionWarmup}, V8's young generation fixed at 16 MiB (bench/runtime/instructions.mjs).`] : []),
    `Command: \`${run.command}\``,
    '',
    renderTable(run, fws, scenarios),
    '',
  ].join('\n');
}
