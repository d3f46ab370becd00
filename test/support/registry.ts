import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A registry on 127.0.0.1 that accepts requests and never answers: an npm install against it is
 * still running when the test interrupts it. `requested` resolves on the first request.
 */
export async function hangingRegistry() {
  let onRequest!: () => void;
  const requested = new Promise<void>((resolve) => (onRequest = resolve));
  const server = createServer(() => onRequest());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    requested,
    openConnections: () => new Promise<number>((resolve, reject) => server.getConnections((e, n) => (e ? reject(e) : resolve(n)))),
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A registry on 127.0.0.1 that serves one package from its packed tarball: what @func/runtime
 * will be once published. npm is pointed at it for the package's scope only, so every other
 * package still comes from the npm registry.
 */
export async function oneTarballRegistry(tarballPath: string, packageJsonPath: string) {
  const tarball = await readFile(tarballPath);
  // npm pack ships package.json as it is in the source tree.
  const manifest = JSON.parse(await readFile(packageJsonPath, 'utf8')) as { name: string; version: string };
  const tarballName = `${manifest.name.split('/').pop()}-${manifest.version}.tgz`;
  let base = '';
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    if (path === `/${manifest.name}`) {
      const dist = { tarball: `${base}${manifest.name}/-/${tarballName}`, integrity: `sha512-${createHash('sha512').update(tarball).digest('base64')}` };
      const packument = { name: manifest.name, 'dist-tags': { latest: manifest.version }, versions: { [manifest.version]: { ...manifest, dist } } };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(packument));
    } else if (path === `/${manifest.name}/-/${tarballName}`) {
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(tarball);
    } else {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    url: base,
    scope: manifest.name.split('/')[0]!,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
