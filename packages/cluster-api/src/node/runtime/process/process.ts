/**
 * One container as a child process: spawned in a process group of its own (so a signal reaches
 * everything it started), stdout and stderr written to its CRI log, and its end reported as the
 * container runtime reports it (exit code, or 128 + the signal number). A guard preloaded before
 * the program ends it once its parent is gone (it was adopted by another process): when the agent
 * ends, even by SIGKILL, no container outlives it by more than a second. The guard's timer is
 * unref'd, so it never keeps a finished program alive.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { constants } from 'node:os';
import type { ContainerLog } from '../../logs/logs.js';

export interface LaunchSpec {
  /** Node.js's own arguments first (`node` is the executable), then the program and its arguments. */
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /** The container's `stdin: true`: its input is a pipe the agent keeps, for attach. */
  stdin?: boolean;
}

/** Where an attached client reads the container's output. */
export interface Watcher {
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
}

export interface Exit {
  exitCode: number;
  /** The signal that ended it, when one did. */
  signal?: number;
  finishedAt: number;
  /** The process could not be started at all (containerd's StartError). */
  startError?: string;
}

const guard = 'data:text/javascript,const p=process.ppid;setInterval(()=>{if(process.ppid!==p)process.kill(process.pid,"SIGKILL")},1000).unref();';

/** How long stdout/stderr may stay open after the process exits (a grandchild holding them). */
const StdioGraceMs = 2000;

export class ContainerProcess {
  readonly startedAt = Date.now();
  readonly exited: Promise<Exit>;
  private readonly child: ChildProcess;
  private readonly watchers = new Set<Watcher>();

  constructor(spec: LaunchSpec, log: ContainerLog) {
    this.child = spawn(process.execPath, ['--import', guard, ...spec.args], {
      env: spec.env,
      cwd: spec.cwd,
      detached: true,
      stdio: [spec.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    });
    this.child.stdin?.on('error', () => undefined);
    this.child.stdout!.on('data', (b: Buffer) => (log.write('stdout', b), this.watchers.forEach((w) => w.stdout?.write(b))));
    this.child.stderr!.on('data', (b: Buffer) => (log.write('stderr', b), this.watchers.forEach((w) => w.stderr?.write(b))));
    // The agent must never wait on a container to exit: its own event loop stays free of them.
    this.child.unref();
    this.exited = new Promise<Exit>((resolve) => {
      let exit: Exit | undefined;
      const finish = () => (log.close(), resolve(exit!));
      this.child.once('error', (err) => {
        exit = { exitCode: 128, finishedAt: Date.now(), startError: err.message };
        finish();
      });
      this.child.once('exit', (code, signal) => {
        const signo = signal ? constants.signals[signal] : undefined;
        exit = { exitCode: signo ? 128 + signo : (code ?? 0), signal: signo, finishedAt: Date.now() };
        const late = setTimeout(finish, StdioGraceMs);
        this.child.once('close', () => (clearTimeout(late), finish()));
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The container's input, when its spec asks for one (`stdin: true`) and it is still open. */
  get stdin(): NodeJS.WritableStream | undefined {
    const input = this.child.stdin;
    return input && !input.writableEnded && !input.destroyed ? input : undefined;
  }

  /** Copies what the process writes from now on to `watcher` (attach), until the returned function is called. */
  watch(watcher: Watcher): () => void {
    this.watchers.add(watcher);
    return () => void this.watchers.delete(watcher);
  }

  /** To the whole process group; a group already gone is no error. */
  kill(signal: NodeJS.Signals): void {
    if (!this.child.pid) return;
    try {
      process.kill(-this.child.pid, signal);
    } catch {
      try {
        this.child.kill(signal);
      } catch {
        /* already gone */
      }
    }
  }
}
