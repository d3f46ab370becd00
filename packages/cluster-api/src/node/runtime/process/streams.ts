/**
 * exec and attach for containers that are processes (the CRI's Exec and Attach). exec runs the
 * command on the node as the container's process runs: its environment (PATH, HOSTNAME, the pod's
 * variables), its working directory, the same user, a process group of its own; so `sh`, `tar`
 * (`kubectl cp`) and the like are the node's. A `tty` request runs the command on a pseudo-terminal
 * made by util-linux's `script` when the node has it (Node.js has none without a native addon): the
 * program sees a terminal, input is echoed and lines end in CRLF, as on a kubelet; the client's
 * terminal sizes are the pty's (terminal.ts). Without `script` the command runs on
 * pipes, stderr merged into the one output stream as a terminal merges them. attach copies the running
 * process's output from then on, and writes the client's input to the process's stdin when the
 * container has one (`stdin: true`), closing it after the first client when `stdinOnce` is set.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { clientGone, type StreamOptions } from '../cri.js';
import { drain, firstSize, followSizes, onTerminal, script } from '../terminal.js';
import type { ContainerProcess, LaunchSpec } from './process.js';

/** A command that could not start, worded as runc words it (the client sees it on the error stream). */
export class ExecStartError extends Error {
  override readonly name = 'ExecStartError';
}


export async function execInContainer(spec: LaunchSpec, cmd: readonly string[], streams: StreamOptions): Promise<{ exitCode: number }> {
  if (cmd.length === 0 || !cmd[0]) throw new ExecStartError('exec: no command given');
  const stderr = streams.tty ? streams.stdout : streams.stderr;
  // On a terminal: script's (terminal.ts; its exit code is the command's), of the client's sizes.
  const terminal = streams.tty && !!script;
  const ttyDir = terminal && streams.resize ? mkdtempSync(join(tmpdir(), 'func-exec-')) : undefined;
  const ttyFile = ttyDir && join(ttyDir, 'tty');
  const sizes = ttyFile ? await firstSize(streams.resize!, 500) : undefined;
  const [file, args, env] = terminal ? [...onTerminal(cmd, ttyFile, sizes?.first), { ...spec.env, SHELL: '/bin/sh' }] : [cmd[0], cmd.slice(1), spec.env];
  const child = spawn(file, args, {
    env, cwd: spec.cwd, detached: true,
    stdio: [streams.stdin ? 'pipe' : 'ignore', streams.stdout ? 'pipe' : 'ignore', stderr ? 'pipe' : 'ignore'],
  });
  child.stdout?.pipe(streams.stdout!, { end: false });
  child.stderr?.pipe(stderr!, { end: false });
  if (child.stdin && streams.stdin) {
    child.stdin.on('error', () => undefined);
    streams.stdin.pipe(child.stdin);
  }
  if (sizes && ttyFile) void followSizes(sizes.rest, ttyFile);
  else if (streams.resize) void drain(streams.resize);
  let done = false;
  void clientGone(streams).then(() => {
    if (done || !child.pid) return;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  });
  const ended = () => {
    done = true;
    if (ttyDir) rmSync(ttyDir, { recursive: true, force: true });
  };
  return new Promise((resolve, reject) => {
    child.once('error', (err: NodeJS.ErrnoException) => {
      ended();
      const what = JSON.stringify(cmd[0]);
      reject(new ExecStartError(err.code === 'ENOENT' ? `exec: ${what}: executable file not found in $PATH` : err.code === 'EACCES' ? `exec: ${what}: permission denied` : `exec: ${what}: cannot run`));
    });
    // 'close': the process ended and its output was read to the end.
    child.once('close', (code, signal) => {
      ended();
      streams.stdin?.unpipe?.(child.stdin!);
      resolve({ exitCode: signal ? 128 + (constants.signals[signal] ?? 0) : (code ?? 0) });
    });
  });
}

/** Until the process ends or the client goes. */
export async function attachTo(proc: ContainerProcess, streams: StreamOptions, stdinOnce: boolean): Promise<void> {
  const stop = proc.watch({ stdout: streams.stdout, stderr: streams.tty ? streams.stdout : streams.stderr });
  const input = proc.stdin;
  const clientInput = streams.stdin;
  if (input && clientInput) clientInput.pipe(input, { end: stdinOnce });
  else clientInput?.resume();
  if (streams.resize) void drain(streams.resize);
  try {
    await Promise.race([proc.exited, clientGone(streams)]);
  } finally {
    stop();
    if (input && clientInput) clientInput.unpipe(input);
  }
}
