/**
 * Paths outside the resource tree: /version, the health probes (health.ts), /metrics (prometheus.ts),
 * /openapi/v2 and /openapi/v3 (openapi.ts).
 *
 * /openapi/v2 is served as an empty but valid document because kubectl (1.20 and later) fetches it
 * before `create` / `apply` to validate manifests: a 404 there makes kubectl refuse with "error
 * validating data" unless --validate=false is given, whereas a document that defines no kinds makes
 * its validator accept every kind (as it does for schemaless custom resources) and fall back to its
 * built-in types for strategic merge patches.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { OpenApiV3 } from './openapi.js';
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

/** openapi_v2.Document{swagger: "2.0"}: field 1, wire type 2, length 3. */
const openApiProtobuf = Buffer.from([0x0a, 0x03, 0x32, 0x2e, 0x30]);

const openApiJson = { swagger: '2.0', info: { title: 'cluster-api', version: 'v1' }, paths: {}, definitions: {} };

/** `/livez`, `/readyz/etcd` → the endpoint and the check named after it. */
const healthPath = /^\/(healthz|livez|readyz)(?:\/(.*))?$/;

export async function serveNonResource(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  query: URLSearchParams,
  deps: { version: VersionInfo; health: HealthChecks; metrics: MetricsRegistry; openApiV3: OpenApiV3 },
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
      return openApi(req, res);
    default:
      throw pathNotFound();
  }
}

function openApi(req: IncomingMessage, res: ServerResponse): void {
  if ((req.headers.accept ?? '').includes('protobuf')) {
    res.writeHead(200, { 'Content-Type': openApiProtobufType, 'Content-Length': openApiProtobuf.length });
    res.end(openApiProtobuf);
    return;
  }
  send(res, 200, openApiJson);
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
