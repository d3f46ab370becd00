/**
 * Every served built-in kind answers `kubectl get` (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`)
 * with the columns kube-apiserver's printers declare (pkg/printers/internalversion/printers.go, 1.32),
 * and `kubectl get -o wide` prints them for pods, nodes, deployments, services, jobs and HPAs.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKubectl, startKubectlServer, startTestServer, type KubectlServer, type TestServer } from '../support/helpers.js';

/** Kubernetes' column names per kind; `*` marks a `-o wide` column (priority 1). */
const KubernetesColumns: Record<string, string> = {
  Namespace: 'Name, Status, Age',
  ServiceAccount: 'Name, Secrets, Age',
  LimitRange: 'Name, Created At',
  ResourceQuota: 'Name, Age, Request, Limit',
  Secret: 'Name, Type, Data, Age',
  PersistentVolumeClaim: 'Name, Status, Volume, Capacity, Access Modes, StorageClass, VolumeAttributesClass, Age, VolumeMode*',
  PersistentVolume: 'Name, Capacity, Access Modes, Reclaim Policy, Status, Claim, StorageClass, VolumeAttributesClass, Reason, Age, VolumeMode*',
  Service: 'Name, Type, Cluster-IP, External-IP, Port(s), Age, Selector*',
  PodTemplate: 'Name, Containers, Images, Pod Labels',
  ReplicationController: 'Name, Desired, Current, Ready, Age, Containers*, Images*, Selector*',
  Pod: 'Name, Ready, Status, Restarts, Age, IP*, Node*, Nominated Node*, Readiness Gates*',
  ComponentStatus: 'Name, Status, Message, Error',
  // metrics-server's tables (pkg/api/table.go): a column per resource, then the window; no age.
  NodeMetrics: 'Name, cpu, memory, Window',
  PodMetrics: 'Name, cpu, memory, Window',
  ConfigMap: 'Name, Data, Age',
  Endpoints: 'Name, Endpoints, Age',
  Event: 'Last Seen, Type, Reason, Object, Subobject*, Source*, Message, First Seen*, Count*, Name*',
  Node: 'Name, Status, Roles, Age, Version, Internal-IP*, External-IP*, OS-Image*, Kernel-Version*, Container-Runtime*',
  Deployment: 'Name, Ready, Up-to-date, Available, Age, Containers*, Images*, Selector*',
  ReplicaSet: 'Name, Desired, Current, Ready, Age, Containers*, Images*, Selector*',
  StatefulSet: 'Name, Ready, Age, Containers*, Images*',
  DaemonSet: 'Name, Desired, Current, Ready, Up-to-date, Available, Node Selector, Age, Containers*, Images*, Selector*',
  ControllerRevision: 'Name, Controller, Revision, Age',
  HorizontalPodAutoscaler: 'Name, Reference, Targets, MinPods, MaxPods, Replicas, Age',
  Job: 'Name, Status, Completions, Duration, Age, Containers*, Images*, Selector*',
  CronJob: 'Name, Schedule, Timezone, Suspend, Active, Last Schedule, Age, Containers*, Images*, Selector*',
  Lease: 'Name, Holder, Age',
  EndpointSlice: 'Name, AddressType, Ports, Endpoints, Age',
  Ingress: 'Name, Class, Hosts, Address, Ports, Age',
  IngressClass: 'Name, Controller, Parameters, Age',
  NetworkPolicy: 'Name, Pod-Selector, Age',
  PodDisruptionBudget: 'Name, Min Available, Max Unavailable, Allowed Disruptions, Age',
  PriorityClass: 'Name, Value, Global-Default, Age, PreemptionPolicy',
  StorageClass: 'Name, Provisioner, ReclaimPolicy, VolumeBindingMode, AllowVolumeExpansion, Age',
  APIService: 'Name, Service, Available, Age',
  Role: 'Name, Created At',
  ClusterRole: 'Name, Created At',
  RoleBinding: 'Name, Role, Age, Users*, Groups*, ServiceAccounts*',
  ClusterRoleBinding: 'Name, Role, Age, Users*, Groups*, ServiceAccounts*',
  // No printer of its own: the default table (Name, Created At), as for every kind without one.
  CustomResourceDefinition: 'Name, Created At',
};

/**
 * Served schemaless, with the default columns: PodSecurityPolicy (removed in Kubernetes 1.25, no printer
 * in 1.32) and the certificates.k8s.io/v1beta1 CertificateSigningRequest the CSR work replaces with v1.
 */
const defaultColumns = new Set(['PodSecurityPolicy', 'CertificateSigningRequest']);

const TableAccept = 'application/json;as=Table;g=meta.k8s.io;v=v1';

describe('table columns of every served built-in kind', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer('memory');
  });
  afterAll(() => s?.close());

  it("match kube-apiserver's printers", async () => {
    const groups = (await s.request('GET', '/apis')).json.groups as { versions: { groupVersion: string }[] }[];
    const versions = ['v1', ...groups.flatMap((g) => g.versions.map((v) => v.groupVersion))].filter((gv) => !gv.includes('.openshift.io/'));
    const seen: string[] = [];
    const wrong: string[] = [];
    for (const gv of versions) {
      const base = gv === 'v1' ? '/api/v1' : `/apis/${gv}`;
      for (const r of (await s.request('GET', base)).json.resources as { name: string; kind: string; verbs: string[] }[]) {
        if (r.name.includes('/') || !r.verbs.includes('list') || r.kind === 'SecurityContextConstraints' || defaultColumns.has(r.kind)) continue;
        const table = await s.request('GET', `${base}/${r.name}`, { headers: { accept: TableAccept } });
        expect(table.json?.kind, `${gv} ${r.name}`).toBe('Table');
        const got = table.json.columnDefinitions.map((c: { name: string; priority: number }) => `${c.name}${c.priority ? '*' : ''}`).join(', ');
        if (got !== KubernetesColumns[r.kind]) wrong.push(`${gv} ${r.kind}: ${got}`);
        seen.push(r.kind);
      }
    }
    expect(wrong).toEqual([]);
    expect(new Set(seen).size).toBe(Object.keys(KubernetesColumns).length);
  });

  it('a malformed includeObject is a 400 Status', async () => {
    const r = await s.request('GET', '/api/v1/pods?includeObject=Everything', { headers: { accept: TableAccept } });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ kind: 'Status', reason: 'BadRequest' });
  });
});

describe('kubectl get -o wide', () => {
  let k: KubectlServer;
  const kubectl = (...args: string[]) => runKubectl('kubectl', k.env, args);
  const ok = async (...args: string[]) => {
    const r = await kubectl(...args);
    expect(r.code, r.stderr).toBe(0);
    return r.stdout;
  };
  /** The header and first row of a table, split on the column gaps kubectl prints. */
  const rows = (out: string) => out.trim().split('\n').map((l) => l.split(/\s{2,}/));
  const apply = async (name: string, obj: object, ...flags: string[]) => {
    writeFileSync(join(k.dir, name), stringify(obj));
    await ok('apply', ...flags, '-f', join(k.dir, name));
  };
  beforeAll(async () => {
    k = await startKubectlServer();
  });
  afterAll(() => k?.close());

  it('pods: NOMINATED NODE and READINESS GATES', async () => {
    await apply('pod.yaml', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'gated', namespace: 'default' }, spec: { readinessGates: [{ conditionType: 'example.com/ready' }, { conditionType: 'example.com/warm' }], containers: [{ name: 'web', image: 'nginx:1.27' }] } });
    await ok('create', 'namespace', 'plain');
    await ok('run', 'plain', '-n', 'plain', '--image=nginx:1.27');
    const status = { status: { nominatedNodeName: 'node-b', conditions: [{ type: 'example.com/ready', status: 'True' }, { type: 'example.com/warm', status: 'False' }] } };
    await ok('patch', 'pod', 'gated', '--subresource=status', '--type=merge', '-p', JSON.stringify(status));
    const [header, row] = rows(await ok('get', 'pod', 'gated', '-o', 'wide'));
    expect(header).toEqual(['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE', 'IP', 'NODE', 'NOMINATED NODE', 'READINESS GATES']);
    expect(row!.slice(-4)).toEqual(['<none>', '<none>', 'node-b', '1/2']);
    const [, plain] = rows(await ok('get', 'pod', 'plain', '-n', 'plain', '-o', 'wide'));
    expect(plain!.slice(-2)).toEqual(['<none>', '<none>']);
  });

  it('nodes, deployments, services, jobs and HPAs', async () => {
    await apply('node.yaml', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-b', labels: { 'node-role.kubernetes.io/worker': '' } }, status: { addresses: [{ type: 'InternalIP', address: '10.0.0.2' }], nodeInfo: { kubeletVersion: 'v1.32.0', osImage: 'Debian GNU/Linux 13', kernelVersion: '6.12.0', containerRuntimeVersion: 'containerd://2.0.0' } } }, '--validate=false');
    const [nodeHeader] = rows(await ok('get', 'node', 'node-b', '-o', 'wide'));
    expect(nodeHeader).toEqual(['NAME', 'STATUS', 'ROLES', 'AGE', 'VERSION', 'INTERNAL-IP', 'EXTERNAL-IP', 'OS-IMAGE', 'KERNEL-VERSION', 'CONTAINER-RUNTIME']);
    await ok('create', 'deployment', 'web', '--image=nginx:1.27', '--port=80');
    const [deployHeader, deploy] = rows(await ok('get', 'deployment', 'web', '-o', 'wide'));
    expect(deployHeader).toEqual(['NAME', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'AGE', 'CONTAINERS', 'IMAGES', 'SELECTOR']);
    expect(deploy!.slice(-3)).toEqual(['nginx', 'nginx:1.27', 'app=web']);
    await ok('expose', 'deployment', 'web', '--port=80');
    const [svcHeader, svc] = rows(await ok('get', 'service', 'web', '-o', 'wide'));
    expect(svcHeader).toEqual(['NAME', 'TYPE', 'CLUSTER-IP', 'EXTERNAL-IP', 'PORT(S)', 'AGE', 'SELECTOR']);
    expect(svc![4]).toBe('80/TCP');
    await ok('create', 'job', 'once', '--image=busybox:1.36', '--', 'true');
    const [jobHeader] = rows(await ok('get', 'job', 'once', '-o', 'wide'));
    expect(jobHeader).toEqual(['NAME', 'STATUS', 'COMPLETIONS', 'DURATION', 'AGE', 'CONTAINERS', 'IMAGES', 'SELECTOR']);
    await ok('autoscale', 'deployment', 'web', '--max=3');
    const [hpaHeader, hpa] = rows(await ok('get', 'hpa', 'web', '-o', 'wide'));
    expect(hpaHeader).toEqual(['NAME', 'REFERENCE', 'TARGETS', 'MINPODS', 'MAXPODS', 'REPLICAS', 'AGE']);
    expect(hpa!.slice(1, 2)).toEqual(['Deployment/web']);
  });
});
