import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { firstSize, onTerminal, script, type TerminalSize } from './terminal.js';

const run = promisify(execFile);

/** Sizes as a client sends them: `now` at once, the others once `release` is called. */
function sizes(now: TerminalSize[], later: TerminalSize[] = []) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const iterable: AsyncIterable<TerminalSize> = {
    async *[Symbol.asyncIterator]() {
      yield* now;
      await released;
      yield* later;
    },
  };
  return { iterable, release };
}

const all = async (it: AsyncIterable<TerminalSize>) => {
  const got: TerminalSize[] = [];
  for await (const s of it) got.push(s);
  return got;
};

describe('firstSize', () => {
  it('takes the size a client sends as it starts, and keeps the rest in order', async () => {
    const s = sizes([{ width: 80, height: 24 }, { width: 100, height: 30 }], [{ width: 120, height: 40 }]);
    const { first, rest } = await firstSize(s.iterable, 60_000);
    expect(first).toEqual({ width: 80, height: 24 });
    s.release();
    expect(await all(rest)).toEqual([{ width: 100, height: 30 }, { width: 120, height: 40 }]);
  });

  it('without a size in time: none first, a late one still followed; none at all when the client sends none', async () => {
    const s = sizes([], [{ width: 90, height: 20 }]);
    const late = await firstSize(s.iterable, 0);
    expect(late.first).toBeUndefined();
    s.release();
    expect(await all(late.rest)).toEqual([{ width: 90, height: 20 }]);
    const ended = sizes([]);
    ended.release();
    const none = await firstSize(ended.iterable, 60_000);
    expect(none.first).toBeUndefined();
    expect(await all(none.rest)).toEqual([]);
  });
});

describe.skipIf(!script)('onTerminal', () => {
  it('runs the argv as given (quotes and all) on a pty of the first size, writes its path, and keeps the exit code', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'terminal-'));
    try {
      const ttyFile = join(dir, 'tty');
      const [file, args] = onTerminal(['sh', '-c', 'printf "%s|" "$0" "$1"; stty size; exit 4', "it's", '$HOME; rm -rf x'], ttyFile, { width: 101, height: 33 });
      const done = await run(file, args).then(() => ({ code: 0, stdout: '' }), (e: { code: number; stdout: string }) => e);
      expect(done.code).toBe(4);
      expect(done.stdout).toBe("it's|$HOME; rm -rf x|33 101\r\n");
      expect(readFileSync(ttyFile, 'utf8')).toMatch(/^\/dev\/pts\/\d+\n$/);
      // Sizes out of range are not applied (the pty keeps its own).
      const [f2, a2] = onTerminal(['stty', 'size'], undefined, { width: 0, height: 70_000 });
      expect((await run(f2, a2)).stdout).not.toContain('70000');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
