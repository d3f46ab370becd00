/**
 * kubectl with CustomResourceDefinitions, as a user runs it: Knative Eventing's real CRDs applied
 * unchanged (from shared/crds, beside the repository), their objects validated, defaulted, pruned and
 * printed; and the test CRD through get, describe, scale, patch --subresource=status, explain and
 * `get all` via categories.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKubectl, startKubectlServer, type KubectlServer } from '../support/helpers.js';
import { widgetCrdYaml } from '../support/crd-fixtures.js';

const kubectlBin = '/usr/bin/kubectl';
const knative = fileURLToPath(new URL('../../../../../shared/crds/knative-eventing', import.meta.url));

const objects = `apiVersion: eventing.knative.dev/v1
kind: Broker
metadata:
  name: default
  annotations: {eventing.knative.dev/broker.class: MTChannelBasedBroker}
spec:
  delivery: {retry: 3, backoffPolicy: exponential, timeout: PT1S}
  notInSchema: dropped
---
apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata:
  name: orders
spec:
  broker: default
  filter: {attributes: {type: dev.example.order}}
  subscriber: {uri: http://orders.example/, unknown: dropped}
---
apiVersion: sources.knative.dev/v1
kind: PingSource
metadata:
  name: ping
spec:
  schedule: "*/1 * * * *"
  data: '{"hello":"world"}'
  sink: {uri: http://sink.example/}
`;

describe.runIf(existsSync(kubectlBin) && existsSync(knative))('kubectl with CustomResourceDefinitions', () => {
  let k: KubectlServer;
  const kubectl = (...args: string[]) => runKubectl(kubectlBin, k.env, args);

  beforeAll(async () => {
    k = await startKubectlServer();
    writeFileSync(join(k.dir, 'objects.yaml'), objects);
    writeFileSync(join(k.dir, 'widgets.yaml'), widgetCrdYaml);
  });
  afterAll(() => k?.close());

  it("installs Knative Eventing's CRDs unchanged, established", async () => {
    const r = await kubectl('apply', '-f', knative);
    expect(r.stderr).toBe('');
    // serve installed its own Broker and Trigger CRDs at start: Knative's replace them.
    expect(r.stdout).toContain('customresourcedefinition.apiextensions.k8s.io/brokers.eventing.knative.dev configured');
    const wait = await kubectl('wait', '--for=condition=Established', '--timeout=10s', '-f', knative);
    expect(wait.stdout.match(/condition met/g)).toHaveLength(4);
    expect((await kubectl('get', 'crd')).stdout).toMatch(/^NAME\s+CREATED AT\n(.+\n)*brokers\.eventing\.knative\.dev\s+\d{4}-/);
    expect((await kubectl('api-resources', '--api-group=eventing.knative.dev')).stdout).toMatch(/triggers\s+eventing\.knative\.dev\/v1\s+true\s+Trigger/);
  });

  it('validates, prunes and prints Brokers, Triggers and PingSources with their columns', async () => {
    // kubectl validates against /openapi/v2 first (strict, as on Kubernetes): the unknown field is refused
    // there; with validation off it reaches the server, which prunes it.
    const refused = await kubectl('apply', '-f', join(k.dir, 'objects.yaml'));
    expect(refused.stderr).toContain('ValidationError(Broker.spec): unknown field "notInSchema" in eventing.knative.dev.v1.Broker.spec');
    const applied = await kubectl('apply', '--validate=false', '-f', join(k.dir, 'objects.yaml'));
    expect(applied.stderr).toBe('');
    const broker = JSON.parse((await kubectl('get', 'broker', 'default', '-o', 'json')).stdout);
    expect(broker.spec).toEqual({ delivery: { retry: 3, backoffPolicy: 'exponential', timeout: 'PT1S' } });
    const trigger = JSON.parse((await kubectl('get', 'trigger', 'orders', '-o', 'json')).stdout);
    expect(trigger.spec.subscriber).toEqual({ uri: 'http://orders.example/' });
    const status = { status: { address: { url: 'http://broker-ingress/default/default' }, conditions: [{ type: 'Ready', status: 'True', reason: 'Ready' }] } };
    expect((await kubectl('patch', 'broker', 'default', '--subresource=status', '--type=merge', '-p', JSON.stringify(status))).stderr).toBe('');
    await kubectl('patch', 'trigger', 'orders', '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: { subscriberUri: 'http://orders.example/', conditions: [{ type: 'Ready', status: 'False', reason: 'Waiting' }] } }));
    expect((await kubectl('get', 'brokers')).stdout).toMatch(/^NAME\s+URL\s+AGE\s+READY\s+REASON\ndefault\s+http:\/\/broker-ingress\/default\/default\s+\d+s\s+True\s+Ready\n$/);
    expect((await kubectl('get', 'brokers', '-o', 'wide')).stdout).toMatch(/CLASS\n.*MTChannelBasedBroker\n$/);
    expect((await kubectl('get', 'triggers')).stdout).toMatch(/^NAME\s+BROKER\s+SUBSCRIBER_URI\s+AGE\s+READY\s+REASON\norders\s+default\s+http:\/\/orders\.example\/\s+\d+s\s+False\s+Waiting\n$/);
    // The PingSource controller resolved its sink (status.sinkUri): the SINK column shows it.
    expect((await kubectl('get', 'pingsources')).stdout).toMatch(/^NAME\s+SINK\s+SCHEDULE\s+AGE\s+READY\s+REASON\nping\s+(http:\/\/sink\.example\/\s+)?\*\/1 \* \* \* \*/);
    const bad = await kubectl('patch', 'trigger', 'orders', '--type=merge', '-p', '{"spec":{"delivery":{"retry":"three"}}}');
    expect(bad.stderr).toContain('The Trigger "orders" is invalid: spec.delivery.retry: Invalid value: "string": spec.delivery.retry in body must be of type integer: "string"');
    const all = (await kubectl('get', 'knative')).stdout;
    expect(all).toContain('broker.eventing.knative.dev/default');
    expect(all).toContain('pingsource.sources.knative.dev/ping');
  });

  it('serves EventTypes at their storage version; a version needing the absent conversion webhook fails as on Kubernetes', async () => {
    writeFileSync(join(k.dir, 'eventtype.yaml'), 'apiVersion: eventing.knative.dev/v1beta2\nkind: EventType\nmetadata: {name: order-created}\nspec: {type: dev.example.order.created, source: "https://shop.example/orders", description: New orders}\n');
    expect((await kubectl('apply', '-f', join(k.dir, 'eventtype.yaml'))).stderr).toBe('');
    const table = (await kubectl('get', 'eventtypes.v1beta2.eventing.knative.dev')).stdout;
    expect(table).toMatch(/^NAME\s+TYPE\s+SOURCE\s+SCHEMA\s+REFERENCE NAME\s+REFERENCE KIND\s+DESCRIPTION\s+READY\s+REASON\norder-created\s+dev\.example\.order\.created\s+https:\/\/shop\.example\/orders\s+New orders/);
    const converted = await kubectl('get', 'eventtypes.v1beta3.eventing.knative.dev', 'order-created');
    expect(converted.stderr).toContain('conversion webhook for eventing.knative.dev/v1beta2, Kind=EventType failed: Post "https://eventing-webhook.knative-eventing.svc:443/?timeout=30s": service "eventing-webhook" not found');
  });

  it('serves a CRD of its own through get, describe, scale, status, explain and categories', async () => {
    expect((await kubectl('apply', '-f', join(k.dir, 'widgets.yaml'))).stderr).toBe('');
    await kubectl('wait', '--for=condition=Established', '--timeout=10s', 'crd/widgets.example.com');
    writeFileSync(join(k.dir, 'w.yaml'), 'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1}\nspec: {color: blue, name: small}\n');
    expect((await kubectl('apply', '-f', join(k.dir, 'w.yaml'))).stdout).toBe('widget.example.com/w1 created\n');
    expect((await kubectl('get', 'wg')).stdout).toMatch(/^NAME\s+COLOR\s+REPLICAS\s+PHASE\s+AGE\nw1\s+blue\s+1\s+\S*\s*\d+s\n$/);
    expect((await kubectl('scale', 'widget', 'w1', '--replicas=4')).stdout).toBe('widget.example.com/w1 scaled\n');
    expect((await kubectl('get', 'widget', 'w1', '-o', 'jsonpath={.spec.replicas}')).stdout).toBe('4');
    await kubectl('patch', 'widget', 'w1', '--subresource=status', '--type=merge', '-p', '{"status":{"phase":"Running","replicas":4}}');
    expect((await kubectl('get', 'widgets', '-o', 'wide')).stdout).toMatch(/w1\s+blue\s+4\s+Running\s+\d+s\s+small\n$/);
    const describe = (await kubectl('describe', 'widget', 'w1')).stdout;
    expect(describe).toMatch(/^Name:\s+w1$/m);
    expect(describe).toMatch(/^\s+Phase:\s+Running$/m);
    const explain = (await kubectl('explain', 'widgets.spec.color')).stdout;
    expect(explain).toMatch(/FIELD:\s+color <string>/);
    expect(explain).toContain('ENUM:');
    expect((await kubectl('get', 'all')).stdout).toContain('widget.example.com/w1');
    expect((await kubectl('get', 'toys')).stdout).toContain('w1');
  });

  it('answers malformed input as Kubernetes does', async () => {
    const invalid = await kubectl('patch', 'widget', 'w1', '--type=merge', '-p', '{"spec":{"color":"purple"}}');
    expect(invalid.stderr).toContain('The Widget "w1" is invalid: spec.color: Unsupported value: "purple": supported values: "red", "green", "blue"');
    const scope = await kubectl('patch', 'crd', 'widgets.example.com', '--type=merge', '-p', '{"spec":{"scope":"Cluster"}}');
    expect(scope.stderr).toContain('The CustomResourceDefinition "widgets.example.com" is invalid: spec.scope: Invalid value: "Cluster": field is immutable');
    writeFileSync(join(k.dir, 'bad.yaml'), widgetCrdYaml.replace('name: widgets.example.com', 'name: gadgets.example.com'));
    const mismatch = await kubectl('apply', '-f', join(k.dir, 'bad.yaml'));
    expect(mismatch.stderr).toContain('metadata.name: Invalid value: "gadgets.example.com": must be spec.names.plural+"."+spec.group');
    expect((await kubectl('get', 'widgets.v9.example.com')).stderr).toContain("the server doesn't have a resource type");
  });

  it('deletes the custom resources with the CRD', async () => {
    const r = await kubectl('delete', 'crd', 'widgets.example.com', '--timeout=20s');
    expect(r.stdout).toBe('customresourcedefinition.apiextensions.k8s.io "widgets.example.com" deleted\n');
    expect((await kubectl('get', 'crd', 'widgets.example.com')).stderr).toContain('NotFound');
    expect((await kubectl('api-resources', '--api-group=example.com')).stdout).not.toContain('widgets');
  });
});
