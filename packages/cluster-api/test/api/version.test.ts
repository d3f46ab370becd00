/**
 * /version names the Kubernetes release whose API is served, so kubectl 1.32 sees no skew and
 * version-gated tools (Helm's kubeVersion, operators) accept the cluster.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKubectl, startKubectlServer, type KubectlServer } from '../support/helpers.js';

describe('/version', () => {
  let k: KubectlServer;
  beforeAll(async () => {
    k = await startKubectlServer();
  });
  afterAll(() => k?.close());

  it('kubectl version prints the served release and no skew warning', async () => {
    const r = await runKubectl('kubectl', k.env, ['version']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Server Version: v1\.32\.0\+cluster-api\.\d+\.\d+\.\d+/);
    expect(r.stdout + r.stderr).not.toContain('WARNING: version difference');
  });

  it('answers version.Info with the usual fields', async () => {
    const r = await runKubectl('kubectl', k.env, ['get', '--raw', '/version']);
    expect(r.code, r.stderr).toBe(0);
    const info = JSON.parse(r.stdout);
    expect(info).toMatchObject({ major: '1', minor: '32', gitTreeState: 'clean', compiler: 'node' });
    expect(Object.keys(info).sort()).toEqual(['buildDate', 'compiler', 'gitCommit', 'gitTreeState', 'gitVersion', 'goVersion', 'major', 'minor', 'platform']);
    // Semantic version with build metadata: what Helm's semver parser accepts for `kubeVersion: ">=1.25.0-0"`.
    expect(info.gitVersion).toMatch(/^v1\.32\.0\+[0-9A-Za-z.-]+$/);
  });

  it('a malformed path under /version is 404', async () => {
    const r = await runKubectl('kubectl', k.env, ['get', '--raw', '/version/x']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/NotFound|could not find/);
  });
});
