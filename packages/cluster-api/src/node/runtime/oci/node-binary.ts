/**
 * Node.js for function images. A function image carries its runtime's JavaScript but no Node.js:
 * the node's own `node` (the one running the agent, so the version every function was tested with
 * in process mode) is bind-mounted read-only at /usr/local/bin/node with the shared libraries it
 * links (as `ldd` lists them, each at its own path). The host's `tar` comes the same way, at
 * /usr/bin/tar, so `kubectl cp` works on a function pod (it runs `tar` in the container). Nothing is
 * copied or built per image, the container cannot change the binaries, and it sees only those files
 * of the host.
 */
import { execFile } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { promisify } from 'node:util';
import type { BundleMount } from './spec.js';

const run = promisify(execFile);
let mounts: Promise<BundleMount[]> | undefined;

/** The shared libraries `binary` links, as `ldd` lists them. */
const librariesOf = async (binary: string): Promise<string[]> => {
  const { stdout } = await run('ldd', [binary]).catch(() => ({ stdout: '' }));
  return stdout.split('\n').map((l) => /(?:=>\s*)?(\/\S+)\s+\(0x/.exec(l)?.[1]).filter((p): p is string => !!p);
};

export function nodeBinaryMounts(): Promise<BundleMount[]> {
  return (mounts ??= (async () => {
    const binaries: [string, string][] = [['/usr/local/bin/node', process.execPath], ...(['/usr/bin/tar', '/bin/tar'].filter((t) => existsSync(t)).slice(0, 1).map((t): [string, string] => ['/usr/bin/tar', t]))];
    const libs = (await Promise.all(binaries.map(([, source]) => librariesOf(source)))).flat();
    return [
      ...binaries.map(([destination, source]) => ({ destination, source: realpathSync(source), readonly: true })),
      ...[...new Set(libs)].map((lib) => ({ destination: lib, source: realpathSync(lib), readonly: true })),
    ];
  })());
}
