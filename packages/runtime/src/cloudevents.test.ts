import { CloudEvent } from 'cloudevents';
import { describe, expect, it } from 'vitest';
import { decodeCloudEvents } from './cloudevent-decode.js';
import { encodeBinary, isoTime, newCloudEvent, sdkCloudEvent } from './cloudevents.js';

describe('isoTime', () => {
  it('writes what Date#toISOString writes, across second, minute, day and year boundaries', () => {
    const boundaries = [0, 1, 9, 10, 99, 100, 999, 1000, 59_999, 60_000, 3_599_999, 86_399_999, 951_782_399_999, Date.UTC(2026, 11, 31, 23, 59, 59, 999)];
    const moments = boundaries.flatMap((ms) => [ms, ms + 1, ms + 61_001]);
    const now = Date.now();
    for (let i = 0; i < 2000; i++) moments.push(now + i * 7919);
    for (const ms of moments) expect(isoTime(ms), String(ms)).toBe(new Date(ms).toISOString());
  });

  it('hands what it does not write itself (before 1970, after year 9999, fractions) to Date', () => {
    for (const ms of [-1, -86_400_001, 253_402_300_800_000, 8.64e15, 1.5]) expect(isoTime(ms), String(ms)).toBe(new Date(ms).toISOString());
  });
});

describe('newCloudEvent', () => {
  it('fills in id and time, and builds a frozen SDK CloudEvent', () => {
    const before = Date.now();
    const event = newCloudEvent({ data: { n: 1 }, source: '/s', type: 't' });
    expect(event).toBeInstanceOf(CloudEvent);
    expect(Object.isFrozen(event)).toBe(true);
    expect(event.id).toMatch(/^[0-9a-f-]{36}$/);
    const time = Date.parse(event.time as string);
    expect(time).toBeGreaterThanOrEqual(before);
    expect(time).toBeLessThanOrEqual(Date.now());
    expect(event.time).toBe(new Date(time).toISOString());
  });

  it.each([
    ['an empty source', { source: '', type: 't' }, /"source" is missing or empty/],
    ['a type that is not a string', { source: '/s', type: 7 }, /"type" is missing or empty/],
    ['an unsupported specversion', { source: '/s', type: 't', specversion: '2.0' }, /specversion "2\.0" is not supported/],
    ['an extension name with capitals', { source: '/s', type: 't', BadName: 'x' }, /attribute name "BadName"/],
    ['an extension name with a dash', { source: '/s', type: 't', 'my-ext': 'x' }, /attribute name "my-ext"/],
    ['an empty extension name', { source: '/s', type: 't', '': 'x' }, /attribute name ""/],
    ['a time that is no timestamp', { source: '/s', type: 't', time: 'yesterday' }, /time "yesterday"/],
  ])('rejects %s', (_what, attributes, message) => {
    expect(() => newCloudEvent(attributes)).toThrow(message);
  });
});

describe('attribute names', () => {
  it('takes lower-case letters and digits, and the SDK\'s own names (data_base64 among them)', () => {
    const event = newCloudEvent({ source: '/s', type: 't', ext1: 'a', '2x': 'b', data_base64: 'AA==' });
    expect(event).toMatchObject({ ext1: 'a', '2x': 'b' });
    expect(encodeBinary(event, []).headers).toEqual(expect.arrayContaining(['ce-ext1', 'a', 'ce-2x', 'b']));
  });
});

describe('encodeBinary', () => {
  it('checks an event it did not see built, even right after one it did', () => {
    const good = newCloudEvent({ data: 'x', source: '/s', type: 't', id: 'good' });
    expect(encodeBinary(good, []).headers).toEqual(expect.arrayContaining(['ce-id', 'good', 'ce-source', '/s']));
    const unchecked = sdkCloudEvent({ source: '/s', type: '', id: 'bad' });
    expect(() => encodeBinary(unchecked, [])).toThrow(/"type" is missing or empty/);
    expect(() => encodeBinary({ specversion: '1.0', id: '1', source: '/s', type: 't', 'Bad-Name': 'x' } as never, [])).toThrow(/attribute name "Bad-Name"/);
  });

  it('puts the base headers first and sends each attribute once', () => {
    const event = newCloudEvent({ data: { a: 1 }, source: '/s', type: 't', id: 'i' });
    const { headers, body } = encodeBinary(event, ['access-control-allow-origin', '*']);
    expect(headers.slice(0, 4)).toEqual(['access-control-allow-origin', '*', 'content-type', 'application/json; charset=utf-8']);
    const names = headers.filter((_, i) => i % 2 === 0);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(expect.arrayContaining(['ce-id', 'ce-time', 'ce-type', 'ce-source', 'ce-specversion']));
    expect(body).toBe('{"a":1}');
  });
});

describe('decodeCloudEvents, binary mode', () => {
  const headers = {
    host: 'fn', 'content-type': 'application/json', 'ce-specversion': '1.0', 'ce-id': 'e-1', 'ce-source': '/orders',
    'ce-type': 'order.created', 'ce-time': '2026-11-25T12:00:00.5+01:00', 'ce-subject': 'o-7', 'ce-myext': 'v',
  };

  it('builds the event the SDK constructor builds from the same attributes', () => {
    const { events, body } = decodeCloudEvents(headers, Buffer.from('{"order":7}'));
    const sdk = new CloudEvent({
      specversion: '1.0', id: 'e-1', source: '/orders', type: 'order.created', time: '2026-11-25T11:00:00.500Z',
      subject: 'o-7', myext: 'v', datacontenttype: 'application/json', data: { order: 7 },
    });
    expect(events[0]).toBeInstanceOf(CloudEvent);
    expect(Object.keys(events[0]!).sort()).toEqual(Object.keys(sdk).sort());
    expect(JSON.parse(JSON.stringify(events[0]))).toEqual(JSON.parse(JSON.stringify(sdk)));
    expect(body).toEqual({ order: 7 });
  });

  it.each(['ce-id', 'ce-source', 'ce-type', 'ce-specversion'])('rejects an event without %s', (name) => {
    const without: Record<string, string> = { ...headers };
    delete without[name];
    expect(() => decodeCloudEvents(without, Buffer.from('{}'))).toThrow(new RegExp(`"?${name}`));
  });
});
