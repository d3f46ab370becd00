/** CORS exposed headers: the cors() member's object form and FUNC_CORS_EXPOSE_HEADERS. */
import { describe, expect, it } from 'vitest';
import { start, stop, type FunctionModule } from '../src/index.js';
import { fixture, runCli, runCliToExit } from './helpers/cli.js';

const handle = () => ({ statusCode: 200, headers: { etag: '"v1"', 'www-authenticate': 'Bearer', allow: 'GET' }, body: 'x' });

async function withServer(fn: FunctionModule, options: Parameters<typeof start>[1], run: (url: string) => Promise<void>): Promise<void> {
  const server = await start(fn, { port: 0, host: '127.0.0.1', logLevel: 'silent', ...options });
  try {
    await run(`http://127.0.0.1:${(server.address() as { port: number }).port}`);
  } finally {
    await stop(server);
  }
}

describe('cors() returning { origins, exposeHeaders, maxAge }', () => {
  const fn: FunctionModule = { handle, cors: () => ({ origins: ['https://app.example'], exposeHeaders: ['ETag', 'WWW-Authenticate', 'Allow'], maxAge: 60 }) };

  it('exposes the headers to a listed origin, and to no other', async () => {
    await withServer(fn, {}, async (url) => {
      const ok = await fetch(url, { headers: { origin: 'https://app.example' } });
      expect(ok.headers.get('access-control-allow-origin')).toBe('https://app.example');
      expect(ok.headers.get('access-control-expose-headers')).toBe('ETag, WWW-Authenticate, Allow');
      expect(ok.headers.get('etag')).toBe('"v1"');
      const other = await fetch(url, { headers: { origin: 'https://evil.example' } });
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
      expect(other.headers.get('access-control-expose-headers')).toBeNull();
    });
  });

  it('answers a preflight with its maxAge', async () => {
    await withServer(fn, {}, async (url) => {
      const pre = await fetch(url, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' } });
      expect(pre.status).toBe(204);
      expect(pre.headers.get('access-control-max-age')).toBe('60');
    });
  });

  it('allows any origin when origins is left out, still exposing the headers', async () => {
    await withServer({ handle, cors: () => ({ exposeHeaders: 'ETag, Allow' }) }, {}, async (url) => {
      const res = await fetch(url, { headers: { origin: 'https://any.example' } });
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('access-control-expose-headers')).toBe('ETag, Allow');
    });
  });

  it('the corsExposeHeaders option overrides the member', async () => {
    await withServer(fn, { corsExposeHeaders: 'X-Request-Id' }, async (url) => {
      const res = await fetch(url, { headers: { origin: 'https://app.example' } });
      expect(res.headers.get('access-control-expose-headers')).toBe('X-Request-Id');
    });
  });

  it('the string and array forms still mean origins, with nothing exposed', async () => {
    await withServer({ handle, cors: () => 'https://a.example, https://b.example' }, {}, async (url) => {
      const res = await fetch(url, { headers: { origin: 'https://b.example' } });
      expect(res.headers.get('access-control-allow-origin')).toBe('https://b.example');
      expect(res.headers.get('access-control-expose-headers')).toBeNull();
    });
  });

  it.each([
    ['a number', () => 42, /cors\(\) member must return origins .* got 42/],
    ['an exposed name that is not a header name', () => ({ exposeHeaders: ['ETag', 'bad header'] }), /exposeHeaders must list header names, got "bad header"/],
    ['exposeHeaders of the wrong type', () => ({ exposeHeaders: 5 }), /exposeHeaders must be a string or an array of strings, got 5/],
    ['an unknown field', () => ({ origin: 'https://a.example' }), /unknown field "origin" \(known: origins, exposeHeaders, maxAge\)/],
    ['a negative maxAge', () => ({ maxAge: -1 }), /maxAge must be an integer ≥ 0/],
  ])('rejects %s at start-up, naming the member', async (_what, cors, message) => {
    await expect(start({ handle, cors: cors as FunctionModule['cors'] }, { port: 0 })).rejects.toThrow(message);
  });

  it('rejects a bad corsExposeHeaders option', async () => {
    await expect(start({ handle }, { port: 0, corsExposeHeaders: 'ETag, x:y' })).rejects.toThrow(/--cors-expose-headers must list header names, got "x:y"/);
  });
});

describe('FUNC_CORS_EXPOSE_HEADERS', () => {
  it('exposes the headers it lists on every response', async () => {
    const r = await runCli([fixture('echo')], { FUNC_CORS_EXPOSE_HEADERS: 'ETag,WWW-Authenticate , Allow' });
    try {
      const res = await fetch(r.url, { headers: { origin: 'https://app.example' } });
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('access-control-expose-headers')).toBe('ETag, WWW-Authenticate, Allow');
    } finally {
      await r.stop();
    }
  });

  it('stops start-up on a malformed list, naming the variable', async () => {
    const r = await runCliToExit([fixture('echo'), '--port', '0'], { FUNC_CORS_EXPOSE_HEADERS: 'ETag, {bad}' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('func-runtime: FUNC_CORS_EXPOSE_HEADERS must list header names, got "{bad}"');
  });
});
