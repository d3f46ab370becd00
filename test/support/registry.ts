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
 * A registry on 127.0.0.1 that serves packages from their packed tarballs: what @func/runtime and
 * the packages it depends on (@func/oci, @func/kube-client) will be once published. npm is pointed
 * at it for their scope only, so every other package still comes from the npm registry.
 */
export async function tarballRegistry(packages: { tarball: string; packageJson: string }[]) {
  const served = new Map<string, { manifest: { name: string; version: string }; tarball: Buffer; file: string }>();
  for (const p of packages) {
    // npm pack ships package.json as it is in the source tree.
    const manifest = JSON.parse(await readFile(p.packageJson, 'utf8')) as { name: string; version: string };
    served.set(manifest.name, { manifest, tarball: await readFile(p.tarball), file: `${manifest.name.split('/').pop()}-${manifest.version}.tgz` });
  }
  let base = '';
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    const name = path.slice(1).split('/-/')[0]!;
    const pkg = served.get(name);
    if (pkg && path === `/${name}`) {
      const dist = { tarball: `${base}${name}/-/${pkg.file}`, integrity: `sha512-${createHash('sha512').update(pkg.tarball).digest('base64')}` };
      const packument = { name, 'dist-tags': { latest: pkg.manifest.version }, versions: { [pkg.manifest.version]: { ...pkg.manifest, dist } } };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(packument));
    } else if (pkg && path === `/${name}/-/${pkg.file}`) {
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(pkg.tarball);
    } else {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    url: base,
    scope: [...served.keys()][0]!.split('/')[0]!,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
