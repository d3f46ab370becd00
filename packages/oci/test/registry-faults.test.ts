/**
 * What a real registry never does but a broken proxy or a tampered store can: answer with bytes
 * that do not match the digest. A minimal registry in the test serves them; the client must refuse
 * them and leave nothing in the layout.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DigestMismatchError, ImageLayout, MediaType, pullImage, RegistryError, sha256 } from '../src/index.js';

let server: Server;
let host: string;
let work: string;
const layer = Buffer.from('the real layer');
const config = Buffer.from(JSON.stringify({ architecture: 'amd64', os: 'linux', rootfs: { type: 'layers', diff_ids: [] } }));
const manifest = Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: MediaType.manifest, config: { mediaType: MediaType.config, digest: sha256(config), size: config.length }, layers: [{ mediaType: MediaType.layerGzip, digest: sha256(layer), size: layer.length }] }));

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'oci-faults-'));
  server = createServer((req, res) => {
    const url = req.url ?? '';
    if (url === '/v2/lying/manifest/manifests/v1') {
      res.writeHead(200, { 'content-type': MediaType.manifest, 'docker-content-digest': sha256(Buffer.from('something else')) }).end(manifest);
    } else if (url.startsWith('/v2/lying/blob/manifests/')) {
      res.writeHead(200, { 'content-type': MediaType.manifest }).end(manifest);
    } else if (url === `/v2/lying/blob/blobs/${sha256(config)}`) {
      res.writeHead(200).end(config);
    } else if (url.startsWith('/v2/lying/blob/blobs/')) {
      res.writeHead(200).end(Buffer.from('tampered bytes'));
    } else {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"errors":[{"code":"NAME_UNKNOWN","message":"repository name not known to registry"}]}');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  host = `127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(work, { recursive: true, force: true });
});

describe('pulling from a registry that answers wrong bytes', () => {
  it('refuses a manifest whose digest is not the one the registry claims', async () => {
    const layout = await ImageLayout.open(join(work, 'm'));
    const err = await pullImage(`${host}/lying/manifest:v1`, layout).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RegistryError);
    expect((err as Error).message).toMatch(/Digest mismatch for manifest lying\/manifest:v1/);
    expect(await layout.tags()).toEqual([]);
  });

  it('refuses a blob whose bytes do not hash to its digest and keeps no partial file', async () => {
    const layout = await ImageLayout.open(join(work, 'b'));
    const err = await pullImage(`${host}/lying/blob:v1`, layout, { tag: 'x' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DigestMismatchError);
    expect(err).toMatchObject({ expected: sha256(layer), actual: sha256(Buffer.from('tampered bytes')) });
    expect(readdirSync(join(layout.dir, 'blobs', 'sha256')).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expect(await layout.hasBlob(sha256(layer))).toBe(false);
    expect(await layout.tags()).toEqual([]);
  });
});
