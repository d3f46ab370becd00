/**
 * Registry authentication against real registries: htpasswd (Basic, bcrypt) and token auth (a
 * real token server issuing JWTs signed with a certificate the registry trusts), credentials from
 * explicit options and from a Docker config file; failures name no secret.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildImage, ImageLayout, pullImage, pushImage, RegistryError } from '../src/index.js';
import { haveRegistry, type RunningRegistry, skopeo, startRegistry, USER } from './registry-server.js';

let work: string;
let layout: ImageLayout;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'oci-auth-'));
  layout = await ImageLayout.open(join(work, 'layout'));
  await buildImage(layout, { tag: 'app', layers: [{ entries: [{ path: 'a.txt', type: 'file', data: Buffer.from('auth test') }] }] });
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

function dockerConfig(auths: Record<string, unknown>): NodeJS.ProcessEnv {
  const dir = mkdtempSync(join(work, 'docker-'));
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ auths }));
  return { DOCKER_CONFIG: dir };
}

const failure = (p: Promise<unknown>) => p.then(() => { throw new Error('expected a failure'); }, (e: unknown) => e as RegistryError);

describe.skipIf(!haveRegistry).each(['htpasswd', 'token'] as const)('%s auth', (auth) => {
  let registry: RunningRegistry;
  beforeAll(async () => { registry = await startRegistry(auth); });
  afterAll(async () => { await registry?.stop(); });

  it('pushes with explicit credentials; skopeo with the same credentials sees the image', async () => {
    const result = await pushImage(layout, 'app', `${registry.host}/private/app:v1`, { credentials: USER, dockerConfig: false });
    const inspect = JSON.parse(await skopeo(['inspect', '--tls-verify=false', '--creds', `${USER.username}:${USER.password}`, `docker://${registry.host}/private/app:v1`]));
    expect(inspect.Digest).toBe(result.digest);
  });

  it('reads credentials from DOCKER_CONFIG (auth as base64, or username/password)', async () => {
    const b64 = dockerConfig({ [registry.host]: { auth: Buffer.from(`${USER.username}:${USER.password}`).toString('base64') } });
    const target = await ImageLayout.open(join(work, `pull-${auth}`));
    const pulled = await pullImage(`${registry.host}/private/app:v1`, target, { dockerConfig: b64 });
    expect(pulled.digest).toBe((await layout.resolve('app')).digest);
    const plain = dockerConfig({ [`https://${registry.host}`]: { username: USER.username, password: USER.password } });
    await expect(pushImage(layout, 'app', `${registry.host}/private/app:v2`, { dockerConfig: plain })).resolves.toMatchObject({ existing: 2 });
  });

  it('refuses a wrong password or no credentials with an unauthorized error that names no secret', async () => {
    const wrong = await failure(pushImage(layout, 'app', `${registry.host}/private/app:v3`, { credentials: { username: USER.username, password: 'hunter2-wrong' }, dockerConfig: false }));
    expect(wrong).toBeInstanceOf(RegistryError);
    expect(wrong.code).toBe('unauthorized');
    expect(wrong.message).not.toContain('hunter2');
    expect(wrong.message).not.toContain(Buffer.from(`${USER.username}:hunter2-wrong`).toString('base64'));
    const none = await failure(pushImage(layout, 'app', `${registry.host}/private/app:v3`, { dockerConfig: false }));
    expect(none.code).toBe('unauthorized');
  });
});

describe.skipIf(!haveRegistry)('token auth scopes', () => {
  let registry: RunningRegistry;
  beforeAll(async () => { registry = await startRegistry('token'); });
  afterAll(async () => { await registry?.stop(); });

  it('pulls anonymously where the token service grants pull, and is refused push there', async () => {
    await pushImage(layout, 'app', `${registry.host}/public/app:v1`, { credentials: USER, dockerConfig: false });
    const target = await ImageLayout.open(join(work, 'anon'));
    await expect(pullImage(`${registry.host}/public/app:v1`, target, { dockerConfig: false })).resolves.toMatchObject({ digest: (await layout.resolve('app')).digest });
    const push = await failure(pushImage(layout, 'app', `${registry.host}/public/app:v2`, { dockerConfig: false }));
    expect(push.code).toBe('unauthorized');
  });

  it('mounts across repositories with a token that covers both', async () => {
    await pushImage(layout, 'app', `${registry.host}/team/base:v1`, { credentials: USER, dockerConfig: false });
    const result = await pushImage(layout, 'app', `${registry.host}/team/fn:v1`, { credentials: USER, dockerConfig: false, mountFrom: 'team/base' });
    expect(result).toMatchObject({ mounted: 2, uploaded: 0 });
  });
});
