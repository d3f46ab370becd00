/**
 * `cluster-api serve` processes for the multi-server and fault tests (and the etcd bench): each one
 * is the built dist/cli.js on a free loopback port with plain HTTP, its own data dir, and the given
 * `--storage`. Killed on `stop()` and, as a last resort, when this process exits.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The built command, as users run it; testing/src/ (vitest) and testing/dist/ (benches) both sit
// two levels below the package root.
const cli = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

export interface ApiServerProcess {
  readonly url: string;
  readonly token: string;
  readonly child: ChildProcess;
  readonly dataDir: string;
  /** stderr so far (JSON log lines), for failure messages. */
  stderr(): string;
  /** fetch with the admin token; JSON bodies are serialized. */
  request(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }>;
  /** SIGKILL, resolved once the process is gone. */
  kill(): Promise<void>;
  /** SIGTERM (SIGKILL after 5 s) and delete the data dir. */
  stop(): Promise<void>;
}

const live = new Set<ChildProcess>();
let hooked = false;

/** `dataDir`: the caller's (kept when the server stops), as one machine's servers share their certificates; default a new one. */
export async function startApiServer(storage: string, extraArgs: readonly string[] = [], shared?: { dataDir: string }): Promise<ApiServerProcess> {
  if (!hooked) {
    hooked = true;
    process.once('exit', () => live.forEach((c) => c.kill('SIGKILL')));
  }
  const dataDir = shared?.dataDir ?? mkdtempSync(join(tmpdir(), 'cluster-api-proc-'));
  const removeDataDir = () => shared || rmSync(dataDir, { recursive: true, force: true });
  // API servers only: no embedded node agent or scheduler writing pods and nodes under the tests.
  const args = [cli, 'serve', '--port', '0', '--insecure-http', '--disable-agent', '--disable-scheduler', '--data-dir', dataDir, '--storage', storage, ...extraArgs];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  live.add(child);
  let err = '';
  const exited = new Promise<void>((r) => child.once('exit', () => (live.delete(child), r())));
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /"msg":"listening","url":"([^"]+)"/.exec(err);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => {
      removeDataDir();
      reject(new Error(`cluster-api serve exited ${code}: ${err}`));
    });
  });
  const token = readFileSync(join(dataDir, 'admin.token'), 'utf8').trim();
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  return {
    url,
    token,
    child,
    dataDir,
    stderr: () => err,
    async request(method, path, body) {
      const res = await fetch(url + path, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = text;
      }
      return { status: res.status, json };
    },
    async kill() {
      if (!gone()) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (!gone()) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
      removeDataDir();
    },
  };
}

export interface WatchStream {
  /** Every event object received so far ({type, object}). */
  readonly events: any[];
  /** Set when the stream ended (server closed it or an error Status arrived). */
  ended: boolean;
  close(): void;
}

/** Opens a watch (`?watch=1…`) and collects its JSON lines until closed. */
export async function openWatch(server: Pick<ApiServerProcess, 'url' | 'token'>, path: string): Promise<WatchStream> {
  const ctl = new AbortController();
  const res = await fetch(server.url + path, { headers: { authorization: `Bearer ${server.token}` }, signal: ctl.signal });
  if (res.status !== 200) throw new Error(`watch ${path}: ${res.status} ${await res.text()}`);
  const stream: WatchStream = { events: [], ended: false, close: () => ctl.abort() };
  const decoder = new TextDecoder();
  let buf = '';
  void (async () => {
    try {
      for await (const chunk of res.body!) {
        buf += decoder.decode(chunk as Uint8Array, { stream: true });
        for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (line) stream.events.push(JSON.parse(line));
        }
      }
    } catch {
      // Aborted or cut: `ended` says so.
    }
    stream.ended = true;
  })();
  return stream;
}
