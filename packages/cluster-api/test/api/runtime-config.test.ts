/**
 * `--runtime-config`, as kube-apiserver's: a group version turned off is gone from discovery and
 * answers 404 (its objects stay, served through the versions left on), a single resource can be turned
 * off, and a malformed value refuses to start with kube-apiserver's words, from `serve`'s option table
 * and from startServer alike.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenAuthenticator } from '../../src/auth/authenticator.js';
import { AdminUser } from '../../src/auth/credentials.js';
import { ConfigError, resolveConfig } from '../../src/config.js';
import { allKinds } from '../../src/registry/kinds/index.js';
import { runtimeConfig, RuntimeConfigError } from '../../src/registry/runtime-config.js';
import { startServer, type ClusterApiServer } from '../../src/server.js';
import { MemoryStorage } from '../../src/storage/memory/memory.js';
import { request, runKubectl, startKubectlServer, TestToken, type KubectlServer } from '../support/helpers.js';

const kubectlBin = '/usr/bin/kubectl';

describe('a server started with --runtime-config', () => {
  let server: ClusterApiServer;
  const get = (path: string) => request(server.url, 'GET', path, {});

  beforeAll(async () => {
    server = await startServer({
      storage: new MemoryStorage(),
      authenticator: tokenAuthenticator(new Map([[TestToken, AdminUser]])),
      runtimeConfig: 'apps/v1beta1=false, extensions/v1beta1=0,batch/v1/cronjobs=false,api/alpha=false',
    });
  });
  afterAll(() => server?.close());

  it('leaves a group version it turns off out of discovery, and answers 404 for it', async () => {
    const apps = (await get('/apis/apps')).json;
    expect(apps.versions.map((v: any) => v.version)).toEqual(['v1']);
    const groups = (await get('/apis')).json.groups.map((g: any) => g.name);
    expect(groups).not.toContain('extensions');
    expect(groups).toContain('apps');
    for (const path of ['/apis/apps/v1beta1', '/apis/apps/v1beta1/namespaces/default/deployments', '/apis/extensions/v1beta1/ingresses', '/apis/extensions']) {
      const r = await get(path);
      expect([path, r.status]).toEqual([path, 404]);
    }
    expect((await get('/apis/batch/v2alpha1')).status).toBe(404);
  });

  it('serves the objects through the versions left on', async () => {
    const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } } };
    expect((await request(server.url, 'POST', '/apis/apps/v1/namespaces/default/deployments', { body: deployment })).status).toBe(201);
    expect((await get('/apis/apps/v1/namespaces/default/deployments/d')).status).toBe(200);
  });

  it('turns off one resource of a group version, the rest served', async () => {
    const batch = (await get('/apis/batch/v1')).json.resources.map((r: any) => r.name);
    expect(batch).toContain('jobs');
    expect(batch).not.toContain('cronjobs');
    expect((await get('/apis/batch/v1/namespaces/default/cronjobs')).status).toBe(404);
    expect((await get('/apis/batch/v1/namespaces/default/jobs')).status).toBe(200);
  });

  it('serves everything by default, the legacy group versions included', () => {
    const served = runtimeConfig('', allKinds);
    expect(allKinds.every(served)).toBe(true);
  });
});

describe('--runtime-config values', () => {
  const served = (raw: string) => {
    const on = runtimeConfig(raw, allKinds);
    return new Set(allKinds.filter(on).map((d) => `${d.group ? `${d.group}/` : ''}${d.version}/${d.plural}`));
  };

  it('reads the matchers first, then group versions, then resources; a bare key turns on', () => {
    const only = served('api/all=false,v1=true,apps/v1,apps/v1beta1/deployments=true');
    expect(only.has('v1/pods')).toBe(true);
    expect(only.has('apps/v1/deployments')).toBe(true);
    expect(only.has('apps/v1beta1/deployments')).toBe(true);
    expect(only.has('apps/v1beta1/statefulsets')).toBe(false);
    expect(only.has('batch/v1/jobs')).toBe(false);
    const noBeta = served('api/beta=false');
    expect(noBeta.has('apps/v1beta1/deployments')).toBe(false);
    expect(noBeta.has('apiextensions.k8s.io/v1beta1/customresourcedefinitions')).toBe(false);
    expect(noBeta.has('apps/v1/deployments')).toBe(true);
    expect(served('api/ga=false,v1=true').has('apps/v1/deployments')).toBe(false);
  });

  it.each([
    ['apps/v1beta1=maybe', 'invalid value of apps/v1beta1: maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax'],
    ['api/all=1', 'invalid value api/all=1'],
    ['apps', 'runtime-config invalid key apps'],
    ['apps/v1/deployments/scale=false', 'runtime-config invalid key apps/v1/deployments/scale'],
    ['Apps/v1=false', 'runtime-config invalid key Apps/v1'],
    ['apps/v9=false', 'group version apps/v9 that has not been registered'],
    ['nosuch.example.com/v1=false', 'unknown api groups nosuch.example.com'],
    ['apps/v1/Deployments=false', 'invalid key apps/v1/Deployments: group/version/resource and resource is always lowercase plural, not "Deployments"'],
    ['apps/v1/widgets=false', 'invalid key apps/v1/widgets: apps/v1 serves no resource widgets'],
    ['=true', 'runtime-config invalid key in "=true"'],
    ['api/all=false', 'the core group v1 cannot be turned off (namespaces,serviceaccounts,'],
    ['api/legacy=false', 'the core group v1 cannot be turned off'],
    ['api/v1/pods=false', 'the core group v1 cannot be turned off (pods)'],
  ])('refuses %s at start: %s', async (raw, message) => {
    expect(() => runtimeConfig(raw, allKinds)).toThrow(RuntimeConfigError);
    expect(() => runtimeConfig(raw, allKinds)).toThrow(message);
    expect(() => resolveConfig({ 'runtime-config': raw })).toThrow(`--runtime-config: ${message}`);
    expect(() => resolveConfig({}, { CLUSTER_API_RUNTIME_CONFIG: raw })).toThrow(ConfigError);
    await expect(startServer({ storage: new MemoryStorage(), runtimeConfig: raw })).rejects.toThrow(message);
  });
});

describe.runIf(existsSync(kubectlBin))('kubectl against serve --runtime-config', () => {
  let k: KubectlServer;
  beforeAll(async () => {
    k = await startKubectlServer({ runtimeConfig: 'apps/v1beta1=false,extensions/v1beta1=false' });
  });
  afterAll(() => k?.close());

  it('lists the group versions left on, and one Deployment kind', async () => {
    const versions = (await runKubectl(kubectlBin, k.env, ['api-versions'])).stdout.split('\n');
    expect(versions).toContain('apps/v1');
    expect(versions).not.toContain('apps/v1beta1');
    expect(versions).not.toContain('extensions/v1beta1');
    const deployments = (await runKubectl(kubectlBin, k.env, ['api-resources', '--no-headers'])).stdout.split('\n').filter((l) => /\sDeployment$/.test(l));
    expect(deployments).toHaveLength(1);
    expect(deployments[0]).toMatch(/^deployments\s+deploy\s+apps\/v1\s+true\s+Deployment$/);
  });
});
