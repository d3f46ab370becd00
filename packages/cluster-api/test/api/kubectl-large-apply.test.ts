/**
 * Large objects applied back to back on one kept-alive TLS connection, as `kubectl apply
 * --server-side -f` sends cert-manager's six CRDs: each PATCH carries a 13–330 KB body right after
 * a large answer to the one before. Repeated on fresh `serve` processes, since whether a request
 * arrives before the previous answer has drained is a matter of timing.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { runKubectl } from '../support/helpers.js';
import { largeCrds } from '../load/large-crds.js';
import { startServe } from '../load/serve-process.js';

const crds = largeCrds();
const dir = mkdtempSync(join(tmpdir(), 'large-crds-'));
const manifest = join(dir, 'crds.yaml');
writeFileSync(manifest, crds.map((c) => c.yaml).join('---\n'));

/** Fresh servers in a run; each applies the manifest twice (create, then an unchanged re-apply). */
const Servers = 3;

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('kubectl apply --server-side of six large CRDs on one connection', () => {
  it('the generated CRDs have cert-manager\'s sizes (13 KB to 330 KB)', () => {
    const sizes = crds.map((c) => c.yaml.length / 1024);
    expect(Math.min(...sizes)).toBeGreaterThanOrEqual(13);
    expect(Math.max(...sizes)).toBeGreaterThanOrEqual(330);
    expect(Math.max(...sizes)).toBeLessThan(340);
  });

  it(`applies them back to back on ${Servers} fresh servers with no connection reset`, async () => {
    for (let run = 0; run < Servers; run++) {
      const s = await startServe(['--disable-agent', '--disable-scheduler']);
      try {
        for (const pass of ['created', 'unchanged']) {
          const r = await runKubectl('kubectl', s.env, ['apply', '--server-side', '-f', manifest]);
          expect(r.stderr, `run ${run + 1}, ${pass}`).not.toMatch(/connection reset|Unable to connect/);
          expect(r.code, `run ${run + 1}, ${pass}: ${r.stderr}`).toBe(0);
          for (const c of crds) expect(r.stdout).toContain(`customresourcedefinition.apiextensions.k8s.io/${c.name} serverside-applied`);
        }
        const listed = await runKubectl('kubectl', s.env, ['get', 'crd', '-o', 'name']);
        // Beside the ones the server installs itself (Knative's kinds its parts act on).
        const applied = listed.stdout.trim().split('\n').filter((n) => n.endsWith('cert-manager.io'));
        expect(applied.sort()).toEqual(crds.map((c) => `customresourcedefinition.apiextensions.k8s.io/${c.name}`).sort());
      } finally {
        await s.close();
      }
    }
  }, 180_000);

  it('answers a CRD body over the 3 MiB limit with a 413 Status, and the next apply still works', async () => {
    const s = await startServe(['--disable-agent', '--disable-scheduler']);
    try {
      // The largest CRD with a description that takes it past the request body limit.
      const crd = parse(crds[5]!.yaml);
      crd.spec.versions[0].schema.openAPIV3Schema.description = 'x'.repeat(3 * 1024 * 1024);
      const padded = join(dir, 'huge.json');
      const body = JSON.stringify(crd);
      writeFileSync(padded, body);
      const refused = await runKubectl('kubectl', s.env, ['apply', '--server-side', '-f', padded]);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toMatch(/too large/i);
      expect(refused.stderr).not.toMatch(/connection reset/);
      const applied = await runKubectl('kubectl', s.env, ['apply', '--server-side', '-f', manifest]);
      expect(applied.code, applied.stderr).toBe(0);
    } finally {
      await s.close();
    }
  }, 60_000);
});
