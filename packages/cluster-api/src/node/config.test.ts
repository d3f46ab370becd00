import { describe, expect, it } from 'vitest';
import { ConfigError } from '../config.js';
import { resolveNodeConfig } from './config.js';

describe('resolveNodeConfig', () => {
  it('takes the CLI over the environment over the defaults', () => {
    const c = resolveNodeConfig({ 'kubelet-port': '0', name: 'n1' }, { CLUSTER_API_NODE_MAX_PODS: '20', CLUSTER_API_NODE_NAME: 'ignored', CLUSTER_API_NODE_ADDRESS: '10.0.0.5' }, '/srv');
    expect(c).toMatchObject({ name: 'n1', kubeletPort: 0, maxPods: 20, address: '10.0.0.5', dataDir: '/srv/node-data', images: '/srv/node-data/images', simulate: true, nodeLeaseDurationSeconds: 40 });
  });

  it('takes the container runtime from the flag or CLUSTER_API_NODE_CONTAINER_RUNTIME, none by default (processes)', () => {
    expect(resolveNodeConfig({}, {}, '/').containerRuntime).toBeUndefined();
    expect(resolveNodeConfig({ 'container-runtime': 'oci' }, {}, '/').containerRuntime).toBe('oci');
    expect(resolveNodeConfig({}, { CLUSTER_API_NODE_CONTAINER_RUNTIME: 'simulated' }, '/').containerRuntime).toBe('simulated');
  });

  it('keeps the agent\'s share from pods (--kube-reserved, default cpu=100m,memory=256Mi)', () => {
    expect(resolveNodeConfig({}, {}, '/').kubeReserved).toEqual({ cpu: 100, memory: 256 * 1024 * 1024 });
    expect(resolveNodeConfig({ 'kube-reserved': 'cpu=1.5,memory=1Gi' }, {}, '/').kubeReserved).toEqual({ cpu: 1500, memory: 1024 ** 3 });
    expect(resolveNodeConfig({ 'kube-reserved': 'memory=0' }, {}, '/').kubeReserved).toEqual({ memory: 0 });
  });

  it('rotates container logs as the kubelet by default (10Mi, 5 files), or as --container-log-max-size/-files say', () => {
    expect(resolveNodeConfig({}, {}, '/')).toMatchObject({ containerLogMaxSize: 10 * 1024 * 1024, containerLogMaxFiles: 5 });
    expect(resolveNodeConfig({ 'container-log-max-size': '64Ki', 'container-log-max-files': '3' }, {}, '/')).toMatchObject({ containerLogMaxSize: 65536, containerLogMaxFiles: 3 });
  });

  it('keeps 2 pod networks ready on an oci node by default, or as --oci-sandbox-pool / CLUSTER_API_NODE_OCI_SANDBOX_POOL say (0: none)', () => {
    expect(resolveNodeConfig({}, {}, '/').ociSandboxPool).toBe(2);
    expect(resolveNodeConfig({ 'oci-sandbox-pool': '0' }, {}, '/').ociSandboxPool).toBe(0);
    expect(resolveNodeConfig({}, { CLUSTER_API_NODE_OCI_SANDBOX_POOL: '5' }, '/').ociSandboxPool).toBe(5);
  });

  it.each([
    [{ 'kubelet-port': 70000 }, /--kubelet-port must be an integer 0-65535/],
    [{ 'max-pods': 0 }, /--max-pods must be an integer 1-100000/],
    [{ address: 'not-an-ip' }, /--address must be an IP address/],
    [{ 'pod-network': 'bridge' }, /--pod-network must be loopback or shared/],
    [{ 'container-log-max-size': '10 megs' }, /--container-log-max-size must be a size of at least 1Ki \(as 10Mi\), got 10 megs/],
    [{ 'container-log-max-size': '512' }, /--container-log-max-size must be a size of at least 1Ki/],
    [{ 'kube-reserved': 'cpu=lots' }, /--kube-reserved: "cpu=lots" is not cpu=<quantity> or memory=<quantity>/],
    [{ 'kube-reserved': 'disk=1Gi' }, /--kube-reserved: "disk=1Gi" is not/],
    [{ 'container-log-max-files': '1' }, /--container-log-max-files must be an integer 2-1000/],
    [{ 'oci-sandbox-pool': '-1' }, /--oci-sandbox-pool must be an integer 0-64/],
    [{ 'oci-sandbox-pool': 'two' }, /--oci-sandbox-pool must be an integer 0-64/],
    [{ 'cluster-dns': 'kube-dns' }, /--cluster-dns must be an IP address, got kube-dns/],
    [{ 'container-runtime': 'docker' }, /--container-runtime must be oci, process or simulated, got docker/],
    [{ 'tls-cert-file': 'a.pem' }, /--tls-cert-file and --tls-private-key-file must be given together/],
  ])('refuses %j', (cli, message) => {
    expect(() => resolveNodeConfig(cli, {}, '/')).toThrow(ConfigError);
    expect(() => resolveNodeConfig(cli, {}, '/')).toThrow(message);
  });
});
