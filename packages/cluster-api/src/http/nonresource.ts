/**
 * Paths outside the resource tree: /version, the health probes (health.ts), /metrics (prometheus.ts),
 * /openapi/v2 (openapi-v2.ts, JSON or gnostic's protobuf) and /openapi/v3 (openapi.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { OpenApiV3 } from './openapi.js';
import type { OpenApiV2 } from './openapi-v2.js';
import { send, sendBytes } from './respond.js';
import { serveHealth, type HealthChecks, type HealthEndpoint } from './health.js';
import { PrometheusContentType, type MetricsRegistry } from './prometheus.js';
import { pathNotFound } from '../api/errors.js';

/**
 * kube-apiserver's version.Info; clients read major/minor and gitVersion. It names the Kubernetes
 * release whose API surface is served (kubectl warns when its own minor is more than one away, and
 * Helm's `kubeVersion` and operators gate on it); the build suffix names this server's own version.
 */
export interface VersionInfo {
  major: string;
  minor: string;
  gitVersion: string;
  gitCommit: string;
  gitTreeState: string;
  buildDate: string;
  goVersion: string;
  compiler: string;
  platform: string;
}

/** The Kubernetes release whose API this server serves (the legacy group versions it also keeps are extra). */
export const ServedKubernetes = { minor: 32, patch: 0 } as const;

export function versionInfo(packageVersion: string): VersionInfo {
  return {
    major: '1',
    minor: String(ServedKubernetes.minor),
    gitVersion: `v1.${ServedKubernetes.minor}.${ServedKubernetes.patch}+cluster-api.${packageVersion}`,
    gitCommit: '',
    gitTreeState: 'clean',
    buildDate: '1970-01-01T00:00:00Z',
    goVersion: `node${process.versions.node}`,
    compiler: 'node',
    platform: `${process.platform}/${process.arch}`,
  };
}

// The type kube-apiserver answers with ('@' is not allowed in a media type, so '.' replaces it).
const openApiProtobufType = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

/** `/livez`, `/readyz/etcd` → the endpoint and the check named after it. */
const healthPath = /^\/(healthz|livez|readyz)(?:\/(.*))?$/;

export async function serveNonResource(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  query: URLSearchParams,
  deps: { version: VersionInfo; health: HealthChecks; metrics: MetricsRegistry; openApiV2: OpenApiV2; openApiV3: OpenApiV3 },
): Promise<void> {
  if (path.startsWith('/openapi/v3')) return openApiV3(req, res, path, deps.openApiV3);
  const health = healthPath.exec(path);
  if (health) return serveHealth(res, health[1] as HealthEndpoint, health[2] ?? '', query, deps.health);
  switch (path) {
    case '/version':
    case '/version/':
      return send(res, 200, deps.version);
    case '/metrics':
      return sendBytes(res, 200, Buffer.from(await deps.metrics.text()), PrometheusContentType);
    case '/openapi/v2':
      return openApiV2(req, res, deps.openApiV2);
    default:
      throw pathNotFound();
  }
}

/** client-go asks for gnostic's protobuf (the `@` spelling); anything else is JSON. ETag / 304 as kube-openapi's handler. */
function openApiV2(req: IncomingMessage, res: ServerResponse, docs: OpenApiV2): void {
  const protobuf = (req.headers.accept ?? '').includes('com.github.proto-openapi.spec.v2');
  const { body, etag } = protobuf ? docs.asProtobuf() : docs.asJson();
  res.setHeader('ETag', etag);
  res.setHeader('Vary', 'Accept');
  res.setHeader('Cache-Control', 'no-cache, private');
  if (req.headers['if-none-match'] === etag) {
    res.writeHead(304).end();
    return;
  }
  sendBytes(res, 200, body, protobuf ? openApiProtobufType : 'application/json');
}

/**
 * The index, or one group version's document. A document asked for by its current hash (the URL the
 * index gives) may be cached for good, as kube-apiserver allows; any other request revalidates.
 */
function openApiV3(req: IncomingMessage, res: ServerResponse, path: string, docs: OpenApiV3): void {
  const rest = path.slice('/openapi/v3'.length).replace(/^\/+|\/+$/g, '');
  if (rest === '') return send(res, 200, docs.index());
  const doc = docs.document(rest);
  if (!doc) throw pathNotFound();
  const etag = `"${doc.hash}"`;
  const asked = new URL(req.url ?? '/', 'http://x').searchParams.get('hash');
  res.setHeader('ETag', etag);
  res.setHeader('Cache-Control', asked === doc.hash ? 'public, immutable' : 'no-cache, private');
  if (req.headers['if-none-match'] === etag) {
    res.writeHead(304).end();
    return;
  }
  sendBytes(res, 200, doc.body, 'application/json');
}
