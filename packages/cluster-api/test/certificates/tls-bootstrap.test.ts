/**
 * A node joins by TLS bootstrap, with real processes as a user runs them: `cluster-api serve`, a
 * bootstrap token Secret made with kubectl, a bootstrap kubeconfig made with `kubectl config`, and
 * `cluster-api node --bootstrap-kubeconfig … --kubeconfig …` with no certificate of its own. The
 * node posts its CSR, the csrapproving controller approves it, csrsigning issues it, the node writes
 * its kubeconfig (0600) and runs as system:node:<name>: Ready, its Lease renewed. A restart reuses
 * the kubeconfig; `cluster-api token create` makes the token and the bootstrap kubeconfig in one step; an unknown or expired token, or a token not allowed to ask, ends the node with
 * the reason.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../testing/src/poll.js';

const cli = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const kubectlBin = '/usr/bin/kubectl';
const run = promisify(execFile);

let dir: string;
let data: string;
let server: string;
let env: NodeJS.ProcessEnv;
const children = new Set<ChildProcess>();

/** A cluster-api process: resolves with its log once `ready` appears, or once it exits (with its code). */
function start(args: string[], ready: RegExp): Promise<{ child: ChildProcess; log: () => string; exit?: number | null }> {
  const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  children.add(child);
  let log = '';
  return new Promise((resolve) => {
    child.stderr!.on('data', (d: Buffer) => {
      log += d.toString();
      if (ready.test(log)) resolve({ child, log: () => log });
    });
    child.once('exit', (code) => (children.delete(child), resolve({ child, log: () => log, exit: code })));
  });
}

const kubectl = async (...args: string[]) => {
  try {
    return (await run(kubectlBin, args, { env, timeout: 30_000 })).stdout;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    throw new Error(`kubectl ${args.join(' ')}: ${e.stderr ?? ''}${e.stdout ?? ''}`);
  }
};

/** The README's commands: a bootstrap token Secret… */
async function tokenSecret(id: string, secret: string, data: Record<string, string>) {
  await kubectl('create', 'secret', 'generic', `bootstrap-token-${id}`, '-n', 'kube-system', '--type', 'bootstrap.kubernetes.io/token',
    `--from-literal=token-id=${id}`, `--from-literal=token-secret=${secret}`, ...Object.entries(data).map(([k, v]) => `--from-literal=${k}=${v}`));
}

/** …and a kubeconfig that carries only the token. */
async function bootstrapKubeconfig(file: string, token: string) {
  await kubectl('config', 'set-cluster', 'cluster-api', `--server=${server}`, `--certificate-authority=${join(data, 'tls', 'ca.crt')}`, '--embed-certs', `--kubeconfig=${file}`);
  await kubectl('config', 'set-credentials', 'tls-bootstrap', `--token=${token}`, `--kubeconfig=${file}`);
  await kubectl('config', 'set-context', 'cluster-api', '--cluster=cluster-api', '--user=tls-bootstrap', `--kubeconfig=${file}`);
  await kubectl('config', 'use-context', 'cluster-api', `--kubeconfig=${file}`);
}

const nodeArgs = (name: string) => ['--name', name, '--data-dir', join(dir, name), '--address', '127.0.0.1', '--kubelet-port', '0', '--node-lease-duration-seconds', '2'];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tls-bootstrap-'));
  data = join(dir, 'data');
  const serve = await start(['serve', '--port', '0', '--data-dir', data, '--disable-agent'], /"msg":"listening"/);
  if (serve.exit !== undefined) throw new Error(`serve exited: ${serve.log()}`);
  env = { PATH: process.env.PATH, HOME: dir, KUBECONFIG: join(data, 'kubeconfig.yaml'), KUBECACHEDIR: join(dir, 'cache') };
  server = await kubectl('config', 'view', '-o', 'jsonpath={.clusters[0].cluster.server}');
}, 120_000);

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await new Promise((r) => setTimeout(r, 200));
  rmSync(dir, { recursive: true, force: true });
});

describe.runIf(existsSync(kubectlBin))('TLS bootstrap of a node agent', () => {
  it('joins with only a bootstrap token: CSR approved and issued, kubeconfig written 0600, Node Ready, Lease renewed', async () => {
    const expiration = new Date(Date.now() + 3600_000).toISOString();
    await tokenSecret('abcdef', '0123456789abcdef', { 'usage-bootstrap-authentication': 'true', 'usage-bootstrap-signing': 'true', expiration });
    await bootstrapKubeconfig(join(dir, 'bootstrap.kubeconfig'), 'abcdef.0123456789abcdef');
    const kubeconfig = join(dir, 'boot.kubeconfig');
    const node = await start(['node', '--bootstrap-kubeconfig', join(dir, 'bootstrap.kubeconfig'), '--kubeconfig', kubeconfig, ...nodeArgs('boot')], /"msg":"node agent running"/);
    expect(node.exit, node.log()).toBeUndefined();
    expect(node.log()).toMatch(/"msg":"client certificate issued, kubeconfig written"/);
    expect(statSync(kubeconfig).mode & 0o777).toBe(0o600);

    const csrs = await kubectl('get', 'csr');
    expect(csrs).toMatch(/^node-csr-\w+\s+\S+\s+kubernetes\.io\/kube-apiserver-client-kubelet\s+system:bootstrap:abcdef\s+<none>\s+Approved,Issued$/m);
    const csr = JSON.parse(await kubectl('get', 'csr', '-o', 'json')).items[0];
    expect(csr.status.conditions[0]).toMatchObject({ type: 'Approved', status: 'True', reason: 'AutoApproved', message: 'Auto approving kubelet client certificate after SubjectAccessReview.' });

    const whoami = JSON.parse(await kubectl('auth', 'whoami', `--kubeconfig=${kubeconfig}`, '-o', 'jsonpath={.status.userInfo}'));
    expect(whoami).toEqual({ username: 'system:node:boot', groups: ['system:nodes', 'system:authenticated'] });
    await until('node boot Ready', async () => /^boot\s+Ready/m.test(await kubectl('get', 'nodes')), { timeoutMs: 60_000 });
    const renewed = async () => JSON.parse(await kubectl('get', 'lease', 'boot', '-n', 'kube-node-lease', '-o', 'json')).spec.renewTime as string;
    const first = await until('the node Lease', renewed, { timeoutMs: 30_000 });
    await until('the Lease renewed', async () => (await renewed()) !== first, { timeoutMs: 30_000 });
    node.child.kill('SIGTERM');
    await new Promise((r) => node.child.once('exit', r));
  }, 180_000);

  it('a restart runs with the kubeconfig it wrote and asks for no new certificate', async () => {
    const node = await start(['node', '--bootstrap-kubeconfig', join(dir, 'bootstrap.kubeconfig'), '--kubeconfig', join(dir, 'boot.kubeconfig'), ...nodeArgs('boot')], /"msg":"node agent running"/);
    expect(node.exit, node.log()).toBeUndefined();
    expect(node.log()).not.toMatch(/certificate signing request posted/);
    expect(JSON.parse(await kubectl('get', 'csr', '-o', 'json')).items.filter((c: { spec: { username: string } }) => c.spec.username === 'system:bootstrap:abcdef')).toHaveLength(1);
    node.child.kill('SIGTERM');
  }, 60_000);

  it('joins with a token from cluster-api token create and the bootstrap kubeconfig it writes', async () => {
    const out = join(dir, 'minted.kubeconfig');
    const { stdout } = await run(process.execPath, [cli, 'token', 'create', '--kubeconfig', join(data, 'kubeconfig.yaml'), '--ttl', '1h', '--description', 'for n3', '--bootstrap-kubeconfig-out', out]);
    const token = stdout.trim();
    expect(token).toMatch(/^[a-z0-9]{6}\.[a-z0-9]{16}$/);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    const secret = JSON.parse(await kubectl('get', 'secret', `bootstrap-token-${token.slice(0, 6)}`, '-n', 'kube-system', '-o', 'json'));
    const field = (k: string) => Buffer.from(secret.data[k], 'base64').toString();
    expect(secret.type).toBe('bootstrap.kubernetes.io/token');
    expect([field('token-id'), field('token-secret'), field('usage-bootstrap-authentication'), field('auth-extra-groups'), field('description')])
      .toEqual([token.slice(0, 6), token.slice(7), 'true', 'system:bootstrappers:kubeadm:default-node-token', 'for n3']);
    const left = Date.parse(field('expiration')) - Date.now();
    expect(left).toBeGreaterThan(3500_000);
    expect(left).toBeLessThanOrEqual(3600_000);
    const node = await start(['node', '--bootstrap-kubeconfig', out, '--kubeconfig', join(dir, 'n3.kubeconfig'), ...nodeArgs('n3')], /"msg":"node agent running"/);
    expect(node.exit, node.log()).toBeUndefined();
    await until('node n3 Ready', async () => /^n3\s+Ready/m.test(await kubectl('get', 'nodes')), { timeoutMs: 60_000 });
    node.child.kill('SIGTERM');
    for (const [args, message] of [[['--ttl', 'soon'], '--ttl must be a duration'], [['--groups', 'system:masters'], '--groups: "system:masters" must match']] as const) {
      const failed = await run(process.execPath, [cli, 'token', 'create', '--kubeconfig', join(data, 'kubeconfig.yaml'), ...args]).then(() => undefined, (err: { code?: number; stderr?: string }) => err);
      expect(failed?.code).toBe(1);
      expect(failed?.stderr).toContain(message);
    }
  }, 120_000);

  it('with --server-tls-bootstrap, waits for its kubelet-serving certificate to be approved, then serves the API server with it', async () => {
    const starting = start(['node', '--bootstrap-kubeconfig', join(dir, 'bootstrap.kubeconfig'), '--kubeconfig', join(dir, 'n4.kubeconfig'), '--server-tls-bootstrap', ...nodeArgs('n4')], /"msg":"node agent running"/);
    type Csr = { metadata: { name: string }; spec: { signerName: string; username: string }; status?: { conditions?: unknown[] } };
    const serving = await until('the serving CSR', async () => (JSON.parse(await kubectl('get', 'csr', '-o', 'json')).items as Csr[])
      .find((c) => c.spec.signerName === 'kubernetes.io/kubelet-serving' && c.spec.username === 'system:node:n4'), { timeoutMs: 60_000 });
    expect(serving.status?.conditions ?? []).toEqual([]);
    await kubectl('certificate', 'approve', serving.metadata.name);
    const node = await starting;
    expect(node.exit, node.log()).toBeUndefined();
    expect(node.log()).toMatch(/"msg":"serving certificate issued"/);
    expect(node.log()).not.toMatch(/no certificate for the kubelet server/);
    const cert = new X509Certificate(readFileSync(join(dir, 'n4', 'pki', 'kubelet-server.crt')));
    expect(cert.subjectAltName).toBe('DNS:n4, IP Address:127.0.0.1');
    expect(statSync(join(dir, 'n4', 'pki', 'kubelet-server.key')).mode & 0o777).toBe(0o600);
    // pods/log: the API server reaches the agent over TLS and checks it is node n4's certificate (a
    // bootstrapped node without a serving certificate answers 503 "the node agent of … cannot be reached").
    await kubectl('run', 'on-n4', '--image=nginx:1.27', '--overrides={"spec":{"nodeName":"n4"}}');
    await until('on-n4 Running', async () => /Running/.test(await kubectl('get', 'pod', 'on-n4', '--no-headers')), { timeoutMs: 60_000 });
    expect(await kubectl('logs', 'on-n4')).toBe('');
    node.child.kill('SIGTERM');
  }, 120_000);

  it('ends with the reason when the token is unknown, expired, or may not ask for certificates', async () => {
    const expired = join(dir, 'expired.kubeconfig');
    await tokenSecret('expird', '0123456789abcdef', { 'usage-bootstrap-authentication': 'true', expiration: '2020-01-01T00:00:00Z' });
    await bootstrapKubeconfig(expired, 'expird.0123456789abcdef');
    const unknown = join(dir, 'unknown.kubeconfig');
    await bootstrapKubeconfig(unknown, 'zzzzzz.0123456789abcdef');
    for (const [file, name] of [[expired, 'expired'], [unknown, 'unknown']] as const) {
      const node = await start(['node', '--bootstrap-kubeconfig', file, '--kubeconfig', join(dir, `${name}.node.kubeconfig`), ...nodeArgs(name)], /"msg":"node agent running"/);
      expect(node.exit).toBe(1);
      expect(node.log()).toContain('cluster-api: the API server refused the bootstrap credentials (401 Unauthorized)');
      expect(node.log()).not.toMatch(/\n\s+at /);
      expect(existsSync(join(dir, `${name}.node.kubeconfig`))).toBe(false);
    }
    // A token that authenticates, in a group no binding lets post CSRs.
    await kubectl('delete', 'clusterrolebinding', 'kubeadm:kubelet-bootstrap');
    const node = await start(['node', '--bootstrap-kubeconfig', join(dir, 'bootstrap.kubeconfig'), '--kubeconfig', join(dir, 'denied.kubeconfig'), ...nodeArgs('denied')], /"msg":"node agent running"/);
    expect(node.exit).toBe(1);
    expect(node.log()).toContain('cluster-api: these credentials may not request certificates (403 Forbidden)');
  }, 120_000);

  it('refuses --bootstrap-kubeconfig without --kubeconfig', async () => {
    const node = await start(['node', '--bootstrap-kubeconfig', join(dir, 'bootstrap.kubeconfig'), ...nodeArgs('lone')], /"msg":"node agent running"/);
    expect(node.exit).toBe(1);
    expect(node.log()).toContain('--bootstrap-kubeconfig needs --kubeconfig');
  });
});
