/**
 * `cluster-api controller-manager`: the controller manager in a process of its own, a client of the
 * API server over HTTP by kubeconfig, as kube-controller-manager is. With
 * `--use-service-account-credentials` (the default) each controller acts as its kube-system
 * ServiceAccount: the manager's own credentials create the ServiceAccount if missing and request a
 * token for it (TokenRequest, one hour), renewed at four fifths of its life into a private file the
 * controller's client reads again when it changes. Discovery is read again every 30 s, so kinds
 * added later (CRDs) are garbage-collected and emptied with their namespaces.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAlreadyExists, KubeClient, Resources } from '@func/kube-client';
import type { ControllerManagerConfig } from '../config.js';
import { httpClient } from '../client/http.js';
import type { ApiClient } from '../client/interface.js';
import { Controllers } from './descriptors.js';
import type { Controller } from './shared.js';
import { startControllerManager } from './manager.js';
import { isEnabled } from './names.js';

const TokenSeconds = 3600;
const DiscoveryEveryMs = 30_000;

type Log = (entry: Record<string, unknown>) => void;

/** A client acting as `kube-system/<name>`, its token kept fresh in `dir`; `stop` ends the renewals. */
async function serviceAccountClient(kube: KubeClient, name: string, dir: string, log?: Log): Promise<{ kube: KubeClient; stop(): void }> {
  await kube.create(Resources.serviceAccounts, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: 'kube-system' } }, { namespace: 'kube-system' })
    .catch((err: unknown) => { if (!isAlreadyExists(err)) throw err; });
  const file = join(dir, `${name}.token`);
  const request = async (): Promise<void> => {
    const path = `/api/v1/namespaces/kube-system/serviceaccounts/${name}/token`;
    const body = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: TokenSeconds } };
    const answer = JSON.parse((await kube.raw({ method: 'POST', path, body, what: `token for ${name}` })).body) as { status: { token: string } };
    writeFileSync(file, answer.status.token, { mode: 0o600 });
  };
  await request();
  const timer = setInterval(() => void request().catch((err: unknown) => log?.({ level: 'warn', msg: 'token renewal failed', serviceAccount: name, error: (err as Error).message })), TokenSeconds * 800);
  timer.unref();
  const client = new KubeClient({ ...kube.connection, credentials: { tokenFile: file } });
  return { kube: client, stop: () => (clearInterval(timer), client.close()) };
}

/** Starts the manager against the API server `kube` reaches; stop ends it and every client it made. */
export async function runControllerManager(kube: KubeClient, config: ControllerManagerConfig, log?: Log): Promise<Controller> {
  const api = await httpClient(kube);
  const words = config.controllers ?? ['*'];
  const accounts = [...new Set(Controllers.filter((d) => !d.apiServer && isEnabled(d.name, words)).map((d) => d.serviceAccount!))];
  const dir = mkdtempSync(join(tmpdir(), 'controller-manager-'));
  chmodSync(dir, 0o700);
  const made = new Map<string, { kube: KubeClient; client: ApiClient; stop(): void }>();
  try {
    for (const sa of config.useServiceAccountCredentials ? accounts : []) {
      const { kube: own, stop } = await serviceAccountClient(kube, sa, dir, log);
      made.set(sa, { kube: own, client: api.as(own), stop });
    }
  } catch (err) {
    for (const m of made.values()) m.stop();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const discovery = setInterval(() => void api.refresh().catch((err: unknown) => log?.({ level: 'warn', msg: 'discovery failed', error: (err as Error).message })), DiscoveryEveryMs);
  discovery.unref();
  // Acting as a user's ServiceAccount (an ApiServerSource's): impersonation by the eventing
  // controller's own credentials, so the server authorizes both the impersonation and each request.
  const impersonators = new Map<string, KubeClient>();
  const clientAs = (namespace: string, serviceAccount: string): ApiClient => {
    const key = `${namespace}/${serviceAccount}`;
    let client = impersonators.get(key);
    if (!client) {
      const base = made.get('eventing-controller')?.kube ?? kube;
      client = new KubeClient({ ...base.connection, credentials: { ...base.connection.credentials, impersonate: { user: `system:serviceaccount:${namespace}:${serviceAccount}` } } });
      impersonators.set(key, client);
    }
    return api.as(client);
  };
  const manager = startControllerManager({
    clientFor: (sa) => (sa && made.get(sa)?.client) || api,
    clientAs,
    controllers: words,
    log,
    apiServerUrl: kube.connection.server,
    nodes: { clusterCidr: config.clusterCidr, nodeCidrMaskSize: config.nodeCidrMaskSize, gracePeriodMs: config.nodeMonitorGracePeriod * 1000 },
    ...(config.leaderElect && { leaderElection: { client: kube, leaseDurationSeconds: config.leaderElectLeaseDuration } }),
  });
  return {
    stop: async () => {
      clearInterval(discovery);
      await manager.stop();
      for (const m of made.values()) m.stop();
      for (const c of impersonators.values()) c.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
