/**
 * How the entry points load the runtime (src/cli.ts explains why): with require(), so that Node 20
 * does not read each of the runtime's module files through a FileHandle; with import where
 * require(esm) is switched off.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { fixture, runCli, type Running } from './helpers/cli.js';

const PRELOAD = fileURLToPath(new URL('./fixtures/preload/count-file-handles.cjs', import.meta.url));

let running: Running | undefined;
afterEach(async () => {
  if (running && running.child.exitCode === null) await running.stop('SIGKILL');
  running = undefined;
});

describe('the entry point', () => {
  it('serves having read only a few files through FileHandles (the runtime has dozens of modules)', async () => {
    running = await runCli([fixture('esm-named')], { NODE_OPTIONS: `--require ${PRELOAD}` });
    expect(await fetch(`${running.url}/?a=1`).then((res) => res.text())).toBe('{"module":"esm","data":null,"query":{"a":"1"}}');
    expect(await running.stop('SIGTERM')).toBe(0);
    const count = Number(/file-handles=(\d+)/.exec(running.stderr())?.[1]);
    // The entry module, the function's: import's own. The runtime read through import was 37.
    expect(count).toBeLessThanOrEqual(4);
  });

  it('still serves with require(esm) switched off, through import', async () => {
    running = await runCli([fixture('esm-named')], { NODE_OPTIONS: '--no-experimental-require-module' });
    expect(await fetch(`${running.url}/?a=1`).then((res) => res.text())).toBe('{"module":"esm","data":null,"query":{"a":"1"}}');
    expect(await running.stop('SIGTERM')).toBe(0);
  });
});
