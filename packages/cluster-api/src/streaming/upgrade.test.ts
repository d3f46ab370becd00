import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../api/errors.js';
import { isUpgradeRequest, negotiate } from './upgrade.js';

const req = (method: string, headers: Record<string, string>): IncomingMessage => ({ method, headers }) as unknown as IncomingMessage;
const ws = (protocols?: string, extra: Record<string, string> = {}) =>
  req('GET', {
    connection: 'keep-alive, Upgrade', upgrade: 'WebSocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
    ...(protocols === undefined ? {} : { 'sec-websocket-protocol': protocols }), ...extra,
  });
const spdy = (versions?: string) =>
  req('POST', { connection: 'Upgrade', upgrade: 'SPDY/3.1', ...(versions === undefined ? {} : { 'x-stream-protocol-version': versions }) });

const refusal = (f: () => unknown): [number, string] => {
  try {
    f();
  } catch (err) {
    if (err instanceof ApiError) return [err.code, err.message];
    throw err;
  }
  throw new Error('not refused');
};

describe('negotiating an upgrade', () => {
  const served = ['portforward.k8s.io'];
  const channels = ['v4.channel.k8s.io', 'v4.base64.channel.k8s.io'];

  it('knows an upgrade by its Connection header, as httpstream does', () => {
    expect(isUpgradeRequest(req('GET', { connection: 'keep-alive, upgrade' }))).toBe(true);
    expect(isUpgradeRequest(req('GET', { upgrade: 'websocket' }))).toBe(false);
  });

  it.each([
    ['SPDY/3.1+portforward.k8s.io', { transport: 'websocket', protocol: 'portforward.k8s.io' }],
    ['SPDY/3.1+v2.portforward.k8s.io, SPDY/3.1+portforward.k8s.io', { transport: 'websocket', protocol: 'portforward.k8s.io' }],
    ['v4.channel.k8s.io, SPDY/3.1+portforward.k8s.io', { transport: 'websocket', protocol: 'portforward.k8s.io' }],
    ['v5.channel.k8s.io, v4.channel.k8s.io', { transport: 'channel', protocol: 'v4.channel.k8s.io' }],
    ['v4.base64.channel.k8s.io', { transport: 'channel', protocol: 'v4.base64.channel.k8s.io' }],
    [undefined, { transport: 'channel', protocol: '' }],
  ])('a WebSocket offering %s gets %j', (offered, want) => {
    expect(negotiate(ws(offered), served, channels)).toEqual(want);
  });

  it('takes the first SPDY protocol the client lists that the server speaks', () => {
    expect(negotiate(spdy('v9.portforward.k8s.io,portforward.k8s.io'), served)).toEqual({ transport: 'spdy', protocol: 'portforward.k8s.io' });
  });

  it.each([
    ['no upgrade', req('POST', {}), [], [400, 'Upgrade request required']],
    ['an unknown upgrade', req('POST', { connection: 'upgrade', upgrade: 'h2c' }), [], [400, 'unable to upgrade: missing upgrade headers in request']],
    ['SPDY with no protocol', spdy(), [], [400, 'unable to upgrade: X-Stream-Protocol-Version is required']],
    ['SPDY with none served', spdy('v4.channel.k8s.io'), [], [403, 'unable to upgrade: unable to negotiate protocol: client supports [v4.channel.k8s.io], server accepts [portforward.k8s.io]']],
    ['a WebSocket with no tunnelled SPDY where channels are not served', ws('v4.channel.k8s.io'), [], [400, 'unable to upgrade: no tunneling spdy protocols provided']],
    ['a WebSocket with channels none served', ws('base64.channel.k8s.io'), channels, [403, expect.stringContaining('server accepts [v4.channel.k8s.io v4.base64.channel.k8s.io]')]],
    ['a WebSocket POST', req('POST', { ...ws('SPDY/3.1+portforward.k8s.io').headers } as Record<string, string>), [], [400, expect.stringContaining('request method is not GET')]],
  ])('refuses %s', (_what, request, served2, want) => {
    expect(refusal(() => negotiate(request, served, served2 as string[]))).toEqual(want);
  });
});
