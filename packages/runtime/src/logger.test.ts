import type { IncomingMessage } from 'node:http';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, requestId } from './logger.js';

const req = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

describe('requestId', () => {
  it('uses x-request-id when sent', () => {
    expect(requestId(req({ 'x-request-id': 'abc-1' }))).toBe('abc-1');
  });

  it.each([[{}], [{ 'x-request-id': '' }], [{ 'x-request-id': 'x'.repeat(201) }]])('generates one for %j', (headers) => {
    expect(requestId(req(headers))).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });
});

describe('createLogger', () => {
  function capture(level: Parameters<typeof createLogger>[0]) {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({ write(chunk, _enc, cb) { lines.push(JSON.parse(String(chunk))); cb(); } });
    return { logger: createLogger(level, sink), lines };
  }

  it('writes level, time, pid, hostname, reqId and msg', () => {
    const { logger, lines } = capture('info');
    logger.child({ reqId: 'r-1' }).info('hello');
    expect(lines[0]).toMatchObject({ level: 30, pid: process.pid, reqId: 'r-1', msg: 'hello', time: expect.any(Number), hostname: expect.any(String) });
  });

  it('redacts credentials in logged requests', () => {
    const { logger, lines } = capture('info');
    logger.info({ req: { headers: { authorization: 'Bearer s3cret', cookie: 'sid=1', accept: '*/*' } } }, 'request');
    expect(JSON.stringify(lines[0])).not.toMatch(/s3cret|sid=1/);
    expect(lines[0]).toMatchObject({ req: { headers: { authorization: '[redacted]', accept: '*/*' } } });
  });

  it('silent writes nothing', () => {
    const { logger, lines } = capture('silent');
    logger.fatal('x');
    expect(lines).toEqual([]);
  });
});
