import { describe, expect, it } from 'vitest';
import { STEP_LINE, statusLine, steps, type ProgressStream } from './progress.js';

function stream(isTTY: boolean, columns = 200): ProgressStream & { text: string } {
  const s = { text: '', isTTY, columns, write: (t: string) => ((s.text += t), true) };
  return s;
}

describe('statusLine', () => {
  it('on a terminal rewrites one line in place, cut to the width, and ends it with a newline', () => {
    const out = stream(true, 40);
    const line = statusLine(out, {});
    line.show('bundling');
    line.show('bundling');
    line.show('pushing a very long image reference that does not fit');
    line.end();
    expect(out.text).toBe('\r\x1b[2Kfunc-runtime: bundling\r\x1b[2Kfunc-runtime: pushing a very long image\n');
  });

  it('into a pipe prints a line per change only', () => {
    const out = stream(false);
    const line = statusLine(out, {});
    for (const t of ['a', 'a', 'b', 'b']) line.show(t);
    line.end('done');
    expect(out.text).toBe('func-runtime: a\nfunc-runtime: b\nfunc-runtime: done\n');
  });

  it('in CI prints plain lines even on a terminal', () => {
    const out = stream(true);
    const line = statusLine(out, { CI: 'true' });
    line.show('a');
    line.end();
    expect(out.text).toBe('func-runtime: a\n');
  });
});

describe('steps', () => {
  it('a step that ends before the threshold prints nothing and passes its value through', async () => {
    const out = stream(false);
    expect(await steps(out, { afterMs: 60_000, env: {} }).run('bundling', Promise.resolve(42))).toBe(42);
    expect(out.text).toBe('');
  });

  it('a longer step says what it does, then how long it took (pipe)', async () => {
    const out = stream(false);
    let finish!: (v: string) => void;
    const running = steps(out, { afterMs: 0, env: {} }).run('pushing x', new Promise<string>((r) => (finish = r)));
    while (!out.text) await new Promise((r) => setTimeout(r, 5));
    expect(out.text).toBe('func-runtime: pushing x…\n');
    finish('ok');
    expect(await running).toBe('ok');
    expect(out.text).toMatch(/^func-runtime: pushing x…\nfunc-runtime: pushing x: done in \d+\.\d s\n$/);
    expect(out.text.trim().split('\n').every((l) => STEP_LINE.test(l))).toBe(true);
    expect(STEP_LINE.test('func-runtime: Cannot bundle src/index.ts: index.ts:2:1: Unexpected')).toBe(false);
  });

  it('on a terminal counts seconds in place; a failure takes the line away and rethrows', async () => {
    const out = stream(true);
    let fail!: (e: Error) => void;
    const running = steps(out, { afterMs: 0, env: {} }).run('bundling', new Promise<never>((_, r) => (fail = r)));
    while (!out.text) await new Promise((r) => setTimeout(r, 5));
    expect(out.text).toBe('\r\x1b[2Kfunc-runtime: bundling… 0 s');
    fail(new Error('no'));
    await expect(running).rejects.toThrow('no');
    expect(out.text).toBe('\r\x1b[2Kfunc-runtime: bundling… 0 s\r\x1b[2K');
  });
});
