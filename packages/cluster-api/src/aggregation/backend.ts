/**
 * Where an APIService's requests go, as kube-aggregator's availability controller and proxy find it:
 * its Service, the Service port numbered `spec.service.port`, an address of the Service's Endpoints
 * serving that port (services/proxy's resolver, any address accepted), and how TLS is checked
 * (`caBundle`, or `insecureSkipTLSVerify`) with the front-proxy client certificate shown. A Service
 * or address that is missing is an Available=False reason, worded as kube-aggregator words it.
 */
import type { ConnectionOptions } from 'node:tls';
import type { KubeObject } from '../api/meta.js';
import { isApiError } from '../api/errors.js';
import type { Services } from '../registry/definition.js';
import { arr, obj, spec, str } from '../registry/kinds/common.js';
import { pickEndpoint, servicePortName, type Endpoint } from '../registry/subresources/proxy.js';
import { SystemContext } from '../controllers/shared.js';
import type { FrontProxy } from './front-proxy.js';

export interface Backend {
  endpoint: Endpoint;
  tls: ConnectionOptions;
}

export interface Unavailable {
  reason: 'ServiceNotFound' | 'ServicePortError' | 'EndpointsNotFound' | 'MissingEndpoints';
  message: string;
}

export type Located = { backend: Backend } | { unavailable: Unavailable };

export async function locateBackend(apiService: KubeObject, services: Pick<Services, 'find' | 'podNetwork'>, frontProxy: FrontProxy | undefined): Promise<Located> {
  const ref = obj(spec(apiService).service);
  const namespace = str(ref.namespace);
  const name = str(ref.name);
  const portNumber = Number(ref.port ?? 443);
  const ctx = { ...SystemContext, namespace };
  const missing = (reason: Unavailable['reason'], message: string): Located => ({ unavailable: { reason, message } });
  const service = await services.find('', 'v1', 'services')?.get(ctx, name).catch(() => undefined);
  if (!service) return missing('ServiceNotFound', `service/${name} in "${namespace}" is not present`);
  const servicePort = arr(spec(service).ports).map(obj).find((p) => Number(p.port) === portNumber);
  if (!servicePort) return missing('ServicePortError', `service/${name} in "${namespace}" is not listening on port ${portNumber}`);
  const endpoints = await services.find('', 'v1', 'endpoints')?.get(ctx, name).catch(() => undefined);
  if (!endpoints) return missing('EndpointsNotFound', `cannot find endpoints for service/${name} in "${namespace}"`);
  const portName = servicePortName(service, name, String(portNumber));
  let endpoint: Endpoint;
  try {
    endpoint = await pickEndpoint(service, portName, { namespace, id: name, anyAddress: true }, services as Services);
  } catch (err) {
    if (!isApiError(err)) throw err;
    return missing('MissingEndpoints', `endpoints for service/${name} in "${namespace}" have no addresses with port name "${portName}"`);
  }
  return { backend: { endpoint, tls: tlsOptions(apiService, `${name}.${namespace}.svc`, frontProxy) } };
}

function tlsOptions(apiService: KubeObject, serverName: string, frontProxy: FrontProxy | undefined): ConnectionOptions {
  const s = spec(apiService);
  const caBundle = str(s.caBundle);
  return {
    servername: serverName,
    rejectUnauthorized: s.insecureSkipTLSVerify !== true,
    ...(caBundle ? { ca: Buffer.from(caBundle, 'base64').toString('utf8') } : {}),
    ...(frontProxy ? { cert: frontProxy.cert, key: frontProxy.key } : {}),
  };
}
