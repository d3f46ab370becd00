/**
 * `func-runtime deploy`, `undeploy` and `describe` against the real cluster API (`cluster-api
 * serve`, its own kubeconfig, its data directory's image layout) with real kubectl: the dry run's
 * manifests apply with `kubectl apply` unchanged; a deploy server-side applies as field manager
 * `func` and records itself in func.yaml; each malformed case ends in one message and exit 1 with
 * the deployed version untouched; Triggers follow func.yaml's subscriptions; a Knative Service
 * replaces Deployment + Service when the cluster serves that kind. (Rollouts to Running pods, which
 * need the node agent and the workload controllers, are in rollout.test.ts.)
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImageLayout } from '@func/oci';
import { startCluster, type Cluster } from '../../kube-client/test/cluster.js';
import { haveRegistry, startRegistry, type RunningRegistry } from '../../oci/test/registry-server.js';
import { copyFixture, killAll, spawnCli, until } from './dev-helpers.js';
import { STEP_LINE } from '../src/deploy/progress.js';

const exec = promisify(execFile);
/** Knative's Trigger CRD from the shared material beside the repository (or this machine's copy of it). */
const TRIGGER_CRD = [fileURLToPath(new URL('../../../../shared/crds/knative-eventing/trigger.yaml', import.meta.url)), '/work/shared/crds/knative-eventing/trigger.yaml'].find((f) => existsSync(f));
const work = mkdtempSync(join(tmpdir(), 'func-deploy-'));
const removals: (() => void)[] = [];
let cluster: Cluster;

beforeAll(async () => {
  cluster = await startCluster();
}, 60_000);
afterAll(async () => {
  await killAll();
  await cluster?.stop();
  for (const r of removals) r();
  rmSync(work, { recursive: true, force: true });
});

function project(edit?: (dir: string) => void): string {
  const fx = copyFixture('deployable');
  removals.push(fx.remove);
  edit?.(fx.dir);
  return fx.dir;
}

const appendYaml = (dir: string, text: string) => writeFileSync(join(dir, 'func.yaml'), readFileSync(join(dir, 'func.yaml'), 'utf8') + text);

async function cli(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; output: string }> {
  const proc = spawnCli(args, { cwd, env: { ...process.env, HOME: join(work, 'home'), XDG_CACHE_HOME: join(work, 'cache'), DOCKER_CONFIG: join(work, 'no-docker'), KUBECONFIG: cluster.kubeconfig, ...env } });
  const code = await proc.exited;
  return { code, output: proc.output() };
}

async function kubectl(...args: string[]): Promise<string> {
  const { stdout } = await exec('kubectl', ['--kubeconfig', cluster.kubeconfig, ...args], { maxBuffer: 8 * 1024 * 1024 });
  return stdout;
}

const getJson = async <T = Record<string, any>>(...args: string[]): Promise<T> => JSON.parse(await kubectl('get', ...args, '-o', 'json')) as T;

describe('func-runtime deploy --dry-run', () => {
  it('prints manifests that kubectl applies unchanged (YAML and JSON), and changes nothing itself', async () => {
    const dir = project();
    const yaml = await cli(['deploy', '--deployer', 'raw', '--dry-run', '-n', 'dry'], dir);
    expect(yaml.code, yaml.output).toBe(0);
    const manifests = yaml.output.slice(yaml.output.indexOf('apiVersion:'));
    expect(manifests).toMatch(/kind: Deployment[\s\S]*---\n[\s\S]*kind: Service/);
    expect(manifests).toMatch(/image: localhost\/deployable@sha256:[0-9a-f]{64}/);
    await kubectl('create', 'namespace', 'dry');
    expect(await kubectl('get', 'deployments', '-n', 'dry')).toBe('');
    writeFileSync(join(work, 'dry.yaml'), manifests);
    expect(await kubectl('apply', '-f', join(work, 'dry.yaml'))).toBe('deployment.apps/deployable created\nservice/deployable created\n');
    expect(await kubectl('apply', '-f', join(work, 'dry.yaml'))).toBe('deployment.apps/deployable unchanged\nservice/deployable unchanged\n');
    const json = await cli(['deploy', '--deployer', 'raw', '--dry-run', '-n', 'dry', '-o', 'json'], dir);
    writeFileSync(join(work, 'dry.json'), json.output.slice(json.output.indexOf('{')));
    expect(await kubectl('apply', '--server-side', '-f', join(work, 'dry.json'))).toMatch(/deployment.apps\/deployable serverside-applied/);
    expect(readFileSync(join(dir, 'func.yaml'), 'utf8')).not.toContain('imageDigest');
  });

  it('needs no cluster: without a kubeconfig it plans a Deployment and a Service', async () => {
    const res = await cli(['deploy', '--dry-run'], project(), { KUBECONFIG: join(work, 'none.yaml') });
    expect(res.code, res.output).toBe(0);
    expect(res.output).toMatch(/namespace: default/);
  });
});

describe('func-runtime deploy (applied, not waited for)', () => {
  let dir: string;
  let first: Record<string, any>;

  beforeAll(async () => {
    dir = project();
    const res = await cli(['deploy', '--deployer', 'raw', '--no-wait'], dir);
    expect(res.code, res.output).toBe(0);
    expect(res.output).toMatch(new RegExp(`applied Deployment and Service default/deployable \\(image ${cluster.registry.replace(/\./g, '\\.')}/deployable@sha256:[0-9a-f]{64}\\)`));
    first = await getJson('deployment', 'deployable', '--show-managed-fields');
  }, 60_000);

  it('server-side applies the Deployment and the Service as field manager func; the Service is owned by the Deployment', async () => {
    expect(first.metadata.managedFields.map((f: { manager: string; operation: string }) => `${f.manager}/${f.operation}`)).toContain('func/Apply');
    const svc = await getJson('service', 'deployable', '--show-managed-fields');
    expect(svc.metadata.managedFields.map((f: { manager: string }) => f.manager)).toContain('func');
    expect(svc.metadata.ownerReferences).toEqual([{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'deployable', uid: first.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    expect(first.spec.template.spec.containers[0].readinessProbe.httpGet).toEqual({ path: '/health/readiness', port: 8080 });
  });

  it('pushes to the registry the cluster advertises (its image store) and records image, imageDigest and deploy.namespace in func.yaml', async () => {
    const yaml = readFileSync(join(dir, 'func.yaml'), 'utf8');
    const digest = /imageDigest: (sha256:[0-9a-f]{64})/.exec(yaml)?.[1];
    expect(yaml).toContain(`image: ${cluster.registry}/deployable:latest\n`);
    expect(yaml).toMatch(/deploy:\n[\s\S]*  namespace: default\n/);
    expect(first.spec.template.spec.containers[0].image).toBe(`${cluster.registry}/deployable@${digest}`);
    const tags = await (await ImageLayout.open(join(cluster.dir, 'data', 'images'))).tags();
    expect(tags).toEqual(expect.arrayContaining(['deployable:latest', `deployable@${digest}`]));
  });

  it('a redeploy after an edit changes the image to the new digest; one without an edit changes nothing', async () => {
    const again = await cli(['deploy', '--deployer', 'raw', '--no-wait'], dir);
    expect(again.code, again.output).toBe(0);
    expect((await getJson('deployment', 'deployable')).metadata.generation).toBe(first.metadata.generation);
    writeFileSync(join(dir, 'src/greeting.ts'), readFileSync(join(dir, 'src/greeting.ts'), 'utf8').replace("'v1'", "'v2'"));
    const edited = await cli(['deploy', '--deployer', 'raw', '--no-wait'], dir);
    expect(edited.code, edited.output).toBe(0);
    const now = await getJson('deployment', 'deployable');
    expect(now.metadata.generation).toBe(first.metadata.generation + 1);
    expect(now.spec.template.spec.containers[0].image).not.toBe(first.spec.template.spec.containers[0].image);
  });

  describe('malformed cases: one message, exit 1, the deployed version untouched', () => {
    let registry: RunningRegistry | undefined;
    beforeAll(async () => {
      if (haveRegistry) registry = await startRegistry('htpasswd');
    }, 60_000);
    afterAll(async () => registry?.stop());

    const unreachable = () => {
      const file = join(work, 'unreachable.yaml');
      writeFileSync(file, readFileSync(cluster.kubeconfig, 'utf8').replace(/server: https:\/\/127\.0\.0\.1:\d+/, 'server: https://127.0.0.1:9'));
      return file;
    };
    const cases: [string, () => { dir: string; args?: string[]; env?: NodeJS.ProcessEnv }, RegExp][] = [
      ['no kubeconfig', () => ({ dir: project(), env: { KUBECONFIG: join(work, 'missing.yaml') } }), /^func-runtime: No kubeconfig: .* start it \(`npx cluster-api serve`\)/],
      ['an unreachable cluster', () => ({ dir: project(), env: { KUBECONFIG: unreachable() } }), /^func-runtime: Cannot reach the Kubernetes API at https:\/\/127\.0\.0\.1:9 \(ECONNREFUSED\)/],
      ['func.yaml invalid against func.schema.json', () => ({ dir: project((d) => appendYaml(d, 'run:\n  envs:\n    - name: 1BAD\n      value: x\n')) }), /^func-runtime: .*func\.yaml does not match func\.schema\.json: \/run\/envs\/0\/name: must match pattern/],
      ['a port conflict (PORT in run.envs)', () => ({ dir: project((d) => appendYaml(d, 'run:\n  envs:\n    - name: PORT\n      value: "9090"\n')) }), /^func-runtime: func\.yaml run\.envs sets PORT=9090, which conflicts with the function's port/],
      ['a build error in the source', () => ({ dir: project((d) => writeFileSync(join(d, 'src/index.ts'), 'export function handle( {\n')) }), /^func-runtime: Cannot bundle .*src\/index\.ts:\d+:\d+: /],
      ['a Secret func.yaml refers to that is not there', () => ({ dir: project((d) => appendYaml(d, 'run:\n  envs:\n    - name: PASSWORD\n      value: "{{ secret:db:password }}"\n')) }), /^func-runtime: func\.yaml refers to Secret "db", which is not in namespace default/],
      ...(haveRegistry ? [['a registry that refuses the push', () => ({ dir: project(), args: ['--registry', `${registry!.host}/fn`] }), /^func-runtime: Cannot push .*Unauthorized/] as [string, () => { dir: string; args?: string[] }, RegExp]] : []),
    ];

    it.each(cases)('%s', async (_, setup, message) => {
      const before = await getJson('deployment', 'deployable');
      const { dir: d, args = [], env = {} } = setup();
      const res = await cli(['deploy', '--deployer', 'raw', '--no-wait', ...args], d, env);
      expect(res.code, res.output).toBe(1);
      expect(res.output).toMatch(message);
      // A step that took over a second (a loaded machine) has its progress line; the error is one line.
      expect(res.output.trim().split('\n').filter((l) => !STEP_LINE.test(l))).toHaveLength(1);
      expect(res.output).not.toMatch(/\n\s+at /);
      const after = await getJson('deployment', 'deployable');
      expect(after.metadata.generation).toBe(before.metadata.generation);
      expect(after.spec.template.spec.containers[0].image).toBe(before.spec.template.spec.containers[0].image);
    });
  });

  it('describe shows image, replicas, where it answers; -o json for scripts', async () => {
    const text = await cli(['describe'], dir);
    expect(text.code, text.output).toBe(0);
    expect(text.output).toMatch(/^Name: +deployable$/m);
    expect(text.output).toMatch(new RegExp(`^Image: +${cluster.registry.replace(/\./g, '\\.')}/deployable@sha256:[0-9a-f]{64}$`, 'm'));
    expect(text.output).toMatch(/^Replicas: +1 desired/m);
    expect(text.output).toMatch(/port-forward: kubectl port-forward -n default svc\/deployable 8080:80/);
    const json = await cli(['describe', '-o', 'json'], dir);
    expect(JSON.parse(json.output)).toMatchObject({ name: 'deployable', namespace: 'default', kind: 'Deployment', replicas: { desired: 1 } });
  });
});

describe.runIf(TRIGGER_CRD !== undefined)('Triggers from func.yaml deploy.subscriptions', () => {
  it('are applied for each subscription and deleted when func.yaml drops it', async () => {
    await kubectl('apply', '-f', TRIGGER_CRD!);
    await kubectl('wait', '--for=condition=Established', 'crd/triggers.eventing.knative.dev', '--timeout=30s');
    const dir = project((d) => {
      writeFileSync(join(d, 'func.yaml'), readFileSync(join(d, 'func.yaml'), 'utf8').replace('name: deployable', 'name: subscriber'));
      appendYaml(d, '  subscriptions:\n    - source: default\n      filters:\n        type: order.created\n    - source: audit\n');
    });
    const res = await cli(['deploy', '--deployer', 'raw', '--no-wait'], dir);
    expect(res.code, res.output).toBe(0);
    const triggers = (await getJson<{ items: Record<string, any>[] }>('triggers.eventing.knative.dev')).items;
    expect(triggers.map((t) => t.spec.broker).sort()).toEqual(['audit', 'default']);
    const deployment = await getJson('deployment', 'subscriber');
    for (const t of triggers) {
      expect(t.metadata.name).toMatch(/^subscriber-trigger-[0-9a-f]{8}$/);
      expect(t.metadata.annotations['func.knative.dev/managed-by']).toBe('func-raw-deployer');
      expect(t.metadata.ownerReferences[0].uid).toBe(deployment.metadata.uid);
      expect(t.spec.subscriber.ref).toEqual({ apiVersion: 'v1', kind: 'Service', name: 'subscriber', namespace: 'default' });
    }
    expect(triggers.find((t) => t.spec.broker === 'default')!.spec.filter).toEqual({ attributes: { type: 'order.created' } });
    writeFileSync(join(dir, 'func.yaml'), readFileSync(join(dir, 'func.yaml'), 'utf8').replace('    - source: audit\n', ''));
    const again = await cli(['deploy', '--deployer', 'raw', '--no-wait'], dir);
    expect(again.code, again.output).toBe(0);
    expect(again.output).toMatch(/deleted stale Trigger subscriber-trigger-[0-9a-f]{8}/);
    expect((await getJson<{ items: Record<string, any>[] }>('triggers.eventing.knative.dev')).items.map((t) => t.spec.broker)).toEqual(['default']);
    const gone = await cli(['undeploy'], dir);
    expect(gone.output).toMatch(/undeployed trigger\/subscriber-trigger-[0-9a-f]{8}, service\/subscriber, deployment\/subscriber/);
    expect((await getJson<{ items: unknown[] }>('triggers.eventing.knative.dev')).items).toEqual([]);
  });
});

describe('func.yaml scale on the raw path', () => {
  it('max makes an autoscaling/v2 HorizontalPodAutoscaler owned by the Deployment; min 0 warns that scaling to zero needs Knative; dropping max removes it', async () => {
    const rename = (d: string) => writeFileSync(join(d, 'func.yaml'), readFileSync(join(d, 'func.yaml'), 'utf8').replace('name: deployable', 'name: scaled'));
    const dir = project((d) => (rename(d), appendYaml(d, '  options:\n    scale:\n      min: 0\n      max: 5\n    resources:\n      requests:\n        cpu: 100m\n')));
    const res = await cli(['deploy', '--deployer', 'raw', '--no-wait'], dir);
    expect(res.code, res.output).toBe(0);
    expect(res.output).toContain('func-runtime: func.yaml deploy.options.scale.min is 0, but scaling to zero needs Knative Serving, which this deploy does not use: the Deployment keeps at least 1 replica.');
    const dep = await getJson('deployment', 'scaled', '--show-managed-fields');
    const hpa = await getJson('hpa.v2.autoscaling', 'scaled');
    expect(hpa.spec).toMatchObject({ scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'scaled' }, minReplicas: 1, maxReplicas: 5, metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }] });
    expect(hpa.metadata.ownerReferences).toEqual([{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'scaled', uid: dep.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    // The autoscaler keeps the count: the deployer names none (the API's default, 1, until it acts).
    expect(dep.spec.replicas).toBe(1);
    expect(dep.metadata.managedFields.find((f: { manager: string }) => f.manager === 'func')?.fieldsV1?.['f:spec']?.['f:replicas']).toBeUndefined();

    writeFileSync(join(dir, 'func.yaml'), readFileSync(join(dir, 'func.yaml'), 'utf8').replace('      max: 5\n', ''));
    const again = await cli(['deploy', '--deployer', 'raw', '--no-wait'], dir);
    expect(again.code, again.output).toBe(0);
    expect(await kubectl('get', 'hpa', '-o', 'name')).not.toContain('scaled');
  }, 120_000);
});

describe('undeploy', () => {
  it('removes the function; a second time says nothing is deployed (exit 1) unless --ignore-not-found', async () => {
    const dir = project((d) => writeFileSync(join(d, 'func.yaml'), readFileSync(join(d, 'func.yaml'), 'utf8').replace('name: deployable', 'name: short-lived')));
    expect((await cli(['deploy', '--deployer', 'raw', '--no-wait'], dir)).code).toBe(0);
    const res = await cli(['undeploy'], dir);
    expect(res.code, res.output).toBe(0);
    expect(res.output).toContain('undeployed service/short-lived, deployment/short-lived');
    await until('the Deployment to be gone', async () => ((await kubectl('get', 'deployments', '-o', 'name')).includes('short-lived') ? undefined : true));
    const again = await cli(['undeploy'], dir);
    expect(again.code).toBe(1);
    expect(again.output).toMatch(/^func-runtime: No function short-lived is deployed in namespace default/);
    expect((await cli(['undeploy', '--ignore-not-found'], dir)).code).toBe(0);
  });
});

describe('a cluster that serves Knative Services', () => {
  it('gets a serving.knative.dev/v1 Service instead of a Deployment and a Service', async () => {
    const crd = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'services.serving.knative.dev' }, spec: { group: 'serving.knative.dev', scope: 'Namespaced', names: { plural: 'services', singular: 'service', kind: 'Service', shortNames: ['ksvc'] }, versions: [{ name: 'v1', served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }] } };
    writeFileSync(join(work, 'ksvc-crd.json'), JSON.stringify(crd));
    await kubectl('apply', '-f', join(work, 'ksvc-crd.json'));
    await kubectl('wait', '--for=condition=Established', 'crd/services.serving.knative.dev', '--timeout=30s');
    try {
      const dir = project((d) => writeFileSync(join(d, 'func.yaml'), readFileSync(join(d, 'func.yaml'), 'utf8').replace('name: deployable', 'name: on-knative')));
      const res = await cli(['deploy', '--no-wait'], dir);
      expect(res.code, res.output).toBe(0);
      expect(res.output).toContain('applied Knative Service default/on-knative');
      const ksvc = await getJson('services.serving.knative.dev', 'on-knative');
      expect(ksvc.spec.template.spec.containers[0].image.startsWith(`${cluster.registry}/on-knative@sha256:`)).toBe(true);
      expect(ksvc.metadata.annotations['function.knative.dev/deployer']).toBe('knative');
      // The local cluster runs the revision as on-knative-00001-deployment; no Deployment of the function's own name.
      expect((await kubectl('get', 'deployments', '-o', 'name')).split('\n')).not.toContain('deployment.apps/on-knative');
      expect((await cli(['undeploy'], dir)).output).toContain('undeployed ksvc/on-knative');
    } finally {
      await kubectl('delete', 'crd', 'services.serving.knative.dev');
    }
  });
});
