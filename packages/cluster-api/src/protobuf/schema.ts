/**
 * The protobuf schema: Kubernetes' message definitions from the .proto files that ship with the
 * package (package.json "files" lists src/protobuf/proto), loaded once with protobufjs. The files are
 * found from the package root, so the same path works from src/ (tests) and from dist/ (installed).
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import type { Type } from 'protobufjs';

/** Directory of the .proto tree, laid out by import path as Kubernetes' own files are. */
export const protoDir = fileURLToPath(new URL('../../src/protobuf/proto/', import.meta.url));

export const protoFiles = [
  'k8s.io/apimachinery/pkg/runtime/generated.proto',
  'k8s.io/apimachinery/pkg/util/intstr/generated.proto',
  'k8s.io/apimachinery/pkg/api/resource/generated.proto',
  'k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto',
  'k8s.io/api/core/v1/generated.proto',
  'k8s.io/api/batch/v1/generated.proto',
  'k8s.io/api/apps/v1/generated.proto',
  'k8s.io/api/coordination/v1/generated.proto',
  'k8s.io/api/policy/v1/generated.proto',
  'k8s.io/api/networking/v1/generated.proto',
  'k8s.io/api/discovery/v1/generated.proto',
  'k8s.io/api/scheduling/v1/generated.proto',
  'k8s.io/api/storage/v1/generated.proto',
  'k8s.io/api/events/v1/generated.proto',
  'k8s.io/api/authorization/v1/generated.proto',
  'k8s.io/api/authentication/v1/generated.proto',
  'k8s.io/api/rbac/v1/generated.proto',
  'k8s.io/api/certificates/v1/generated.proto',
  'k8s.io/api/autoscaling/v1/generated.proto',
  'k8s.io/api/autoscaling/v2/generated.proto',
  'k8s.io/kube-aggregator/pkg/apis/apiregistration/v1/generated.proto',
  'github.com/openshift/api/security/v1/generated.proto',
] as const;

const Meta = 'k8s.io.apimachinery.pkg.apis.meta.v1';
const Core = 'k8s.io.api.core.v1';
const Security = 'github.com.openshift.api.security.v1';

/**
 * apiVersion → the proto packages that hold its kinds, searched in order. OpenShift 3 served
 * SecurityContextConstraints in the core group, so `v1` also finds it in OpenShift's package; Status and
 * DeleteOptions travel as `v1` (core clients) or `meta.k8s.io/v1` (newer clients).
 */
const packagesByApiVersion: Record<string, readonly string[]> = {
  v1: [Core, Security, Meta],
  'meta.k8s.io/v1': [Meta],
  'security.openshift.io/v1': [Security],
  'batch/v1': ['k8s.io.api.batch.v1'],
  'apps/v1': ['k8s.io.api.apps.v1'],
  'coordination.k8s.io/v1': ['k8s.io.api.coordination.v1'],
  'policy/v1': ['k8s.io.api.policy.v1'],
  'networking.k8s.io/v1': ['k8s.io.api.networking.v1'],
  'discovery.k8s.io/v1': ['k8s.io.api.discovery.v1'],
  'scheduling.k8s.io/v1': ['k8s.io.api.scheduling.v1'],
  'storage.k8s.io/v1': ['k8s.io.api.storage.v1'],
  'events.k8s.io/v1': ['k8s.io.api.events.v1'],
  'authorization.k8s.io/v1': ['k8s.io.api.authorization.v1'],
  // TokenRequest (serviceaccounts/token), TokenReview and SelfSubjectReview.
  'authentication.k8s.io/v1': ['k8s.io.api.authentication.v1'],
  'rbac.authorization.k8s.io/v1': ['k8s.io.api.rbac.v1'],
  // autoscaling/v1 also holds Scale, the body of every /scale subresource.
  'autoscaling/v1': ['k8s.io.api.autoscaling.v1'],
  'autoscaling/v2': ['k8s.io.api.autoscaling.v2'],
  'apiregistration.k8s.io/v1': ['k8s.io.kube_aggregator.pkg.apis.apiregistration.v1'],
  // The same messages and field numbers as v1 (fields a beta had and v1 dropped, such as Deployment's
  // rollbackTo, are left out of a protobuf answer). extensions/v1beta1 finds its workloads in apps/v1
  // only: its Ingress is shaped otherwise than networking/v1's, so it stays JSON.
  'rbac.authorization.k8s.io/v1beta1': ['k8s.io.api.rbac.v1'],
  'certificates.k8s.io/v1': ['k8s.io.api.certificates.v1'],
  // The same messages and field numbers as v1.
  'certificates.k8s.io/v1beta1': ['k8s.io.api.certificates.v1'],
  'apps/v1beta1': ['k8s.io.api.apps.v1'],
  'extensions/v1beta1': ['k8s.io.api.apps.v1'],
  'policy/v1beta1': ['k8s.io.api.policy.v1'],
  'storage.k8s.io/v1beta1': ['k8s.io.api.storage.v1'],
  'batch/v2alpha1': ['k8s.io.api.batch.v1'],
};

/** Messages that are whole objects on the wire (not parts of one): the kinds, their lists and meta's own. */
const isObjectMessage = (type: Type): boolean =>
  type.fields.metadata !== undefined || type.name === 'DeleteOptions' || type.name === 'WatchEvent';

/** Parse the .proto files into a resolved root. `dir` lets a client test load the shipped copy itself. */
export function loadSchema(dir: string = protoDir): protobuf.Root {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => join(dir, target);
  // keepCase: field names are JSON names already (FieldsV1.Raw is the one capitalised exception).
  root.loadSync([...protoFiles], { keepCase: true });
  root.resolveAll();
  return root;
}

let cached: protobuf.Root | undefined;

export function schema(): protobuf.Root {
  return (cached ??= loadSchema());
}

/** Found messages by `apiVersion/kind`; bounded by the schema, since misses are not kept. */
const found = new Map<string, Type>();

/** The message of an `apiVersion`/`kind` pair, or undefined when the kind has no protobuf form. */
export function messageOf(apiVersion: unknown, kind: unknown): Type | undefined {
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') return undefined;
  const key = `${apiVersion}/${kind}`;
  const known = found.get(key);
  if (known) return known;
  if (!/^[A-Z][A-Za-z0-9]*$/.test(kind)) return undefined;
  for (const pkg of packagesByApiVersion[apiVersion] ?? []) {
    const type = schema().lookup(`${pkg}.${kind}`);
    if (type instanceof protobuf.Type && isObjectMessage(type)) return found.set(key, type), type;
  }
  return undefined;
}

/** Looked up once: protobufjs' lookup walks the namespace tree by name on every call. */
const named = new Map<string, Type>();
const lookupOnce = (fullName: string): Type => {
  let type = named.get(fullName);
  if (!type) named.set(fullName, (type = schema().lookupType(fullName)));
  return type;
};

export const metaMessage = (name: 'Status' | 'WatchEvent' | 'DeleteOptions' | 'ObjectMeta'): Type => lookupOnce(`${Meta}.${name}`);

export const runtimeMessage = (name: 'Unknown' | 'RawExtension'): Type => lookupOnce(`k8s.io.apimachinery.pkg.runtime.${name}`);
