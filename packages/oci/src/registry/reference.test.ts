import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { credentialsFor } from './credentials.js';
import { parseReference } from './reference.js';

describe('parseReference', () => {
  it.each([
    ['node', { registry: 'registry-1.docker.io', repository: 'library/node', tag: 'latest' }],
    ['docker.io/library/node:22-slim', { registry: 'registry-1.docker.io', repository: 'library/node', tag: '22-slim' }],
    ['ghcr.io/org/fn:v1', { registry: 'ghcr.io', repository: 'org/fn', tag: 'v1' }],
    ['localhost:5000/fn', { registry: 'localhost:5000', repository: 'fn', tag: 'latest' }],
    [`127.0.0.1:5000/a/b@sha256:${'a'.repeat(64)}`, { registry: '127.0.0.1:5000', repository: 'a/b', digest: `sha256:${'a'.repeat(64)}` }],
  ])('%s', (text, ref) => {
    expect(parseReference(text)).toEqual(ref);
  });

  it.each([
    ['Upper/Case', /the repository must be lowercase/],
    ['ghcr.io/org/fn:bad tag', /tag "bad tag" has characters a tag cannot have/],
    ['ghcr.io/org/fn@sha256:short', /Invalid digest/],
    ['ghcr.io/', /the repository must be lowercase/],
  ])('refuses %s', (text, message) => {
    expect(() => parseReference(text)).toThrow(message);
  });
});

describe('credentialsFor', () => {
  const dir = mkdtempSync(join(tmpdir(), 'docker-config-'));
  const env = { DOCKER_CONFIG: dir };
  it('finds Docker Hub under its legacy key and a host under https://host', () => {
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ auths: { 'https://index.docker.io/v1/': { auth: Buffer.from('hub:pw').toString('base64') }, 'https://ghcr.io': { username: 'gh', password: 'tok' } } }));
    expect(credentialsFor('registry-1.docker.io', env)).toEqual({ username: 'hub', password: 'pw' });
    expect(credentialsFor('ghcr.io', env)).toEqual({ username: 'gh', password: 'tok' });
    expect(credentialsFor('quay.io', env)).toBeUndefined();
  });
  it('refuses a config that is not JSON or an auth that is not user:password, without echoing it', () => {
    writeFileSync(join(dir, 'config.json'), '{ not json');
    expect(() => credentialsFor('ghcr.io', env)).toThrow(/config.json is not valid JSON/);
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ auths: { 'ghcr.io': { auth: Buffer.from('no-colon-secret').toString('base64') } } }));
    const err = (() => { try { credentialsFor('ghcr.io', env); } catch (e) { return e as Error; } return undefined; })();
    expect(err?.message).toMatch(/auths\["ghcr.io"\]\.auth is not base64 of user:password/);
    expect(err?.message).not.toContain('no-colon-secret');
    rmSync(dir, { recursive: true, force: true });
  });
});
