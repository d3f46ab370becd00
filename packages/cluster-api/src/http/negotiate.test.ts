import { describe, expect, it } from 'vitest';
import { decodeBody, encode, negotiateOutput, negotiateWatch, patchTypeOf } from './negotiate.js';

const kubectlGet = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

describe('negotiateOutput', () => {
  it.each([
    [undefined, { format: 'json' }],
    ['', { format: 'json' }],
    ['application/json', { format: 'json' }],
    ['*/*', { format: 'json' }],
    ['application/yaml', { format: 'yaml' }],
    [kubectlGet, { format: 'table', tableVersion: 'v1' }],
    ['application/json;as=Table;v=v1beta1;g=meta.k8s.io', { format: 'table', tableVersion: 'v1beta1' }],
    ['application/vnd.kubernetes.protobuf, application/json', { format: 'json' }],
    ['application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io, application/json', { format: 'json' }],
    ['application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io, application/json', { format: 'json', partial: { kind: 'PartialObjectMetadataList', version: 'v1' } }],
    ['application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json', { format: 'protobuf', partial: { kind: 'PartialObjectMetadata', version: 'v1' } }],
    ['application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1, application/yaml;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1', { format: 'yaml', partial: { kind: 'PartialObjectMetadataList', version: 'v1beta1' } }],
    ['application/json;as=PartialObjectMetadata;g=example.com;v=v1, application/json', { format: 'json' }],
    ['application/json;pretty=1', { format: 'json', pretty: true }],
    ['application/yaml;q=0.5, application/json', { format: 'json' }],
  ])('Accept %s', (accept, want) => {
    expect(negotiateOutput(accept)).toEqual(want);
  });

  it.each(['application/vnd.kubernetes.protobuf', 'text/html', 'application/json;q=0', 'application/json;as=Table;v=v9;g=meta.k8s.io'])(
    'refuses %s with 406',
    (accept) => {
      expect(() => negotiateOutput(accept)).toThrow(expect.objectContaining({ code: 406, reason: 'NotAcceptable' }));
    },
  );

  it('watch streams are JSON or Table, never YAML', () => {
    expect(negotiateWatch('application/json;stream=watch')).toEqual({ format: 'json' });
    expect(negotiateWatch(`${kubectlGet}`)).toEqual({ format: 'table', tableVersion: 'v1' });
    expect(() => negotiateWatch('application/yaml')).toThrow(expect.objectContaining({ code: 406 }));
  });
});

describe('bodies', () => {
  it.each([
    [undefined, '{"a":1}', { a: 1 }],
    ['application/json', '{"a":1}', { a: 1 }],
    ['application/json; charset=utf-8', '{"a":1}', { a: 1 }],
    ['application/yaml', 'a: 1\nb: [x]\n', { a: 1, b: ['x'] }],
    ['application/merge-patch+json', '{"a":null}', { a: null }],
  ])('decodes %s', (type, text, want) => {
    expect(decodeBody(type, Buffer.from(text))).toEqual(want);
  });

  it.each([
    ['application/json', '{"a":', 400],
    ['application/yaml', 'a: [1', 400],
    ['application/vnd.kubernetes.protobuf', 'k8s\0', 400],
    ['text/plain', 'hello', 415],
    ['application/x-www-form-urlencoded', 'a=1', 415],
  ])('refuses %s %j with %i', (type, text, code) => {
    expect(() => decodeBody(type, Buffer.from(text))).toThrow(expect.objectContaining({ code }));
  });

  it('maps patch content types and refuses others with 415', () => {
    expect(patchTypeOf('application/json-patch+json')).toBe('json');
    expect(patchTypeOf('application/merge-patch+json')).toBe('merge');
    expect(patchTypeOf('application/strategic-merge-patch+json; charset=utf-8')).toBe('strategic');
    expect(() => patchTypeOf('application/json')).toThrow(expect.objectContaining({ code: 415 }));
    expect(() => patchTypeOf(undefined)).toThrow(expect.objectContaining({ code: 415 }));
  });

  it('encodes JSON, pretty JSON and YAML', () => {
    expect(encode({ a: '<&>' }, 'json', false)).toEqual({ contentType: 'application/json', body: '{"a":"\\u003c\\u0026\\u003e"}\n' });
    expect(encode({ a: 1 }, 'json', true).body).toBe('{\n  "a": 1\n}');
    expect(encode({ a: 1 }, 'yaml', false)).toEqual({ contentType: 'application/yaml', body: 'a: 1\n' });
  });
});
