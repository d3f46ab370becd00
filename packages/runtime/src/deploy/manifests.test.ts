import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { FuncYamlDoc, FunctionProject } from '../project.js';
import { knativeServiceManifest } from './knative-service.js';
import { rawManifests } from './manifests.js';
import { staleTriggers, triggerManifests, triggerName } from './triggers.js';

const IMAGE = `localhost/hello@sha256:${'a'.repeat(64)}`;
const project = (doc: Partial<FuncYamlDoc> = {}): FunctionProject => ({ dir: '/p', file: '/p/func.yaml', name: 'hello', doc: { specVersion: '0.36.0', name: 'hello', runtime: 'typescript', ...doc } });
const raw = (doc: Partial<FuncYamlDoc> = {}, localEnv: NodeJS.ProcessEnv = {}) => rawManifests({ project: project(doc), namespace: 'shop', image: IMAGE, localEnv });
const container = (doc: Partial<FuncYamlDoc> = {}, localEnv: NodeJS.ProcessEnv = {}) => raw(doc, localEnv).deployment.spec.template.spec.containers[0]!;

describe('rawManifests (Knative raw deployer shape)', () => {
  it('names, labels, selector, annotations and the Service as the raw deployer writes them', () => {
    const { deployment, service } = raw({ deploy: { labels: [{ key: 'team', value: 'shop' }, { key: 'function.knative.dev/name', value: 'spoof' }], annotations: { note: 'x' } } });
    const identity = { 'function.knative.dev': 'true', 'function.knative.dev/name': 'hello', 'function.knative.dev/runtime': 'typescript' };
    expect(deployment.metadata).toEqual({ name: 'hello', namespace: 'shop', labels: { team: 'shop', ...identity }, annotations: { note: 'x', 'function.knative.dev/deployer': 'raw' } });
    expect(deployment.spec.selector.matchLabels).toEqual(identity);
    expect(deployment.spec.template.metadata.labels).toEqual({ team: 'shop', ...identity });
    expect(service.spec).toEqual({ type: 'ClusterIP', selector: identity, ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] });
    expect(container()).toMatchObject({ name: 'user-container', image: IMAGE, ports: [{ containerPort: 8080, protocol: 'TCP' }] });
    expect(container().securityContext).toMatchObject({ runAsNonRoot: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' } });
  });

  it('probes on deploy.healthEndpoints (defaults otherwise); readiness every second', () => {
    expect(container().livenessProbe).toEqual({ httpGet: { path: '/health/liveness', port: 8080 } });
    const c = container({ deploy: { healthEndpoints: { liveness: '/alive', readiness: '/ready' } } });
    expect(c.livenessProbe).toEqual({ httpGet: { path: '/alive', port: 8080 } });
    expect(c.readinessProbe).toEqual({ httpGet: { path: '/ready', port: 8080 }, periodSeconds: 1 });
  });

  it.each([
    [{}, 1],
    [{ min: 0 }, 1],
    [{ min: 3 }, 3],
    [{ min: 2, max: 2 }, 2],
  ])('scale %j → %i replicas, no autoscaler', (scale, replicas) => {
    const m = raw({ deploy: { options: { scale } } });
    expect(m.deployment.spec.replicas).toBe(replicas);
    expect(m.autoscaler).toBeUndefined();
  });

  it.each([
    [{ max: 4 }, 1, 4],
    [{ min: 2, max: 5 }, 2, 5],
    [{ min: 0, max: 5 }, 1, 5],
  ])('scale %j → an autoscaling/v2 HPA from %i to %i on CPU, and no replica count on the Deployment', (scale, min, max) => {
    const m = raw({ deploy: { options: { scale, resources: { requests: { cpu: '250m' } } } } });
    expect(m.deployment.spec.replicas).toBeUndefined();
    expect(m.autoscaler).toEqual({
      apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: m.deployment.metadata,
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: m.deployment.metadata.name }, minReplicas: min, maxReplicas: max, metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }] },
    });
  });

  it('warns of what the raw path cannot honour: scale to zero, Knative\'s request metrics, an autoscaler without a CPU request', () => {
    expect(raw({}).warnings).toEqual([]);
    expect(raw({ deploy: { options: { scale: { max: 3 }, resources: { requests: { cpu: '100m' } } } } }).warnings).toEqual([]);
    const [zero] = raw({ deploy: { options: { scale: { min: 0 } } } }).warnings;
    expect(zero).toMatch(/scale\.min is 0, but scaling to zero needs Knative Serving.*keeps at least 1 replica.*--deployer knative/);
    const [knative] = raw({ deploy: { options: { scale: { max: 5, metric: 'rps', target: 50 }, resources: { requests: { cpu: '100m' } } } } }).warnings;
    expect(knative).toMatch(/^func\.yaml deploy\.options\.scale\.metric, target: Knative's request-based autoscaling .* ignored here; the autoscaler scales on CPU \(80 % of the request\)/);
    const [noRequest] = raw({ deploy: { options: { scale: { max: 5 } } } }).warnings;
    expect(noRequest).toMatch(/resources\.requests\.cpu is not set/);
  });

  it('resources, serviceAccountName; same func.yaml → same objects', () => {
    const doc = { deploy: { serviceAccountName: 'fn-sa', options: { resources: { requests: { cpu: '100m' }, limits: { memory: '256Mi', concurrency: 4 } } } } };
    const { deployment } = raw(doc);
    expect(deployment.spec.template.spec.serviceAccountName).toBe('fn-sa');
    expect(container(doc).resources).toEqual({ requests: { cpu: '100m' }, limits: { memory: '256Mi' } });
    expect(raw(doc)).toEqual(raw(doc));
  });

  it('run.envs in every Knative form, and the objects they refer to', () => {
    const envs = [
      { name: 'PLAIN', value: 'x' },
      { name: 'LOCAL', value: '{{ env:FROM_SHELL }}' },
      { name: 'PASSWORD', value: '{{ secret:db:password }}' },
      { name: 'MODE', value: '{{configMap:settings:mode}}' },
      { value: '{{ secret:all-secrets }}' },
      { value: '{{ configMap:all-settings }}' },
    ];
    const { deployment, references } = raw({ run: { envs } }, { FROM_SHELL: 'shell value' });
    const c = deployment.spec.template.spec.containers[0]!;
    expect(c.env).toEqual([
      { name: 'PLAIN', value: 'x' },
      { name: 'LOCAL', value: 'shell value' },
      { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } },
      { name: 'MODE', valueFrom: { configMapKeyRef: { name: 'settings', key: 'mode' } } },
    ]);
    expect(c.envFrom).toEqual([{ secretRef: { name: 'all-secrets' } }, { configMapRef: { name: 'all-settings' } }]);
    expect([...references.secrets].sort()).toEqual(['all-secrets', 'db']);
    expect([...references.configMaps].sort()).toEqual(['all-settings', 'settings']);
  });

  it('run.volumes: secret, configMap, claim, emptyDir (named after its path, so a redeploy changes nothing)', () => {
    const volumes = [
      { secret: 'certs', path: '/etc/certs' },
      { configMap: 'settings', path: '/etc/settings' },
      { persistentVolumeClaim: { claimName: 'data', readOnly: true }, path: '/data' },
      { emptyDir: { medium: 'Memory' as const, sizeLimit: '64Mi' }, path: '/scratch' },
    ];
    const { deployment, references } = raw({ run: { volumes } });
    const spec = deployment.spec.template.spec;
    const hash = createHash('sha256').update('/scratch').digest('hex').slice(0, 7);
    expect(spec.volumes).toEqual([
      { name: 'secret-certs', secret: { secretName: 'certs' } },
      { name: 'config-map-settings', configMap: { name: 'settings' } },
      { name: 'pvc-data', persistentVolumeClaim: { claimName: 'data', readOnly: true } },
      { name: `empty-dir-${hash}`, emptyDir: { medium: 'Memory', sizeLimit: '64Mi' } },
    ]);
    expect(spec.containers[0]!.volumeMounts).toEqual([
      { name: 'secret-certs', mountPath: '/etc/certs' },
      { name: 'config-map-settings', mountPath: '/etc/settings' },
      { name: 'pvc-data', mountPath: '/data' },
      { name: `empty-dir-${hash}`, mountPath: '/scratch' },
    ]);
    expect([...references.claims]).toEqual(['data']);
  });

  it.each([
    ['a local variable that is not set', { run: { envs: [{ name: 'A', value: '{{ env:NOT_SET_ANYWHERE }}' }] } }, /run\.envs entry A .*NOT_SET_ANYWHERE.*not set/],
    ['an unknown source', { run: { envs: [{ name: 'A', value: '{{ vault:x:y }}' }] } }, /unknown source "vault"/],
    ['a template that does not parse', { run: { envs: [{ name: 'A', value: '{{ secret:a:b:c }}' }] } }, /not one of/],
    ['a named secret without a key', { run: { envs: [{ name: 'A', value: '{{ secret:db }}' }] } }, /takes one key/],
    ['an unnamed plain value', { run: { envs: [{ value: 'x' }] } }, /without a name must import/],
    ['an unnamed single key', { run: { envs: [{ value: '{{ secret:db:k }}' }] } }, /needs a variable name/],
    ['PORT set to another port (the port conflict)', { run: { envs: [{ name: 'PORT', value: '9090' }] } }, /sets PORT=9090, which conflicts with the function's port: the image listens on 8080/],
    ['a duplicated mount path', { run: { volumes: [{ secret: 'a', path: '/x' }, { configMap: 'b', path: '/x' }] } }, /mount path \/x is defined more than once/],
    ['a volume without a path', { run: { volumes: [{ secret: 'a' }] } }, /needs an absolute path/],
    ['min above max', { deploy: { options: { scale: { min: 5, max: 2 } } } }, /min \(5\) is above max \(2\)/],
  ])('refuses %s with one message', (_, doc, message) => {
    expect(() => raw(doc as Partial<FuncYamlDoc>)).toThrow(message);
  });

  it('PORT=8080 is no conflict', () => {
    expect(container({ run: { envs: [{ name: 'PORT', value: '8080' }] } }).env).toEqual([{ name: 'PORT', value: '8080' }]);
  });
});

describe('knativeServiceManifest', () => {
  it('the same container; scale as autoscaling annotations; concurrency; probes without a port', () => {
    const { service } = knativeServiceManifest({ project: project({ deploy: { options: { scale: { min: 1, max: 3, metric: 'rps', target: 50, utilization: 70 }, resources: { limits: { concurrency: 10 } } } } }), namespace: 'shop', image: IMAGE, localEnv: {} });
    expect(service).toMatchObject({ apiVersion: 'serving.knative.dev/v1', kind: 'Service', metadata: { name: 'hello', namespace: 'shop', annotations: { 'function.knative.dev/deployer': 'knative' } } });
    const template = (service.spec as { template: { metadata: { annotations: Record<string, string> }; spec: { containers: { readinessProbe: unknown; ports?: unknown }[]; containerConcurrency: number } } }).template;
    expect(template.metadata.annotations).toMatchObject({ 'autoscaling.knative.dev/min-scale': '1', 'autoscaling.knative.dev/max-scale': '3', 'autoscaling.knative.dev/metric': 'rps', 'autoscaling.knative.dev/target': '50', 'autoscaling.knative.dev/target-utilization-percentage': '70' });
    expect(template.spec.containerConcurrency).toBe(10);
    expect(template.spec.containers[0]!.readinessProbe).toEqual({ httpGet: { path: '/health/readiness' } });
    expect(template.spec.containers[0]!.ports).toBeUndefined();
  });
});

describe('Triggers', () => {
  it('are named as Knative names them: <function>-trigger-<first 4 bytes of sha256(broker|k=v… sorted)>', () => {
    const expected = createHash('sha256').update('default|source=/shop|type=order.created').digest('hex').slice(0, 8);
    expect(triggerName('hello', { source: 'default', filters: { type: 'order.created', source: '/shop' } })).toBe(`hello-trigger-${expected}`);
    expect(triggerName('hello', { source: 'default' })).toBe(`hello-trigger-${createHash('sha256').update('default').digest('hex').slice(0, 8)}`);
  });

  it('one per subscription, owned, managed, filtered, delivering to the Service; stale ones found', () => {
    const p = project({ deploy: { subscriptions: [{ source: 'default', filters: { type: 'a' } }, { source: 'other' }] } });
    const owner = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'hello', uid: 'u1', controller: true };
    const triggers = triggerManifests({ project: p, namespace: 'shop', subscriber: { apiVersion: 'v1', kind: 'Service', name: 'hello' }, owner });
    expect(triggers).toHaveLength(2);
    expect(triggers[0]).toMatchObject({
      apiVersion: 'eventing.knative.dev/v1', kind: 'Trigger',
      metadata: { namespace: 'shop', annotations: { 'func.knative.dev/managed-by': 'func-raw-deployer' }, ownerReferences: [owner] },
      spec: { broker: 'default', filter: { attributes: { type: 'a' } }, subscriber: { ref: { apiVersion: 'v1', kind: 'Service', name: 'hello', namespace: 'shop' } } },
    });
    expect(triggers[1]!.spec).not.toHaveProperty('filter');
    const mine = (name: string, managed = true) => ({ apiVersion: 'eventing.knative.dev/v1', kind: 'Trigger', metadata: { name, ...(managed ? { annotations: { 'func.knative.dev/managed-by': 'func-raw-deployer' } } : {}) } });
    const existing = [triggers[0]!, mine('hello-trigger-00000000'), mine('hello-trigger-11111111', false), mine('other-trigger-22222222')];
    expect(staleTriggers(existing, 'hello', triggers)).toEqual(['hello-trigger-00000000']);
  });
});
