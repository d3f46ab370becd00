/**
 * What a pod's containers read from the API besides the pod: ConfigMaps, Secrets and ServiceAccount
 * tokens, fetched with the node's own credentials (the Node authorizer lets a node read exactly what
 * its pods reference). A missing object is `undefined`, so callers phrase the kubelet's messages.
 */
import { type KubeClient, type KubeObject, isNotFound, Resources } from '@func/kube-client';
import type { Pod } from './types.js';

export interface DataObject {
  /** Strings (ConfigMap data; Secret data decoded from base64). */
  data: Record<string, string>;
  /** Bytes (ConfigMap binaryData, Secret data). */
  binary: Record<string, Buffer>;
}

export interface IssuedToken {
  token: string;
  /** ms since the epoch. */
  expiresAt: number;
}

export interface PodSources {
  configMap(namespace: string, name: string): Promise<DataObject | undefined>;
  secret(namespace: string, name: string): Promise<DataObject | undefined>;
  /** TokenRequest for the pod's service account, bound to the pod. */
  token(pod: Pod, audience: string | undefined, expirationSeconds: number): Promise<IssuedToken>;
  /** PEM of the cluster CA (the kube-root-ca.crt ConfigMap's `ca.crt`, which the agent's kubeconfig holds). */
  rootCa?: string;
}

const orUndefined = async <T>(p: Promise<T>): Promise<T | undefined> => {
  try {
    return await p;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
};

const strings = (o: unknown): Record<string, string> =>
  Object.fromEntries(Object.entries((o ?? {}) as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string'));

export function apiSources(kube: KubeClient, rootCa?: string): PodSources {
  return {
    rootCa,
    async configMap(namespace, name) {
      const cm = await orUndefined(kube.get<KubeObject>(Resources.configMaps, name, { namespace }));
      if (!cm) return undefined;
      const binary = Object.fromEntries(Object.entries(strings(cm.binaryData)).map(([k, v]) => [k, Buffer.from(v, 'base64')]));
      return { data: strings(cm.data), binary };
    },
    async secret(namespace, name) {
      const s = await orUndefined(kube.get<KubeObject>(Resources.secrets, name, { namespace }));
      if (!s) return undefined;
      const binary = Object.fromEntries(Object.entries(strings(s.data)).map(([k, v]) => [k, Buffer.from(v, 'base64')]));
      return { data: Object.fromEntries(Object.entries(binary).map(([k, v]) => [k, v.toString()])), binary };
    },
    async token(pod, audience, expirationSeconds) {
      const { namespace = '', name = '', uid = '' } = pod.metadata;
      const account = pod.spec.serviceAccountName || 'default';
      const path = kube.path(Resources.serviceAccounts, { namespace, name: account, subresource: 'token' });
      const body = {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { audiences: audience ? [audience] : [], expirationSeconds, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name, uid } },
      };
      const res = await kube.raw({ method: 'POST', path, body, what: `create serviceaccounts/${account}/token` });
      const status = (JSON.parse(res.body) as { status?: { token?: string; expirationTimestamp?: string } }).status ?? {};
      return { token: status.token ?? '', expiresAt: Date.parse(status.expirationTimestamp ?? '') || Date.now() + expirationSeconds * 1000 };
    },
  };
}
