import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject } from 'ajv';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';

const schemaPath = new URL('../../../func.schema.json', import.meta.url);
const schema = JSON.parse(readFileSync(schemaPath, 'utf8')) as object;
// Ajv's default strict mode: a keyword it does not know fails compilation instead of being ignored.
const validate = new Ajv({ allErrors: true }).compile(schema);

function errorsOf(document: unknown): ErrorObject[] {
  return validate(document) ? [] : (validate.errors ?? []);
}

/** A valid minimal document with the given YAML fragment's fields laid over it. */
function withFields(fragment: string): unknown {
  return { specVersion: '0.36.0', name: 'hello', ...(parse(fragment) as object) };
}

// What `func create -l typescript` and a deployed Knative function leave in func.yaml.
const knativeDocument = `
specVersion: 0.36.0
name: order-events
runtime: typescript
registry: quay.io/alice
image: quay.io/alice/order-events:latest
imageDigest: sha256:${'a1'.repeat(32)}
namespace: shop
created: 2024-05-02T10:11:12.345678+02:00
invoke: cloudevent
build:
  builder: pack
  buildpacks: []
  builderImages:
    pack: ghcr.io/knative/builder-jammy-base:latest
  buildEnvs:
    - name: BP_NODE_RUN_SCRIPTS
      value: build
  git:
    url: https://github.com/alice/order-events
    revision: main
run:
  envs:
    - name: FUNC_LOG_LEVEL
      value: debug
    - value: '{{ secret:shop-secrets }}'
  volumes:
    - secret: shop-tls
      path: /etc/tls
    - emptyDir:
        medium: Memory
        sizeLimit: 64Mi
      path: /scratch
deploy:
  namespace: shop
  annotations:
    team: payments
  labels:
    - key: app.kubernetes.io/part-of
      value: shop
  options:
    scale:
      min: 0
      max: 10
      metric: concurrency
      target: 75
      utilization: 70
    resources:
      requests:
        cpu: 100m
        memory: 128Mi
      limits:
        cpu: '1'
        memory: 256Mi
        concurrency: 100
  healthEndpoints:
    liveness: /health/liveness
    readiness: /health/readiness
  serviceAccountName: order-events
  subscriptions:
    - source: default
      filters:
        type: com.example.order.created
`;

describe('func.schema.json', () => {
  it('accepts a minimal func.yaml', () => {
    expect(errorsOf(parse('specVersion: 0.36.0\nname: hello\n'))).toEqual([]);
  });

  it('accepts a full Knative Functions func.yaml', () => {
    expect(errorsOf(parse(knativeDocument))).toEqual([]);
  });

  it.each([
    ['a name with capitals', 'name: Hello', '/name', 'pattern'],
    ['a name longer than 63 characters', `name: ${'a'.repeat(64)}`, '/name', 'maxLength'],
    ['a name ending in a dash', 'name: hello-', '/name', 'pattern'],
    ['an unknown top-level field', 'entry: src/index.ts', '', 'additionalProperties'],
    ['an unknown invoke hint', 'invoke: grpc', '/invoke', 'enum'],
    ['a created time that is not RFC 3339', 'created: yesterday', '/created', 'pattern'],
    ['an image digest that is not sha256', 'imageDigest: md5:abc', '/imageDigest', 'pattern'],
    ['an unknown builder', 'build:\n  builder: make', '/build/builder', 'enum'],
    ['an env name with a space', 'run:\n  envs:\n    - name: MY VAR\n      value: x', '/run/envs/0/name', 'pattern'],
    ['an env value that is a number', 'run:\n  envs:\n    - name: N\n      value: 3', '/run/envs/0/value', 'type'],
    ['a volume with two sources', 'run:\n  volumes:\n    - secret: a\n      configMap: b\n      path: /x', '/run/volumes/0', 'oneOf'],
    ['a negative minimum scale', 'deploy:\n  options:\n    scale:\n      min: -1', '/deploy/options/scale/min', 'minimum'],
    ['a utilization above 100', 'deploy:\n  options:\n    scale:\n      utilization: 150', '/deploy/options/scale/utilization', 'maximum'],
    ['a cpu limit that is not a quantity', 'deploy:\n  options:\n    resources:\n      limits:\n        cpu: lots', '/deploy/options/resources/limits/cpu', 'pattern'],
    ['a label without a key', 'deploy:\n  labels:\n    - value: x', '/deploy/labels/0', 'required'],
    ['a label key with a space', 'deploy:\n  labels:\n    - key: my key', '/deploy/labels/0/key', 'pattern'],
    ['a health endpoint that is not a path', 'deploy:\n  healthEndpoints:\n    liveness: health', '/deploy/healthEndpoints/liveness', 'pattern'],
    ['an unknown health endpoint', 'deploy:\n  healthEndpoints:\n    startup: /s', '/deploy/healthEndpoints', 'additionalProperties'],
    ['annotations that are not strings', 'deploy:\n  annotations:\n    replicas: 3', '/deploy/annotations/replicas', 'type'],
  ])('rejects %s, naming the bad field', (_what, fragment, path, keyword) => {
    const errors = errorsOf(withFields(fragment));
    expect(errors.map((e) => [e.instancePath, e.keyword])).toContainEqual([path, keyword]);
  });

  it('names the unknown property it rejects', () => {
    const [error] = errorsOf(withFields('entry: src/index.ts'));
    expect(error?.params).toEqual({ additionalProperty: 'entry' });
  });

  it.each([
    ['specVersion', 'name: hello'],
    ['name', 'specVersion: 0.36.0'],
  ])('requires %s', (field, doc) => {
    const errors = errorsOf(parse(doc));
    expect(errors).toContainEqual(expect.objectContaining({ keyword: 'required', params: { missingProperty: field } }));
  });
});
