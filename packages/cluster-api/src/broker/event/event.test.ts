import { describe, expect, it } from 'vitest';
import { decodeRecord, encodeRecord } from './event.js';
import { decodeHeaderValue, decodeMessage, encodeBinary, encodeHeaderValue, fromStructured } from './http-codec.js';
import { invalidEvent, isRfc3339 } from './validate.js';

const base = { specversion: '1.0', id: '1', source: '/s', type: 't' };

describe('log records', () => {
  it('round-trip attributes, data bytes, TTL and trace context; absent data stays absent', () => {
    const data = Buffer.from([0, 255, 10]);
    const r = decodeRecord(encodeRecord({ event: { attributes: { ...base, n: 3, b: true }, data }, ttl: 7, traceparent: 'tp', tracestate: 'ts' }));
    expect(r).toEqual({ event: { attributes: { ...base, n: 3, b: true }, data }, ttl: 7, traceparent: 'tp', tracestate: 'ts' });
    expect(decodeRecord(encodeRecord({ event: { attributes: base }, ttl: 1 })).event.data).toBeUndefined();
    expect(decodeRecord(encodeRecord({ event: { attributes: base, data: Buffer.alloc(0) }, ttl: 1 })).event.data).toEqual(Buffer.alloc(0));
  });
});

describe('HTTP binding', () => {
  it.each(['plain', 'with space', 'quote"and%percent', 'ünïcødé ✓', ''])('header value %j round-trips', (v) => {
    const encoded = encodeHeaderValue(v);
    expect(encoded).toMatch(/^[\x21-\x7e]*$/);
    expect(decodeHeaderValue(encoded)).toBe(v);
  });

  it('keeps a lone % that is not an escape', () => {
    expect(decodeHeaderValue('100%')).toBe('100%');
  });

  it.each([
    [{ data: { a: 1 } }, '{"a":1}'],
    [{ datacontenttype: 'application/json', data: 'text' }, '"text"'],
    [{ datacontenttype: 'text/plain', data: 'text' }, 'text'],
    [{ datacontenttype: 'application/vnd.x+json', data: [1] }, '[1]'],
    [{ data_base64: Buffer.from('bytes').toString('base64') }, 'bytes'],
  ])('structured %j → data bytes %s', (extra, bytes) => {
    const e = fromStructured({ ...base, ...extra });
    expect('attributes' in e && Buffer.from(e.data!).toString()).toBe(bytes);
  });

  it('encodes binary mode with Content-Type from datacontenttype, JSON when implied', () => {
    const h: Record<string, string> = {};
    encodeBinary({ attributes: { ...base, n: 5 }, data: Buffer.from('{}') }, h);
    expect(h).toEqual({ 'ce-specversion': '1.0', 'ce-id': '1', 'ce-source': '/s', 'ce-type': 't', 'ce-n': '5', 'content-type': 'application/json' });
  });

  it('reads a binary request back to the event it came from', () => {
    const h: Record<string, string> = {};
    const body = encodeBinary({ attributes: { ...base, subject: 'a b', datacontenttype: 'text/plain' }, data: Buffer.from('x') }, h);
    const events = decodeMessage(h, Buffer.from(body!));
    expect(events).toEqual([{ attributes: { ...base, subject: 'a b', datacontenttype: 'text/plain' }, data: Buffer.from('x') }]);
  });
});

describe('validation', () => {
  it.each([
    ['2018-04-05T17:31:00Z', true],
    ['2018-04-05t17:31:00.123456+02:00', true],
    ['2018-04-05T17:31:60Z', true],
    ['2018-04-05 17:31:00Z', false],
    ['2018-02-30T00:00:00', false],
    ['2018-00-10T00:00:00Z', false],
    ['2018-01-10T24:00:00Z', false],
    ['2018-01-10T00:00:00+25:00', false],
  ])('RFC 3339 %s → %s', (v, ok) => {
    expect(isRfc3339(v)).toBe(ok);
  });

  it.each([
    [{ ...base }, undefined],
    [{ ...base, ext: 2147483648 }, 'extension ext is not a 32-bit integer'],
    [{ ...base, ext: 1.5 }, 'extension ext is not a 32-bit integer'],
    [{ ...base, ext: null }, 'attribute ext must be a string, an integer or a boolean'],
    [{ ...base, subject: '' }, 'subject must not be empty'],
    [{ ...base, datacontenttype: 'json' }, 'datacontenttype "json" is not a media type'],
    [{ ...base, source: 'http://x/%zz' }, 'source "http://x/%zz" is not a URI-reference'],
    [{ ...base, ['a'.repeat(65)]: 'x' }, expect.stringContaining('is not lower-case letters and digits (at most 64)')],
  ])('%j → %s', (attrs, why) => {
    expect(invalidEvent(attrs)).toEqual(why);
  });
});
