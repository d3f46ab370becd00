/**
 * The Secrets a function reads (func.yaml `{{ secret:name:key }}`, secret volumes), made as kubectl
 * makes them: `create` from literals (`k=v`), files (`[key=]path`, the key defaulting to the file's
 * name) and env files (`.env`: one key per line), in the function's namespace (deploy's: `--namespace`,
 * func.yaml, the kubeconfig context's). Values are sent, never printed: `list` shows key names.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { parseEnv } from 'node:util';
import type { KubeObject } from '@func/kube-client';
import { CommandError } from '../command-error.js';
import { parseKeyValue } from '../func-yaml-lists.js';
import { funcYamlFile } from '../func-yaml.js';
import { loadProject } from '../project.js';
import { clusterFailure, connect, type Cluster, type ClusterOptions } from './cluster.js';

export interface SecretSources {
  literals?: string[];
  files?: string[];
  envFiles?: string[];
}

interface Secret extends KubeObject {
  type?: string;
  data?: Record<string, string>;
}

const KEY = /^[-._a-zA-Z0-9]+$/;
const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function readSource(path: string, flag: string): Buffer {
  const file = resolve(path);
  if (!existsSync(file)) throw new CommandError(`${flag} ${path}: no such file.`);
  if (statSync(file).isDirectory()) throw new CommandError(`${flag} ${path}: is a directory; name a file.`);
  return readFileSync(file);
}

/** The Secret's data (base64), key by key; a CommandError for a bad source or a key given twice. */
export function secretData(sources: SecretSources): Record<string, string> {
  const data: Record<string, string> = {};
  const put = (key: string, value: Buffer, from: string) => {
    if (!KEY.test(key)) throw new CommandError(`${from}: key ${JSON.stringify(key)} is not valid (letters, digits, -, _ and . only).`);
    if (key in data) throw new CommandError(`${from}: key ${key} is given more than once.`);
    data[key] = value.toString('base64');
  };
  for (const literal of sources.literals ?? []) {
    const [key, value] = parseKeyValue(literal, '--from-literal', 'API_KEY=s3cr3t');
    put(key, Buffer.from(value), `--from-literal ${key}=…`);
  }
  for (const spec of sources.files ?? []) {
    const at = spec.indexOf('=');
    const [key, path] = at > 0 ? [spec.slice(0, at), spec.slice(at + 1)] : [basename(spec), spec];
    put(key, readSource(path, '--from-file'), `--from-file ${spec}`);
  }
  for (const path of sources.envFiles ?? []) {
    const text = readSource(path, '--from-env-file').toString('utf8');
    const bad = text.split('\n').find((l) => l.trim() && !l.trim().startsWith('#') && !/^\s*(export\s+)?[^=\s]+\s*=/.test(l));
    if (bad !== undefined) throw new CommandError(`--from-env-file ${path}: a line is not KEY=value (line ${text.split('\n').indexOf(bad) + 1}).`);
    for (const [key, value] of Object.entries(parseEnv(text))) put(key, Buffer.from(value ?? ''), `--from-env-file ${path}`);
  }
  return data;
}

/** The cluster, in the namespace of the function at `path` when there is one. */
async function clusterFor(opts: ClusterOptions & { path: string }): Promise<Cluster> {
  const project = existsSync(funcYamlFile(opts.path)) ? await loadProject(opts.path) : undefined;
  return connect(opts, project);
}

async function withCluster<T>(opts: ClusterOptions & { path: string }, work: (c: Cluster, secrets: import('@func/kube-client').ResourceType) => Promise<T>): Promise<T> {
  const cluster = await clusterFor(opts);
  const { Resources } = await import('@func/kube-client');
  try {
    return await work(cluster, Resources.secrets);
  } finally {
    cluster.kube.close();
  }
}

function checkName(name: string): void {
  if (!NAME.test(name) || name.length > 253) throw new CommandError(`Secret name ${JSON.stringify(name)} is not valid: lower case letters, digits, - and ., starting and ending with a letter or digit.`);
}

export async function createSecret(opts: ClusterOptions & { path: string; name: string } & SecretSources): Promise<{ namespace: string; keys: string[] }> {
  checkName(opts.name);
  const data = secretData(opts);
  if (Object.keys(data).length === 0) throw new CommandError('A Secret needs at least one key: --from-literal KEY=value, --from-file [KEY=]path or --from-env-file .env.');
  return withCluster(opts, async ({ kube, namespace }, secrets) => {
    await kube.create<Secret>(secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: opts.name, namespace }, type: 'Opaque', data }, { namespace }).catch((err: { reason?: string }) => {
      if (err.reason === 'AlreadyExists') throw new CommandError(`Secret ${opts.name} already exists in namespace ${namespace}. Delete it first (func-runtime secret delete ${opts.name}), or pick another name.`);
      throw clusterFailure(err);
    });
    return { namespace, keys: Object.keys(data).sort() };
  });
}

export interface SecretLine {
  name: string;
  type: string;
  keys: string[];
  created?: string;
}

export async function listSecrets(opts: ClusterOptions & { path: string }): Promise<{ namespace: string; secrets: SecretLine[] }> {
  return withCluster(opts, async ({ kube, namespace }, secrets) => {
    const listed = await kube.list<Secret>(secrets, { namespace }).catch((err) => Promise.reject(clusterFailure(err)));
    return { namespace, secrets: listed.items.map((s) => ({ name: s.metadata?.name ?? '', type: s.type ?? 'Opaque', keys: Object.keys(s.data ?? {}).sort(), created: s.metadata?.creationTimestamp })) };
  });
}

export async function deleteSecret(opts: ClusterOptions & { path: string; name: string }): Promise<{ namespace: string }> {
  checkName(opts.name);
  return withCluster(opts, async ({ kube, namespace }, secrets) => {
    await kube.delete(secrets, opts.name, { namespace }).catch((err: { code?: number }) => {
      if (err.code === 404) throw new CommandError(`No Secret ${opts.name} in namespace ${namespace}.`);
      throw clusterFailure(err);
    });
    return { namespace };
  });
}
