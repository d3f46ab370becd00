/**
 * Where to connect and as whom, resolved as kubectl resolves it: `--kubeconfig` (one file), else
 * `KUBECONFIG` (a list, merged), else `~/.kube/config`, else the in-cluster service account; then
 * `--context` or current-context, and the namespace from `--namespace` or the context.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';
import { KubeconfigError } from './errors.js';
import { inClusterConnection, isInCluster } from './in-cluster.js';
import { type Located, type MergedKubeconfig, mergeKubeconfigFiles } from './kubeconfig-files.js';

export interface Credentials {
  token?: string;
  /** Read again when it changes on disk (projected tokens rotate). */
  tokenFile?: string;
  clientCert?: Buffer;
  clientKey?: Buffer;
  username?: string;
  password?: string;
  /** Act as another user (kubeconfig's `as` and `as-groups`, `kubectl --as`): Impersonate-* headers, authorized by the server. */
  impersonate?: { user: string; groups?: string[] };
}

export interface Connection {
  server: string;
  ca?: Buffer;
  insecureSkipTlsVerify: boolean;
  tlsServerName?: string;
  credentials: Credentials;
  namespace: string;
  /** The context used, or `in-cluster`. */
  context: string;
  /** The files that were merged (empty in-cluster). */
  files: string[];
}

export interface LoadOptions {
  /** `--kubeconfig`: one file, which must exist. */
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  env?: NodeJS.ProcessEnv;
  home?: string;
  /** Root of the in-cluster service account files (default /var/run/secrets/kubernetes.io/serviceaccount). */
  serviceAccountRoot?: string;
}

/** The kubeconfig files kubectl would read, in merge order. */
export function kubeconfigFiles(options: LoadOptions = {}): string[] {
  if (options.kubeconfig) return [resolve(options.kubeconfig)];
  const env = options.env ?? process.env;
  if (env.KUBECONFIG) return env.KUBECONFIG.split(delimiter).filter(Boolean).map((f) => resolve(f)).filter((f, i, all) => all.indexOf(f) === i && existsSync(f));
  const home = join(options.home ?? homedir(), '.kube', 'config');
  return existsSync(home) ? [home] : [];
}

export function loadConnection(options: LoadOptions = {}): Connection {
  const env = options.env ?? process.env;
  const files = kubeconfigFiles(options);
  if (files.length === 0) {
    if (isInCluster(env)) return inClusterConnection({ env, root: options.serviceAccountRoot, namespace: options.namespace });
    if (!options.kubeconfig && env.KUBECONFIG?.split(delimiter).some(Boolean)) {
      throw new KubeconfigError(`No kubeconfig: KUBECONFIG is set to ${JSON.stringify(env.KUBECONFIG)}, but no file it names exists (a cluster not started yet, or a data directory moved?)`);
    }
    throw new KubeconfigError('No kubeconfig: pass --kubeconfig, set KUBECONFIG, or create ~/.kube/config (or run in a pod with a service account)');
  }
  return resolveContext(mergeKubeconfigFiles(files), options);
}

function pick(map: MergedKubeconfig['clusters'], name: string, kind: string, ctx: Located<Record<string, unknown>>, ctxName: string) {
  const found = map.get(name);
  if (!found) throw new KubeconfigError(`kubeconfig ${ctx.file}: ${ctx.field}.${kind} "${name}" (context "${ctxName}") is not defined in any file's ${kind}s`);
  return found;
}

function resolveContext(merged: MergedKubeconfig, options: LoadOptions): Connection {
  const name = options.context ?? merged.currentContext?.value;
  if (!name) throw new KubeconfigError(`kubeconfig ${merged.files.join(delimiter)}: no current-context; pass --context (contexts: ${[...merged.contexts.keys()].join(', ') || 'none'})`);
  const ctx = merged.contexts.get(name);
  if (!ctx) throw new KubeconfigError(`kubeconfig ${merged.files.join(delimiter)}: context "${name}" is not defined (contexts: ${[...merged.contexts.keys()].join(', ') || 'none'})`);
  const str = (loc: Located<Record<string, unknown>>, key: string): string | undefined => {
    const v = loc.value[key];
    if (v === undefined || v === null || v === '') return undefined;
    if (typeof v !== 'string') throw new KubeconfigError(`kubeconfig ${loc.file}: ${loc.field}.${key} must be a string`);
    return v;
  };
  const clusterName = str(ctx, 'cluster');
  const userName = str(ctx, 'user');
  if (!clusterName) throw new KubeconfigError(`kubeconfig ${ctx.file}: ${ctx.field}.cluster is missing (context "${name}")`);
  const cluster = pick(merged.clusters, clusterName, 'cluster', ctx, name);
  const user = userName ? pick(merged.users, userName, 'user', ctx, name) : undefined;
  return {
    ...clusterFields(cluster, str),
    credentials: user ? userFields(user, str) : {},
    namespace: options.namespace ?? str(ctx, 'namespace') ?? 'default',
    context: name,
    files: merged.files,
  };
}

type Str = (loc: Located<Record<string, unknown>>, key: string) => string | undefined;

/** A path in a kubeconfig is relative to the file that holds it. */
const relativeTo = (loc: Located<unknown>, path: string) => (isAbsolute(path) ? path : join(dirname(loc.file), path));

function readField(loc: Located<Record<string, unknown>>, key: string, path: string): Buffer {
  try {
    return readFileSync(relativeTo(loc, path));
  } catch (err) {
    throw new KubeconfigError(`kubeconfig ${loc.file}: ${loc.field}.${key}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

function pemData(loc: Located<Record<string, unknown>>, key: string, value: string, kind: 'CERTIFICATE' | 'KEY'): Buffer {
  const data = Buffer.from(value, 'base64');
  if (!data.toString('utf8').includes(kind === 'KEY' ? 'PRIVATE KEY-----' : '-----BEGIN CERTIFICATE-----')) {
    throw new KubeconfigError(`kubeconfig ${loc.file}: ${loc.field}.${key} is not base64 of a PEM ${kind === 'KEY' ? 'private key' : 'certificate'}`);
  }
  return data;
}

function clusterFields(loc: Located<Record<string, unknown>>, str: Str): Pick<Connection, 'server' | 'ca' | 'insecureSkipTlsVerify' | 'tlsServerName'> {
  const server = str(loc, 'server');
  if (!server) throw new KubeconfigError(`kubeconfig ${loc.file}: ${loc.field}.server is missing`);
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new KubeconfigError(`kubeconfig ${loc.file}: ${loc.field}.server ${JSON.stringify(server)} is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new KubeconfigError(`kubeconfig ${loc.file}: ${loc.field}.server must be an http(s) URL`);
  const caData = str(loc, 'certificate-authority-data');
  const caFile = str(loc, 'certificate-authority');
  const insecure = loc.value['insecure-skip-tls-verify'];
  if (insecure !== undefined && typeof insecure !== 'boolean') throw new KubeconfigError(`kubeconfig ${loc.file}: ${loc.field}.insecure-skip-tls-verify must be true or false`);
  return {
    server: server.replace(/\/+$/, ''),
    ca: caData ? pemData(loc, 'certificate-authority-data', caData, 'CERTIFICATE') : caFile ? readField(loc, 'certificate-authority', caFile) : undefined,
    insecureSkipTlsVerify: insecure === true,
    tlsServerName: str(loc, 'tls-server-name'),
  };
}

function userFields(loc: Located<Record<string, unknown>>, str: Str): Credentials {
  for (const unsupported of ['exec', 'auth-provider']) {
    if (loc.value[unsupported]) throw new KubeconfigError(`kubeconfig ${loc.file}: ${loc.field}.${unsupported} (credential plugins) is not supported; use a token, tokenFile or client certificate`);
  }
  const certData = str(loc, 'client-certificate-data');
  const keyData = str(loc, 'client-key-data');
  const certFile = str(loc, 'client-certificate');
  const keyFile = str(loc, 'client-key');
  const clientCert = certData ? pemData(loc, 'client-certificate-data', certData, 'CERTIFICATE') : certFile ? readField(loc, 'client-certificate', certFile) : undefined;
  const clientKey = keyData ? pemData(loc, 'client-key-data', keyData, 'KEY') : keyFile ? readField(loc, 'client-key', keyFile) : undefined;
  if (!!clientCert !== !!clientKey) throw new KubeconfigError(`kubeconfig ${loc.file}: ${loc.field} has a client certificate without a key, or a key without a certificate`);
  const tokenFile = str(loc, 'tokenFile');
  const as = str(loc, 'as');
  const asGroups = loc.value['as-groups'];
  if (asGroups !== undefined && asGroups !== null && (!Array.isArray(asGroups) || asGroups.some((g) => typeof g !== 'string'))) {
    throw new KubeconfigError(`kubeconfig ${loc.file}: ${loc.field}.as-groups must be a list of strings`);
  }
  if (!as && Array.isArray(asGroups) && asGroups.length > 0) throw new KubeconfigError(`kubeconfig ${loc.file}: ${loc.field}.as-groups needs as (the user to impersonate)`);
  return {
    ...(as && { impersonate: { user: as, ...(Array.isArray(asGroups) && asGroups.length > 0 && { groups: asGroups as string[] }) } }),
    token: str(loc, 'token'),
    tokenFile: tokenFile ? relativeTo(loc, tokenFile) : undefined,
    clientCert,
    clientKey,
    username: str(loc, 'username'),
    password: str(loc, 'password'),
  };
}
