import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../test/tokens.js';
import { ConfigError } from './config.js';
import { loadVerifier, readBounded } from './keys.js';

const file = (name: string, content: string | Buffer): string => {
  const path = join(tempDir(), name);
  writeFileSync(path, content);
  return path;
};

describe('readBounded', () => {
  it('reads a small regular file', async () => {
    expect(await readBounded(file('a.txt', 'hello'), 10, 'file')).toBe('hello');
  });

  it.each([
    ['a missing file', () => join(tempDir(), 'missing'), /cannot be opened \(ENOENT\)/],
    ['a directory', () => tempDir(), /not a regular file/],
    ['a file over the limit', () => file('big', 'x'.repeat(11)), /larger than 10 bytes/],
  ])('refuses %s', async (_, path, message) => {
    await expect(readBounded(path(), 10, 'file')).rejects.toThrow(message);
  });
});

describe('loadVerifier', () => {
  it('pins HS256 for a secret and for dev mode, which also exposes its random secret', async () => {
    expect((await loadVerifier({ kind: 'secret', secret: 'x'.repeat(32) })).algorithms).toEqual(['HS256']);
    const dev = await loadVerifier({ kind: 'dev' });
    expect(dev.algorithms).toEqual(['HS256']);
    expect(dev.devSecret).toHaveLength(32);
    expect((await loadVerifier({ kind: 'dev' })).devSecret).not.toEqual(dev.devSecret);
  });

  it.each([
    ['rsa', { modulusLength: 2048 }, ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512']],
    ['ec', { namedCurve: 'prime256v1' }, ['ES256']],
    ['ec', { namedCurve: 'secp384r1' }, ['ES384']],
    ['ed25519', {}, ['EdDSA', 'Ed25519']],
  ] as const)('pins the algorithms of a %s PEM key %j', async (type, opts, algorithms) => {
    const { publicKey } = generateKeyPairSync(type as 'rsa', opts as { modulusLength: number });
    const pem = file('k.pem', publicKey.export({ type: 'spki', format: 'pem' }));
    expect((await loadVerifier({ kind: 'pem', file: pem })).algorithms).toEqual(algorithms);
  });

  it('refuses a private key where the public key belongs', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const pem = file('k.pem', privateKey.export({ type: 'pkcs8', format: 'pem' }));
    await expect(loadVerifier({ kind: 'pem', file: pem })).rejects.toThrow(/holds a private key/);
  });

  it.each([
    ['garbage', 'not a pem', /is not a PEM public key/],
    ['a secp256k1 key', generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).publicKey.export({ type: 'spki', format: 'pem' }), /unsupported EC curve/],
  ])('refuses a PEM file holding %s', async (_, content, message) => {
    await expect(loadVerifier({ kind: 'pem', file: file('k.pem', content) })).rejects.toThrow(message);
  });

  it.each([
    ['invalid JSON', '{', /not valid JSON/],
    ['no keys', '{"keys": []}', /at least one JWK/],
    ['a non-object key', '{"keys": [1]}', /at least one JWK/],
    ['a private key', '{"keys": [{"kty":"EC","crv":"P-256","x":"a","y":"b","d":"c"}]}', /private or symmetric/],
    ['a symmetric key', '{"keys": [{"kty":"oct","k":"c2VjcmV0"}]}', /private or symmetric/],
    ['a broken EC key', '{"keys": [{"kty":"EC","crv":"P-256","x":"AAAA","y":"AAAA","kid":"k1"}]}', /key 0 \(kid "k1"\) is not a usable public key/],
    ['an unknown key type', '{"keys": [{"kty":"XYZ"}]}', /key 0 is not a usable public key/],
  ])('refuses a JWKS file with %s', async (_, content, message) => {
    const err = await loadVerifier({ kind: 'jwks', file: file('jwks.json', content) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(message);
    expect((err as Error).message).not.toContain('c2VjcmV0');
  });

  it('refuses a JWKS path that is a directory', async () => {
    const dir = join(tempDir(), 'jwks.json');
    mkdirSync(dir);
    await expect(loadVerifier({ kind: 'jwks', file: dir })).rejects.toThrow(/not a regular file/);
  });
});
