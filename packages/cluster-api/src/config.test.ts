import { describe, expect, it } from 'vitest';
import { hostname } from 'node:os';
import { disabledParts, resolveBrokerConfig, resolveConfig } from './config.js';

describe('resolveConfig', () => {
  it('defaults like k3s: 6443 on loopback, TLS, sqlite in the data dir', () => {
    expect(resolveConfig({}, {}, '/srv')).toEqual({
      port: 6443, bindAddress: '127.0.0.1', dataDir: '/srv/data', storage: 'sqlite:/srv/data/state.db',
      kubeconfigOut: '/srv/data/kubeconfig.yaml', insecureHttp: false, enableBootstrapTokenAuth: true, authorizationMode: ['Node', 'RBAC'], controllers: ['*'],
      disable: [], disableControllerManager: false, disableAgent: false, disableScheduler: false, nodeName: hostname().toLowerCase(), simulate: true, maxPods: 110, kubeReserved: { cpu: 100, memory: 256 * 1024 * 1024 }, containerLogMaxSize: 10 * 1024 * 1024, containerLogMaxFiles: 5, ociSandboxPool: 2, kubeletPort: 0,
      clusterCidr: '127.64.0.0/10', serviceClusterIpRange: '127.128.0.0/12', nodeCidrMaskSize: 20, nodeMonitorGracePeriod: 40, nodeLeaseDurationSeconds: 40,
      broker: true, brokerStore: 'sqlite:/srv/data/broker.db', brokerPort: 8090, brokerBindAddress: '127.0.0.1', gatewayPort: 8092, registryPort: 8093,
      imageGcHighThreshold: 100, imageGcLowThreshold: 80, minimumImageTtl: 120_000, imageMaximumGcAge: 0,
    });
  });

  it('takes --disable as k3s does: repeatable or comma-separated, its older flags as aliases', () => {
    const off = (cli: Record<string, unknown>, env: Record<string, string> = {}) => [...disabledParts(resolveConfig(cli, env, '/'))].sort();
    expect(off({})).toEqual([]);
    expect(off({ disable: ['node', 'scheduler,broker'] })).toEqual(['broker', 'node', 'scheduler']);
    expect(off({ disable: 'controller-manager' })).toEqual(['controller-manager']);
    expect(off({}, { CLUSTER_API_DISABLE: 'broker, node' })).toEqual(['broker', 'node']);
    expect(off({ 'disable-agent': true, 'disable-scheduler': true, broker: false })).toEqual(['broker', 'node', 'scheduler']);
    // The aliases follow --disable, so the checks made on them (the node agent needs Node authorization) hold either way.
    expect(resolveConfig({ disable: 'node' }, {}, '/')).toMatchObject({ disableAgent: true, disableScheduler: false, broker: true });
    expect(resolveConfig({ disable: 'node', 'authorization-mode': 'RBAC' }, {}, '/').authorizationMode).toEqual(['RBAC']);
    for (const bad of ['api-server', 'kubelet', 'node,,nodes'])
      expect(() => resolveConfig({ disable: bad }, {}, '/')).toThrow(/^--disable: "(api-server|kubelet|nodes)" is not a part that can be disabled; parts: controller-manager, scheduler, node, registry, broker, gateway$/);
  });

  it('takes --authorization-mode as kube-apiserver does: a comma-separated list, in order', () => {
    expect(resolveConfig({ 'authorization-mode': 'AlwaysAllow' }, {}, '/').authorizationMode).toEqual(['AlwaysAllow']);
    expect(resolveConfig({ disableAgent: true }, { CLUSTER_API_AUTHORIZATION_MODE: 'RBAC,AlwaysDeny' }, '/').authorizationMode).toEqual(['RBAC', 'AlwaysDeny']);
  });

  it('runs the broker beside the API unless told not to; its port is a free one when the API\'s is', () => {
    expect(resolveConfig({ broker: false }, {}, '/').broker).toBe(false);
    expect(resolveConfig({}, { CLUSTER_API_BROKER: 'false' }, '/').broker).toBe(false);
    expect(resolveConfig({ port: 0 }, {}, '/')).toMatchObject({ port: 0, brokerPort: 0 });
    expect(resolveConfig({ port: 0, 'broker-port': 9000 }, {}, '/').brokerPort).toBe(9000);
    expect(resolveConfig({ bindAddress: '0.0.0.0', 'broker-store': 'nats://a:4222,b:4222?replicas=3', 'broker-advertise-address': 'broker.local:80' }, {}, '/'))
      .toMatchObject({ brokerBindAddress: '0.0.0.0', brokerStore: 'nats://a:4222,b:4222?replicas=3', brokerAdvertiseAddress: 'broker.local:80' });
    expect(resolveConfig({ 'data-dir': 'd' }, {}, '/w').brokerStore).toBe('sqlite:/w/d/broker.db');
  });

  it('listens for the gateway on 8092, a free port when the API\'s is, or the one asked for; refuses a port that is none', () => {
    expect(resolveConfig({ port: 0 }, {}, '/').gatewayPort).toBe(0);
    expect(resolveConfig({ 'gateway-port': 9001 }, {}, '/').gatewayPort).toBe(9001);
    expect(resolveConfig({}, { CLUSTER_API_GATEWAY_PORT: '0' }, '/').gatewayPort).toBe(0);
    for (const bad of ['70000', '-1', 'http'])
      expect(() => resolveConfig({ 'gateway-port': bad }, {}, '/')).toThrow(/gateway-port/);
  });

  it('listens for the registry on 8093 (no root needed), a free port when the API\'s is, or the one asked for; refuses a port that is none', () => {
    expect(resolveConfig({}, {}, '/').registryPort).toBe(8093);
    expect(resolveConfig({ port: 0 }, {}, '/').registryPort).toBe(0);
    expect(resolveConfig({ 'registry-port': 9002 }, {}, '/').registryPort).toBe(9002);
    expect(resolveConfig({}, { CLUSTER_API_REGISTRY_PORT: '0' }, '/').registryPort).toBe(0);
    for (const bad of ['70000', '-1', 'http'])
      expect(() => resolveConfig({ 'registry-port': bad }, {}, '/')).toThrow(/registry-port/);
  });

  it('configures a broker process of its own: kubeconfig, store, port, addresses', () => {
    expect(resolveBrokerConfig({}, {}, '/srv')).toEqual({ dataDir: '/srv/data', brokerStore: 'sqlite:/srv/data/broker.db', port: 8090, bindAddress: '127.0.0.1' });
    const env = { CLUSTER_API_BROKER_KUBECONFIG: 'k.yaml', CLUSTER_API_BROKER_STORE: 'nats://127.0.0.1:4222', CLUSTER_API_BROKER_PORT: '0' };
    expect(resolveBrokerConfig({ context: 'ctx', 'advertise-address': '[::1]' }, env, '/w'))
      .toMatchObject({ kubeconfig: '/w/k.yaml', context: 'ctx', brokerStore: 'nats://127.0.0.1:4222', port: 0, advertiseAddress: '[::1]' });
  });

  it.each([
    [{ 'broker-store': 'redis://x' }, /--broker-store: "redis:\/\/x" is not a broker store/],
    [{ 'broker-store': 'sqlite:' }, /--broker-store/],
    [{ 'broker-store': 'nats://' }, /--broker-store/],
    [{ 'broker-port': -1 }, /--broker-port must be an integer/],
    [{ 'broker-advertise-address': 'http://x/' }, /--broker-advertise-address: "http:\/\/x\/" is not a host or host:port/],
    [{ 'broker-advertise-address': 'host:99999' }, /the port must be 1-65535/],
    [{ 'broker-advertise-address': 'bad_host' }, /is not a host/],
  ])('refuses broker option %j', (cli, message) => {
    expect(() => resolveConfig(cli, {}, '/')).toThrow(message);
  });

  it.each([
    [{ port: 'x' }, /--port must be an integer/],
    [{ 'broker-store': 'file:/x' }, /--broker-store/],
    [{ 'advertise-address': 'a b' }, /--advertise-address/],
  ])('refuses broker process option %j', (cli, message) => {
    expect(() => resolveBrokerConfig(cli, {}, '/')).toThrow(message);
  });

  it('takes CLI over environment over defaults', () => {
    const env = { CLUSTER_API_PORT: '7000', CLUSTER_API_DATA_DIR: '/env', CLUSTER_API_STORAGE: 'memory:', CLUSTER_API_INSECURE_HTTP: 'true' };
    expect(resolveConfig({ port: 8000 }, env, '/')).toMatchObject({ port: 8000, dataDir: '/env', storage: 'memory:', insecureHttp: true });
    expect(resolveConfig({ 'token-auth-file': 't.csv', 'kubeconfig-out': 'k.yaml' }, {}, '/w')).toMatchObject({ tokenAuthFile: '/w/t.csv', kubeconfigOut: '/w/k.yaml' });
  });

  it.each([
    [{ port: 70000 }, /--port must be an integer/],
    [{ port: 1.5 }, /--port must be an integer/],
    [{ insecureHttp: true, bindAddress: '0.0.0.0' }, /only allowed on a loopback/],
    [{ insecureHttp: true, bindAddress: '10.0.0.1' }, /only allowed on a loopback/],
    [{ tlsCertFile: 'a.crt' }, /must be given together/],
    [{ insecureHttp: true, tlsCertFile: 'a', tlsPrivateKeyFile: 'b' }, /cannot be combined/],
    [{ storage: 'nosuch://x' }, /--storage: invalid storage URL "nosuch:\/\/x": unknown scheme/],
    [{ storage: 'sqlite:' }, /--storage: .*needs a file path/],
    [{ authorizationMode: 'ABAC' }, /--authorization-mode: unknown mode "ABAC"; supported: AlwaysAllow, AlwaysDeny, RBAC, Node/],
    [{ authorizationMode: 'RBAC,RBAC' }, /--authorization-mode: RBAC is given more than once/],
    [{ authorizationMode: 'RBAC,' }, /--authorization-mode: unknown mode ""/],
    [{ authorizationMode: 'RBAC' }, /--authorization-mode RBAC gives the embedded node agent no way to register its Node: add Node \(e.g. Node,RBAC\) or pass --disable-agent/],
    [{ 'cluster-cidr': '127.64.0.0' }, /--cluster-cidr must be an IPv4 CIDR/],
    [{ 'oci-sandbox-pool': '-1' }, /--oci-sandbox-pool must be an integer 0-64/],
    [{ 'oci-sandbox-pool': '1.5' }, /--oci-sandbox-pool must be an integer 0-64/],
    [{ 'cluster-cidr': '127.64.0.0/24', 'node-cidr-mask-size': 20 }, /--node-cidr-mask-size 20 must be at least the --cluster-cidr prefix length/],
    [{ 'service-cluster-ip-range': '127.128.0.0' }, /--service-cluster-ip-range must be an IPv4 CIDR such as 127.128.0.0\/12, got 127.128.0.0/],
    [{ 'service-cluster-ip-range': '127.300.0.0/12' }, /--service-cluster-ip-range must be an IPv4 CIDR/],
    [{ 'service-cluster-ip-range': 'fd00::/108' }, /--service-cluster-ip-range must be an IPv4 CIDR/],
    [{ 'service-cluster-ip-range': '127.96.0.0/12' }, /--service-cluster-ip-range 127.96.0.0\/12 overlaps --cluster-cidr 127.64.0.0\/10/],
    [{ 'service-cluster-ip-range': '10.96.0.0/12', 'cluster-cidr': '10.0.0.0/8' }, /--service-cluster-ip-range 10.96.0.0\/12 overlaps --cluster-cidr 10.0.0.0\/8/],
    [{ 'pod-network': 'bridge' }, /--pod-network must be loopback or shared/],
    [{ 'max-pods': -1 }, /--max-pods must be an integer/],
    [{ 'node-monitor-grace-period': 0 }, /--node-monitor-grace-period must be an integer/],
  ])('refuses %j', (cli, message) => {
    expect(() => resolveConfig(cli, {}, '/')).toThrow(message);
  });

  it('takes kube-apiserver\'s --service-cluster-ip-range beside --cluster-cidr', () => {
    expect(resolveConfig({ 'service-cluster-ip-range': '10.96.0.0/12' }, {}, '/').serviceClusterIpRange).toBe('10.96.0.0/12');
    expect(resolveConfig({}, { CLUSTER_API_SERVICE_CLUSTER_IP_RANGE: '127.32.0.0/16' }, '/').serviceClusterIpRange).toBe('127.32.0.0/16');
  });

  it('allows plain HTTP on every loopback form', () => {
    for (const bindAddress of ['127.0.0.1', '127.0.0.2', '::1', 'localhost'])
      expect(resolveConfig({ insecureHttp: true, bindAddress }, {}, '/').insecureHttp).toBe(true);
  });
});
