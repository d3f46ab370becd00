import { createServer, type Server } from 'node:http';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const created: string[] = [];

/** A fresh directory under the OS temp dir, removed by removeTempDirs(). */
export async function tempDir(prefix = 'create-func-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  created.push(dir);
  return dir;
}

export async function removeTempDirs(): Promise<void> {
  await Promise.all(created.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
}

export async function entries(dir: string): Promise<string[]> {
  return (await readdir(dir)).sort();
}

/**
 * A stand-in for the npm registry on 127.0.0.1: `hang` accepts requests and never answers
 * (an install that is still running when it is interrupted); `missing` answers 404 (an install
 * that fails). `requested` resolves on the first request, i.e. once npm is really installing.
 */
export async function fakeRegistry(mode: 'hang' | 'missing') {
  let onRequest!: () => void;
  const requested = new Promise<void>((resolve) => (onRequest = resolve));
  const server: Server = createServer((req, res) => {
    onRequest();
    if (mode === 'missing') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Not found"}');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const openConnections = () => new Promise<number>((resolve, reject) => server.getConnections((e, n) => (e ? reject(e) : resolve(n))));
  const close = () => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return { url, requested, openConnections, close };
}

/** npm settings that send every request to `registryUrl` and keep the user's cache out of it. */
export function npmEnv(registryUrl: string, cacheDir: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    npm_config_registry: registryUrl,
    npm_config_cache: cacheDir,
    npm_config_fetch_retries: '0',
    npm_config_update_notifier: 'false',
  };
}
