/**
 * Kubeconfig loading as kubectl does it, each variant used against the real cluster API (TLS with
 * the CA it generated, its admin token), and every malformed input answered with a message naming
 * the file and the field.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { KubeApiError, KubeClient, KubeConnectionError, KubeconfigError, type LoadOptions, loadConnection, Resources } from '../src/index.js';
import { type Cluster, startCluster } from './cluster.js';

let cluster: Cluster;
let work: string;
let ca: string;
let n = 0;

beforeAll(async () => {
  cluster = await startCluster();
  work = mkdtempSync(join(tmpdir(), 'kubeconfig-'));
  const generated = parse(readFileSync(cluster.kubeconfig, 'utf8'));
  ca = generated.clusters[0].cluster['certificate-authority-data'];
});
afterAll(async () => {
  await cluster?.stop();
  rmSync(work, { recursive: true, force: true });
});

function file(doc: unknown, name = `k${++n}.yaml`): string {
  const path = join(work, name);
  writeFileSync(path, typeof doc === 'string' ? doc : stringify(doc));
  return path;
}

const config = (cluster: Record<string, unknown>, user: Record<string, unknown>, context: Record<string, unknown> = {}) => ({
  apiVersion: 'v1', kind: 'Config',
  clusters: [{ name: 'c', cluster }], users: [{ name: 'u', user }],
  contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u', ...context } }], 'current-context': 'ctx',
});

async function namespacesWith(options: LoadOptions): Promise<string[]> {
  const client = KubeClient.fromKubeconfig(options);
  try {
    return (await client.list(Resources.namespaces)).items.map((i) => i.metadata!.name!);
  } finally {
    client.close();
  }
}
const failure = (p: Promise<unknown>) => p.then(() => { throw new Error('expected a failure'); }, (e: unknown) => e as Error);

describe('kubeconfig variants against the cluster API', () => {
  it('uses the generated kubeconfig (embedded CA, bearer token) through --kubeconfig and KUBECONFIG', async () => {
    expect(await namespacesWith({ kubeconfig: cluster.kubeconfig })).toContain('default');
    expect(await namespacesWith({ env: { KUBECONFIG: cluster.kubeconfig } })).toContain('default');
  });

  it('merges a KUBECONFIG list as kubectl: first definition of a name and first current-context win', async () => {
    const a = file({ clusters: [{ name: 'c', cluster: { server: cluster.url, 'certificate-authority-data': ca } }], users: [{ name: 'u', user: { token: cluster.token } }] });
    const b = file({ contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u', namespace: 'kube-system' } }], 'current-context': 'ctx' });
    const c = file({ clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:1' } }], 'current-context': 'nope' });
    const env = { KUBECONFIG: [a, join(work, 'missing.yaml'), b, c].join(delimiter) };
    expect(loadConnection({ env })).toMatchObject({ server: cluster.url, namespace: 'kube-system', context: 'ctx', files: [a, b, c] });
    expect(await namespacesWith({ env })).toContain('default');
    expect(loadConnection({ env, namespace: 'x' }).namespace).toBe('x');
  });

  it('reads a token file and a CA file relative to the kubeconfig, and switches --context', async () => {
    const dir = join(work, 'rel');
    mkdirSync(dir);
    writeFileSync(join(dir, 'token'), `${cluster.token}\n`);
    writeFileSync(join(dir, 'ca.crt'), Buffer.from(ca, 'base64'));
    const path = file({
      clusters: [{ name: 'c', cluster: { server: cluster.url, 'certificate-authority': 'ca.crt' } }, { name: 'dead', cluster: { server: 'https://127.0.0.1:1' } }],
      users: [{ name: 'u', user: { tokenFile: 'token' } }],
      contexts: [{ name: 'dead', context: { cluster: 'dead', user: 'u' } }, { name: 'good', context: { cluster: 'c', user: 'u' } }], 'current-context': 'dead',
    }, 'rel/config');
    expect(await namespacesWith({ kubeconfig: path, context: 'good' })).toContain('default');
    const dead = await failure(namespacesWith({ kubeconfig: path }));
    expect(dead).toBeInstanceOf(KubeConnectionError);
    expect(dead).toMatchObject({ kind: 'unreachable', message: expect.stringMatching(/Cannot reach the Kubernetes API at https:\/\/127\.0\.0\.1:1 \(ECONNREFUSED\)/) });
  });

  it('connects with insecure-skip-tls-verify and with tls-server-name; a wrong CA or name is a TLS error', async () => {
    expect(await namespacesWith({ kubeconfig: file(config({ server: cluster.url, 'insecure-skip-tls-verify': true }, { token: cluster.token })) })).toContain('default');
    expect(await namespacesWith({ kubeconfig: file(config({ server: cluster.url, 'certificate-authority-data': ca, 'tls-server-name': 'localhost' }, { token: cluster.token })) })).toContain('default');
    const wrongName = await failure(namespacesWith({ kubeconfig: file(config({ server: cluster.url, 'certificate-authority-data': ca, 'tls-server-name': 'wrong.example' }, { token: cluster.token })) }));
    expect(wrongName).toMatchObject({ kind: 'tls' });
    const other = await startCluster();
    try {
      const otherCa = parse(readFileSync(other.kubeconfig, 'utf8')).clusters[0].cluster['certificate-authority-data'];
      const wrongCa = await failure(namespacesWith({ kubeconfig: file(config({ server: cluster.url, 'certificate-authority-data': otherCa }, { token: cluster.token })) }));
      expect(wrongCa).toBeInstanceOf(KubeConnectionError);
      expect(wrongCa.message).toMatch(/TLS handshake with https:\/\/127\.0\.0\.1:\d+ failed: .*certificate/);
      expect(wrongCa.message).not.toContain(cluster.token);
    } finally {
      await other.stop();
    }
  });

  it('answers a wrong token with a 401 KubeApiError, distinct from connection errors', async () => {
    const err = await failure(namespacesWith({ kubeconfig: file(config({ server: cluster.url, 'certificate-authority-data': ca }, { token: 'wrong-token' })) }));
    expect(err).toBeInstanceOf(KubeApiError);
    expect(err).toMatchObject({ code: 401, reason: 'Unauthorized' });
    expect(err.message).not.toContain('wrong-token');
  });

  it("impersonates the kubeconfig user's `as` and `as-groups` (kubectl --as), authorized by the server", async () => {
    const base = { server: cluster.url, 'certificate-authority-data': ca };
    const asNobody = KubeClient.fromKubeconfig({ kubeconfig: file(config(base, { token: cluster.token, as: 'nobody@example.com' })) });
    const asGroup = KubeClient.fromKubeconfig({ kubeconfig: file(config(base, { token: cluster.token, as: 'admin-by-group', 'as-groups': ['system:masters'] })) });
    try {
      // The impersonated user holds no grant: the server answers as it, a 403 naming it.
      const denied = await failure(asNobody.list(Resources.namespaces));
      expect(denied).toMatchObject({ code: 403, reason: 'Forbidden' });
      expect(denied.message).toContain('nobody@example.com');
      // As a member of system:masters it may do anything.
      expect((await asGroup.list(Resources.namespaces)).items.map((i) => i.metadata!.name)).toContain('default');
    } finally {
      asNobody.close();
      asGroup.close();
    }
    expect(() => loadConnection({ kubeconfig: file(config(base, { token: cluster.token, 'as-groups': ['x'] })) })).toThrow(/as-groups needs as/);
    expect(() => loadConnection({ kubeconfig: file(config(base, { token: cluster.token, as: 'x', 'as-groups': 'system:masters' })) })).toThrow(/as-groups must be a list of strings/);
  });

  it('uses the in-cluster service account files under an overridable root', async () => {
    const root = join(work, 'sa');
    mkdirSync(root);
    writeFileSync(join(root, 'token'), cluster.token);
    writeFileSync(join(root, 'ca.crt'), Buffer.from(ca, 'base64'));
    writeFileSync(join(root, 'namespace'), 'kube-public\n');
    const port = new URL(cluster.url).port;
    const options = { env: { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: port }, serviceAccountRoot: root, home: work };
    expect(loadConnection(options)).toMatchObject({ server: cluster.url, namespace: 'kube-public', context: 'in-cluster' });
    expect(await namespacesWith(options)).toContain('kube-public');
  });
});

describe('malformed kubeconfigs', () => {
  it.each<[string, unknown, RegExp]>([
    ['invalid YAML', 'clusters: [\n  - name: x\n  bad', /not valid YAML/],
    ['a list at the top', '- a\n- b\n', /the top level must be a mapping/],
    ['clusters not a list', { clusters: { c: 1 } }, /clusters must be a list/],
    ['a cluster without a name', { clusters: [{ cluster: { server: 'https://x' } }] }, /clusters\[0\]\.name is missing/],
    ['a missing server', config({}, { token: 't' }), /clusters\[0\]\.cluster\.server is missing/],
    ['a server that is not a URL', config({ server: 'not a url' }, { token: 't' }), /clusters\[0\]\.cluster\.server "not a url" is not a URL/],
    ['CA data that is not a certificate', config({ server: 'https://x', 'certificate-authority-data': 'bm90IGEgY2VydA==' }, { token: 't' }), /clusters\[0\]\.cluster\.certificate-authority-data is not base64 of a PEM certificate/],
    ['a CA file that does not exist', config({ server: 'https://x', 'certificate-authority': 'nope.crt' }, { token: 't' }), /clusters\[0\]\.cluster\.certificate-authority: cannot read nope\.crt \(ENOENT\)/],
    ['insecure-skip-tls-verify as a string', config({ server: 'https://x', 'insecure-skip-tls-verify': 'yes' }, {}), /insecure-skip-tls-verify must be true or false/],
    ['an exec credential plugin', config({ server: 'https://x' }, { exec: { command: 'aws' } }), /users\[0\]\.user\.exec \(credential plugins\) is not supported/],
    ['a certificate without a key', config({ server: 'https://x' }, { 'client-certificate-data': Buffer.from('-----BEGIN CERTIFICATE-----\n').toString('base64') }), /users\[0\]\.user has a client certificate without a key/],
    ['a context naming an undefined cluster', { ...config({ server: 'https://x' }, {}), contexts: [{ name: 'ctx', context: { cluster: 'ghost', user: 'u' } }] }, /contexts\[0\]\.context\.cluster "ghost" \(context "ctx"\) is not defined/],
    ['a current-context that does not exist', { ...config({ server: 'https://x' }, {}), 'current-context': 'elsewhere' }, /context "elsewhere" is not defined \(contexts: ctx\)/],
    ['no current-context', { ...config({ server: 'https://x' }, {}), 'current-context': '' }, /no current-context; pass --context \(contexts: ctx\)/],
  ])('refuses %s, naming the file', (_what, doc, message) => {
    const path = file(doc);
    const err = (() => { try { loadConnection({ kubeconfig: path }); } catch (e) { return e as Error; } throw new Error('expected a failure'); })();
    expect(err).toBeInstanceOf(KubeconfigError);
    expect(err.message).toMatch(message);
    expect(err.message).toContain(path);
  });

  it('refuses a --kubeconfig that does not exist, and says what to do when there is no kubeconfig at all', () => {
    expect(() => loadConnection({ kubeconfig: join(work, 'absent.yaml') })).toThrow(/kubeconfig .*absent\.yaml: cannot read it \(ENOENT\)/);
    expect(() => loadConnection({ env: {}, home: join(work, 'nohome') })).toThrow(/No kubeconfig: pass --kubeconfig, set KUBECONFIG, or create ~\/\.kube\/config/);
    // KUBECONFIG set, but to files that do not exist: said so, not "set KUBECONFIG".
    const missing = join(work, 'data', 'kubeconfig.yaml');
    expect(() => loadConnection({ env: { KUBECONFIG: missing }, home: join(work, 'nohome') })).toThrow(`KUBECONFIG is set to ${JSON.stringify(missing)}, but no file it names exists`);
    expect(() => loadConnection({ env: { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' }, home: join(work, 'nohome'), serviceAccountRoot: join(work, 'nosa') })).toThrow(/In-cluster config: cannot read .*nosa\/token \(ENOENT\)/);
  });
});
