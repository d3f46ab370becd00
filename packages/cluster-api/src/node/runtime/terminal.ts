/**
 * A pseudo-terminal for `exec -t`, made by util-linux's `script` where the node has it (Node.js
 * opens none without a native addon): `script -q -e -c '<command>' /dev/null` runs the command on a
 * new pty and copies between it and its own stdio (pipes here); its exit code is the command's.
 * With a `ttyFile` the shell first writes the pty's path there, so that a terminal size from the
 * client can be set on it (`stty -F <pty> rows R cols C`): the kernel then signals SIGWINCH to the
 * program in the foreground (runc follows it into the container's own terminal).
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** util-linux's `script`, where the node has it. */
export const script = ['/usr/bin/script', '/bin/script'].find((p) => existsSync(p));

const shellQuote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`;

export interface TerminalSize {
  width: number;
  height: number;
}

const sized = (s: TerminalSize | undefined): s is TerminalSize => !!s && s.width > 0 && s.height > 0 && s.width <= 0xffff && s.height <= 0xffff;

/**
 * The argv that runs `cmd` on a new pty (only where `script` is), of `size` from the start when
 * given (what runc reads as it starts: a size set later reaches it by SIGWINCH only once it listens).
 */
export function onTerminal(cmd: readonly string[], ttyFile?: string, size?: TerminalSize): [string, string[]] {
  if (!script) throw new Error('no script(1) on this node to make a terminal');
  const setup = [
    ...(ttyFile ? [`tty > ${shellQuote(ttyFile)}`] : []),
    ...(sized(size) ? [`stty rows ${Math.floor(size.height)} cols ${Math.floor(size.width)} 2>/dev/null`] : []),
  ];
  const line = [...setup, `exec ${cmd.map(shellQuote).join(' ')}`].join('; ');
  return [script, ['-q', '-e', '-c', line, '/dev/null']];
}

/**
 * The first of `sizes` when it comes within `withinMs` (clients send their size as they start),
 * and the sizes after it.
 */
export async function firstSize(sizes: AsyncIterable<TerminalSize>, withinMs: number): Promise<{ first?: TerminalSize; rest: AsyncIterable<TerminalSize> }> {
  const it = sizes[Symbol.asyncIterator]();
  const pending = it.next();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), withinMs)));
  const got = await Promise.race([pending, late]);
  clearTimeout(timer);
  const rest: AsyncIterable<TerminalSize> = {
    async *[Symbol.asyncIterator]() {
      if (!got) {
        const r = await pending;
        if (r.done) return;
        yield r.value;
      }
      for (let r = await it.next(); !r.done; r = await it.next()) yield r.value;
    },
  };
  if (got?.done) return { rest };
  return { first: got?.value, rest };
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/** The pty's path once the shell has written it (a little while at most), undefined once the file is gone. */
async function ptyOf(ttyFile: string): Promise<string | undefined> {
  for (let i = 0; i < 100; i++) {
    try {
      const pty = readFileSync(ttyFile, 'utf8').trim();
      if (pty) return pty;
    } catch {
      /* not written yet, or removed: the command has ended */
    }
    await pause(20);
  }
  return undefined;
}

/**
 * Applies the client's terminal sizes, in order, to the pty whose path the shell writes to
 * `ttyFile` (waited for: a size may come before the shell has started); the caller removes the
 * file when the command ends, and a size then is dropped.
 */
export async function followSizes(sizes: AsyncIterable<TerminalSize>, ttyFile: string): Promise<void> {
  for await (const size of sizes) {
    const pty = await ptyOf(ttyFile);
    if (!pty?.startsWith('/dev/pts/') || !sized(size)) continue;
    await run('stty', ['-F', pty, 'rows', String(Math.floor(size.height)), 'cols', String(Math.floor(size.width))]).catch(() => undefined);
  }
}

/** Sizes read and dropped (a command without a terminal of its own). */
export async function drain(sizes: AsyncIterable<unknown>): Promise<void> {
  for await (const _size of sizes);
}
