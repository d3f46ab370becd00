/**
 * Services from inside oci pods, as kube-proxy gives them: the oci node's clusterIPs are private
 * addresses the node makes its own (on `lo`, labelled for the node) and its service proxy listens
 * on, so a pod in its own network namespace reaches `clusterIP:port` through the node's bridge.
 * The `kubernetes` Service (the first address of the range, Endpoints: the API server) is what the
 * pods' KUBERNETES_SERVICE_HOST/PORT name; the API server's own loopback port stays out of reach.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Resources } from '@func/kube-client';
import { privatePodCidr } from '../../src/node/runtime/oci/pod-cidr.js';
import { reachableServiceCidr } from '../../src/node/runtime/choose.js';
import { clusterDnsIP, kubernetesServiceIP } from '../../src/registry/kinds/kubernetes-service.js';
import type { RunningRegistry } from '../../../oci/test/registry-server.js';
import { busyboxInRegistry, execIn, ociMissing, ociOf } from '../support/oci-fixtures.js';
import { isReady, podUntil, useNodeCluster, type Obj } from '../support/node-fixtures.js';
import { until } from '../../testing/src/poll.js';

const cidr = privatePodCidr(`oci-services-test-${process.pid}`);
const serviceCidr = reachableServiceCidr('127.128.0.0/12', cidr, `oci-services-test-${process.pid}`);
/** The host's addresses on `lo` carrying a label. */
/** The host's own search domains, which a pod's resolv.conf lists after the cluster's. */
const hostSearch = () => {
  const line = readFileSync('/etc/resolv.conf', 'utf8').split('\n').find((l) => /^\s*(search|domain)\s/.test(l));
  return line ? ` ${line.trim().split(/\s+/).slice(1).join(' ')}` : '';
};
const loAddresses = (label: string) => execFileSync('ip', ['-4', '-o', 'addr', 'show', 'dev', 'lo']).toString().split('\n').filter((l) => l.split(/[\s\\]+/).includes(label)).map((l) => /inet (\S+)\//.exec(l)?.[1]);

describe.skipIf(ociMissing)(`Services from oci pods${ociMissing ? ` (skipped: ${ociMissing})` : ''}`, () => {
  const current = useNodeCluster({
    nodes: [{ name: 'oci-s', options: { containerRuntime: 'oci', clusterDns: clusterDnsIP(serviceCidr) } }],
    nodeControllers: { clusterCidr: cidr, nodeCidrMaskSize: 24 }, serviceClusterIpRange: serviceCidr, kubernetesService: true,
  });
  let registry: RunningRegistry;
  let busybox: string;
  let bb: Obj;
  let fn: Obj;
  const agent = () => current.cluster.agents.get('oci-s')!;
  const label = () => `lo:${ociOf(agent()).key}`;

  beforeAll(async () => {
    ({ registry, ref: busybox } = await busyboxInRegistry(join(current.cluster.dir, 'scratch')));
    const { kube } = current;
    // The proxy knows the kubernetes Service before the pods start: their environment names it.
    const api = await until('the proxy knows the kubernetes Service', () => agent().proxy!.clusterAddress('default', 'kubernetes'));
    await until('the proxy listens on its clusterIP', () => agent().proxy!.addresses().includes(`${api.ip}:${api.port}`));
    await kube.create(Resources.pods, { metadata: { name: 'fn', labels: { app: 'fn' } }, spec: { containers: [{ name: 'fn', image: 'probe:v1', ports: [{ containerPort: 8080 }] }] } });
    await kube.create(Resources.pods, { metadata: { name: 'bb' }, spec: { containers: [{ name: 'bb', image: busybox, command: ['sleep', '3600'] }] } });
    fn = await podUntil(kube, 'fn', 'Ready', isReady, 60_000);
    bb = await podUntil(kube, 'bb', 'Ready', isReady, 60_000);
  }, 120_000);
  afterAll(async () => {
    await registry?.stop();
  });

  it('the kubernetes Service: first address of the range, Endpoints at the API server; a pod\'s KUBERNETES_SERVICE_HOST/PORT name it and reach the API with the pod\'s token', async () => {
    const { kube, server } = current.cluster;
    const svc = await kube.get<Obj>(Resources.services, 'kubernetes');
    expect(svc.spec).toMatchObject({ clusterIP: kubernetesServiceIP(serviceCidr), ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: server.port }] });
    expect(svc.spec.selector).toBeUndefined();
    const ep = await kube.get<Obj>(Resources.endpoints, 'kubernetes');
    expect(ep.subsets).toEqual([{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: server.port, protocol: 'TCP' }] }]);
    const env = await execIn(agent(), fn, ['node', '-e', 'console.log(process.env.KUBERNETES_SERVICE_HOST, process.env.KUBERNETES_SERVICE_PORT)']);
    expect(env.stdout).toBe(`${svc.spec.clusterIP} 443\n`);
    // This test cluster's API server speaks plain HTTP (serve's, TLS with the clusterIP in its certificate: oci-serve.test.ts).
    const get = `const t = require("fs").readFileSync("/var/run/secrets/kubernetes.io/serviceaccount/token", "utf8");
      fetch("http://" + process.env.KUBERNETES_SERVICE_HOST + ":" + process.env.KUBERNETES_SERVICE_PORT + "/api", { headers: { authorization: "Bearer " + t } })
        .then(async (r) => console.log(r.status, (await r.json()).kind), (e) => console.log("failed", e.cause?.code))`;
    expect((await execIn(agent(), fn, ['node', '-e', get])).stdout).toBe('200 APIVersions\n');
  }, 60_000);

  it('a Service\'s clusterIP:port reaches its ready endpoints from another pod; the clusterIP is an address of the host only while the Service is there', async () => {
    const { kube } = current;
    const svc = await kube.create<Obj>(Resources.services, { metadata: { name: 'fn-svc' }, spec: { selector: { app: 'fn' }, ports: [{ port: 80, targetPort: 8080 }] } });
    const ip = svc.spec.clusterIP as string;
    expect(ip.split('.').slice(0, 2)).toEqual(serviceCidr.split('.').slice(0, 2));
    // Until the proxy listens, the address is not the host's (a connection would be routed away and hang): wait for that, then connect once.
    await until('the proxy listens on the clusterIP', () => agent().proxy!.addresses().includes(`${ip}:80`));
    const got = await execIn(agent(), bb, ['wget', '-qO-', `http://${ip}:80/env?name=HOSTNAME`]);
    expect(got).toEqual({ exitCode: 0, stdout: 'fn', stderr: '' });
    expect(loAddresses(label())).toContain(ip);
    await kube.delete(Resources.services, 'fn-svc');
    await until('the clusterIP no longer an address of the host', () => !loAddresses(label()).includes(ip));
    expect(agent().proxy!.addresses()).not.toContain(`${ip}:80`);
  }, 60_000);

  it('a pod cannot reach the API server\'s own port: not on its loopback (its own), not on the node\'s bridge address; Services without a clusterIP (headless, ExternalName) add no address', async () => {
    const { kube, server } = current.cluster;
    const node = await kube.get<Obj>(Resources.nodes, 'oci-s');
    const gateway = String(node.spec.podCIDR).replace(/\.0\/\d+$/, '.1');
    for (const host of ['127.0.0.1', gateway]) {
      const r = await execIn(agent(), bb, ['wget', '-qO-', `http://${host}:${server.port}/api`]);
      expect({ host, failed: r.exitCode !== 0, stdout: r.stdout }).toEqual({ host, failed: true, stdout: '' });
    }
    // A headless Service and an ExternalName one have no clusterIP to serve: no address is added for them.
    const before = loAddresses(label()).length;
    await kube.create(Resources.services, { metadata: { name: 'headless' }, spec: { clusterIP: 'None', selector: { app: 'fn' }, ports: [{ port: 81 }] } });
    await kube.create(Resources.services, { metadata: { name: 'external' }, spec: { type: 'ExternalName', externalName: 'example.invalid' } });
    const named = await kube.create<Obj>(Resources.services, { metadata: { name: 'marker' }, spec: { selector: { app: 'fn' }, ports: [{ port: 82, targetPort: 8080 }] } });
    await until('the marker Service served', () => loAddresses(label()).includes(named.spec.clusterIP));
    expect(loAddresses(label()).length).toBe(before + 1);
  }, 60_000);

  it('cluster DNS: kube-system/kube-dns on the range\'s tenth address, the node answering on it; a pod resolves Services by full and short name, headless ones to their pods', async () => {
    const { kube } = current;
    const dnsIP = clusterDnsIP(serviceCidr);
    const kubeDns = await kube.get<Obj>(Resources.services, 'kube-dns', { namespace: 'kube-system' });
    expect(kubeDns.spec).toMatchObject({ clusterIP: dnsIP, ports: [{ name: 'dns', port: 53, protocol: 'UDP' }, { name: 'dns-tcp', port: 53, protocol: 'TCP' }] });
    expect((await execIn(agent(), bb, ['cat', '/etc/resolv.conf'])).stdout).toBe(`nameserver ${dnsIP}\nsearch default.svc.cluster.local svc.cluster.local cluster.local${hostSearch()}\noptions ndots:5\n`);
    const svc = await kube.create<Obj>(Resources.services, { metadata: { name: 'named' }, spec: { selector: { app: 'fn' }, ports: [{ port: 80, targetPort: 8080 }] } });
    await until('the proxy listens on named', () => agent().proxy!.addresses().includes(`${svc.spec.clusterIP}:80`));
    const full = await execIn(agent(), bb, ['nslookup', 'named.default.svc.cluster.local', dnsIP]);
    expect(full, JSON.stringify(full)).toMatchObject({ exitCode: 0 });
    expect(full.stdout).toContain(`Address: ${svc.spec.clusterIP}`);
    // The short name through the search path, as an application asks: wget resolves it with the pod's resolv.conf.
    const got = await execIn(agent(), bb, ['wget', '-qO-', 'http://named/env?name=HOSTNAME']);
    expect(got).toEqual({ exitCode: 0, stdout: 'fn', stderr: '' });
    // A function pod's Node.js resolves it too (glibc's resolver in the image's own root).
    const fromNode = await execIn(agent(), fn, ['node', '-e', 'require("dns").lookup("named.default.svc.cluster.local", (e, a) => console.log(e ? e.code : a))']);
    expect(fromNode.stdout).toBe(`${svc.spec.clusterIP}\n`);
    // A headless Service: its ready pods' addresses.
    await until('the headless Service resolving to fn', async () => (await execIn(agent(), bb, ['nslookup', 'headless.default.svc.cluster.local', dnsIP])).stdout.includes(`Address: ${fn.status.podIP}`));
    const missing = await execIn(agent(), bb, ['nslookup', 'nope.default.svc.cluster.local', dnsIP]);
    expect(missing.exitCode).not.toBe(0);
    expect(missing.stdout + missing.stderr).toMatch(/NXDOMAIN|can't find/);
  }, 60_000);

  it('the agent\'s stop takes every clusterIP address of the node with it', async () => {
    const key = label();
    expect(loAddresses(key).length).toBeGreaterThan(0);
    await agent().stop();
    expect(loAddresses(key)).toEqual([]);
  }, 60_000);
});
