/**
 * Node.js for function images. A function image carries its runtime's JavaScript but no Node.js:
 * the node's own `node` (the one running the agent, so the version every function was tested with
 * in process mode) is bind-mounted read-only at /usr/local/bin/node with the shared libraries it
 * links (as `ldd` lists them, each at its own path). Nothing is copied or built per image, the
 * container cannot change the binary, and it sees only those files of the host.
 */
import { execFile } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { promisify } from 'node:util';
import type { BundleMount } from './spec.js';

const run = promisify(execFile);
let mounts: Promise<BundleMount[]> | undefined;

export function nodeBinaryMounts(): Promise<BundleMount[]> {
  return (mounts ??= (async () => {
    const { stdout } = await run('ldd', [process.execPath]).catch(() => ({ stdout: '' }));
    const libs = stdout.split('\n').map((l) => /(?:=>\s*)?(\/\S+)\s+\(0x/.exec(l)?.[1]).filter((p): p is string => !!p);
    return [
      { destination: '/usr/local/bin/node', source: realpathSync(process.execPath), readonly: true },
      ...[...new Set(libs)].map((lib) => ({ destination: lib, source: realpathSync(lib), readonly: true })),
    ];
  })());
}
