/** The Function object's includeRaw member: a webhook asks for context.rawBody itself. */
import { describe, expect, it } from 'vitest';
import { start, stop } from '../src/index.js';
import { LoadError, toFunctionModule } from '../src/loader.js';
import { fixture, runCli } from './helpers/cli.js';

const body = '{ "spaced":  true }';

async function post(fn: Parameters<typeof start>[0], options: Parameters<typeof start>[1] = {}): Promise<unknown> {
  const server = await start(fn, { port: 0, host: '127.0.0.1', logLevel: 'silent', ...options });
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as { port: number }).port}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    return await res.json();
  } finally {
    await stop(server);
  }
}

const echo = { handle: (context: { rawBody?: Buffer | string }) => ({ raw: context.rawBody?.toString() ?? null }) };

describe('includeRaw member', () => {
  it('keeps the exact request bytes when the function sets it', async () => {
    expect(await post({ ...echo, includeRaw: true })).toEqual({ raw: body });
  });

  it('is off by default and when the function sets false', async () => {
    expect(await post(echo)).toEqual({ raw: null });
    expect(await post({ ...echo, includeRaw: false })).toEqual({ raw: null });
  });

  it('yields to the includeRaw option', async () => {
    expect(await post({ ...echo, includeRaw: true }, { includeRaw: false })).toEqual({ raw: null });
  });

  it('must be a boolean', () => {
    expect(() => toFunctionModule({ handle: () => 1, includeRaw: 'yes' }, '/f.mjs')).toThrow(LoadError);
    expect(() => toFunctionModule({ handle: () => 1, includeRaw: 'yes' }, '/f.mjs')).toThrow(/\/f\.mjs exports `includeRaw`, but it is a string, not a boolean/);
  });

  it('rejects a non-boolean member in start() with the reason', async () => {
    await expect(start({ handle: () => 1, includeRaw: 1 as unknown as boolean }, { port: 0 })).rejects.toThrow(/not a boolean/);
  });
});

describe('func-runtime and the includeRaw member', () => {
  it('serves rawBody from a module that exports includeRaw, and --no-include-raw turns it off', async () => {
    for (const [flags, raw] of [[[], body], [['--no-include-raw'], null]] as const) {
      const r = await runCli([fixture('include-raw-member'), ...flags]);
      try {
        const res = await fetch(r.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        expect(await res.json()).toEqual({ raw, parsed: { spaced: true } });
      } finally {
        await r.stop();
      }
    }
  });
});
