/**
 * runc, driven as CRI-O drives it: each container is created by its own conmon (`conmon -r runc`),
 * which runs `runc create`, then stays as the container's parent, detached from the agent (it
 * survives an agent restart): it writes the container's stdout and stderr to its CRI log file
 * (`k8s-file`, the `<time> stdout|stderr F|P <text>` format) and its exit code (128 + signal when
 * killed) to `<exits>/<id>`. conmon tells its caller the container's pid, or runc's error, on the
 * sync pipe (fd 3: `{"data": pid}`, or a negative data and a message). The agent then starts,
 * signals, deletes and execs through runc with this node's own `--root`.
 */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface RuncOptions {
  runc: string;
  conmon: string;
  /** runc's state directory for this node's containers. */
  root: string;
  /** Where conmon writes exit codes. */
  exits: string;
  /** conmon's attach sockets. */
  sockets: string;
}

/** runc's or conmon's error, with runc's own message when it gave one. */
export class RuncError extends Error {
  override readonly name = 'RuncError';
}

const runcMessage = (text: string): string => {
  const m = /msg="([^"]*)"/.exec(text) ?? /level=error msg=(.*)/.exec(text);
  return (m?.[1] ?? text).replace(/\\"/g, '"').trim();
};

export class Runc {
  constructor(readonly opts: RuncOptions) {}

  async runc(args: string[], timeoutMs = 30_000): Promise<string> {
    try {
      const { stdout } = await run(this.opts.runc, ['--root', this.opts.root, ...args], { timeout: timeoutMs, maxBuffer: 16 << 20 });
      return stdout;
    } catch (err) {
      const e = err as { stderr?: string; message: string };
      throw new RuncError(runcMessage(e.stderr || e.message));
    }
  }

  /** Creates the container (not yet started) under a conmon of its own: its pid. */
  create(id: string, bundle: string, logPath: string, pidFile: string): Promise<number> {
    const args = [
      '--api-version', '1', '-c', id, '-u', id, '-n', id, '-r', this.opts.runc, '-b', bundle, '-p', pidFile,
      '-l', `k8s-file:${logPath}`, '--exit-dir', this.opts.exits, '--socket-dir-path', this.opts.sockets,
      '--log-level', 'error', '--runtime-arg', '--root', '--runtime-arg', this.opts.root, '--syslog',
    ];
    return new Promise((resolve, reject) => {
      const child = spawn(this.opts.conmon, args, { stdio: ['ignore', 'ignore', 'pipe', 'pipe'], env: { ...process.env, _OCI_SYNCPIPE: '3' }, detached: true });
      const pipe = child.stdio[3] as NodeJS.ReadableStream & { destroy(): void };
      const err: Buffer[] = [];
      let text = '';
      let settled = false;
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        // conmon keeps the pipe open for the container's life: the first answer is the one.
        pipe.destroy();
        fn();
      };
      pipe.on('data', (b: Buffer) => {
        text += b.toString();
        for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n')) {
          const line = text.slice(0, nl);
          text = text.slice(nl + 1);
          let msg: { data?: number; message?: string };
          try {
            msg = JSON.parse(line);
          } catch {
            continue;
          }
          if (typeof msg.data !== 'number') continue;
          const pid = msg.data;
          if (pid > 0) settle(() => resolve(pid));
          else settle(() => reject(new RuncError(runcMessage(msg.message ?? 'runc create failed'))));
        }
      });
      child.stderr!.on('data', (b: Buffer) => err.push(b));
      child.once('error', (e) => settle(() => reject(new RuncError(`conmon: ${e.message}`))));
      pipe.once('close', () => settle(() => reject(new RuncError(runcMessage(Buffer.concat(err).toString() || 'conmon gave no container pid')))));
      child.unref();
    });
  }

  start(id: string): Promise<string> {
    return this.runc(['start', id]);
  }

  /** A signal to the container's init; a container already stopped is no error. */
  async kill(id: string, signal: 'TERM' | 'KILL'): Promise<void> {
    await this.runc(['kill', id, signal]).catch((err: Error) => {
      if (!/not running|container not running|does not exist|process already finished/.test(err.message)) throw err;
    });
  }

  async delete(id: string): Promise<void> {
    await this.runc(['delete', '--force', id]).catch((err: Error) => {
      if (!/does not exist/.test(err.message)) throw err;
    });
  }

  /** The containers runc knows under this node's root, with their state (`created`, `running`, `stopped`, `paused`). */
  async list(): Promise<Map<string, string>> {
    const out = await this.runc(['list', '--format', 'json']).catch(() => 'null');
    let listed: { id?: string; status?: string }[] | null = null;
    try {
      listed = JSON.parse(out || 'null');
    } catch {
      /* nothing readable: nothing listed */
    }
    return new Map((listed ?? []).filter((c) => c.id).map((c) => [c.id!, c.status ?? 'unknown']));
  }
}
