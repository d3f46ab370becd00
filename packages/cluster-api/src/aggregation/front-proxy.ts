/**
 * The front proxy's credentials, as kube-apiserver holds them: a CA of its own
 * (`--requestheader-client-ca-file`) and a client certificate it issued (`--proxy-client-cert-file`,
 * CN `front-proxy-client`), kept in `<dataDir>/tls/front-proxy/`. An extension API server verifies a
 * proxied request by that certificate, then believes its X-Remote-* headers; it learns both from the
 * `kube-system/extension-apiserver-authentication` ConfigMap this server publishes.
 */
import { join } from 'node:path';
import type { KubeObject } from '../api/meta.js';
import { ensureCa, ensureIssued } from '../auth/tls.js';

export const FrontProxyClientName = 'front-proxy-client';
export const UserHeader = 'X-Remote-User';
export const GroupHeader = 'X-Remote-Group';
export const ExtraHeaderPrefix = 'X-Remote-Extra-';

export interface FrontProxy {
  /** PEM of the CA that issued `cert`. */
  ca: string;
  cert: string;
  key: string;
}

/** The data dir's front-proxy CA and client certificate, made on first use. */
export function ensureFrontProxy(tlsDir: string): FrontProxy {
  const dir = join(tlsDir, 'front-proxy');
  const ca = ensureCa(dir);
  const client = ensureIssued(dir, FrontProxyClientName, ca, { commonName: FrontProxyClientName, usages: ['client'] });
  return { ca: ca.cert, ...client };
}

/** What kube-apiserver's ClientCARegistrationHook writes; `clientCa`: the CA that client certificates of this server chain to. */
export function authenticationConfigMap(frontProxy: FrontProxy | undefined, clientCa: string | undefined): KubeObject {
  const data: Record<string, string> = {};
  if (clientCa) data['client-ca-file'] = clientCa;
  if (frontProxy) {
    data['requestheader-client-ca-file'] = frontProxy.ca;
    data['requestheader-allowed-names'] = JSON.stringify([FrontProxyClientName]);
    data['requestheader-username-headers'] = JSON.stringify([UserHeader]);
    data['requestheader-group-headers'] = JSON.stringify([GroupHeader]);
    data['requestheader-extra-headers-prefix'] = JSON.stringify([ExtraHeaderPrefix]);
  }
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'extension-apiserver-authentication', namespace: 'kube-system' }, data };
}
