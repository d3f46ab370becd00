// Starting one framework for one scenario and checking its reply before any load reaches it.
import { join } from 'node:path';
import { repoRoot, serverEnv } from './frameworks.mjs';
import { request } from './http.mjs';
import { SERVER_CPU, freePort, logTail, spawnPinned, stop, waitForReply } from './procs.mjs';
import { requestOf } from './scenarios.mjs';

const START_TIMEOUT_MS = 15000;

/**
 * `nodeFlags` go before the script (e.g. --cpu-prof).
 * @returns {Promise<{ok: true, child: any, port: number, logFile: string} | {ok: false, reason: string}>}
 */
export async function startServer(fw, scenario, logDir, nodeFlags = []) {
  const missing = fw.missing();
  if (missing) return { ok: false, reason: missing };
  const port = await freePort();
  const logFile = join(logDir, `${fw.id}-${scenario.id}.log`);
  const args = [...nodeFlags, ...(fw.nodeFlags ?? []), ...fw.args(scenario.base ?? scenario.id, port)];
  const child = spawnPinned(SERVER_CPU, args, { env: serverEnv(), cwd: repoRoot, logFile });
  const ready = await waitForReply(child, port, requestOf(scenario), START_TIMEOUT_MS);
  if (!ready.ok) {
    await stop(child);
    return { ok: false, reason: withLog(`failed to start: ${ready.reason}`, logFile) };
  }
  const problems = await verify(fw, scenario, port);
  if (problems.length > 0) {
    await stop(child);
    return { ok: false, reason: withLog(`wrong reply: ${problems.join('; ')}`, logFile) };
  }
  return { ok: true, child, port, logFile };
}

/** One fresh request, checked against the scenario's expectations; returns what is wrong. */
export async function verify(fw, scenario, port) {
  try {
    const res = await request(port, requestOf(scenario));
    return scenario.verify(res, fw);
  } catch (err) {
    return [`request failed: ${err.message}`];
  }
}

function withLog(reason, logFile) {
  const tail = logTail(logFile, 300).split('\n').filter(Boolean).slice(-3).join(' | ');
  return tail ? `${reason} — log: ${tail}` : reason;
}
