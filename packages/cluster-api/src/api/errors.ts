/**
 * Every error a client can see, in one place: the middle of the three layers (storage error → API
 * error → Status body). Reasons and messages are Kubernetes' own (k8s.io/apimachinery/pkg/api/errors
 * and kube-apiserver's handlers): clients such as kubectl and client-node branch on `reason` and print
 * `message` verbatim, so keep them exact. http/status.ts is the only place that turns an ApiError
 * into a Status body.
 *
 * Message policy: a 4xx message says what is wrong with the request; a 5xx message never carries a
 * lower layer's text (paths, SQL, addresses, library messages). That text stays on the error as its
 * `cause`, which the HTTP layer logs with a request id the client also gets.
 */
import type { StatusCause, StatusDetails } from './meta.js';
import { isStorageError } from '../storage/errors.js';

export const StatusReasons = [
  'BadRequest',
  'Unauthorized',
  'Forbidden',
  'NotFound',
  'AlreadyExists',
  'Conflict',
  'Gone',
  'Expired',
  'Invalid',
  'MethodNotAllowed',
  'NotAcceptable',
  'RequestEntityTooLarge',
  'UnsupportedMediaType',
  'TooManyRequests',
  'InternalError',
  'Timeout',
  'ServerTimeout',
  'ServiceUnavailable',
] as const;
export type StatusReason = (typeof StatusReasons)[number];

/** Group + resource as Kubernetes prints them in messages: `pods`, `deployments.apps`. */
export interface GroupResource {
  group: string;
  resource: string;
}

export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly code: number,
    readonly reason: StatusReason,
    message: string,
    readonly details?: StatusDetails,
    /** What went wrong below (for the log only, never for the client). */
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
  }
}

export const isApiError = (err: unknown): err is ApiError => err instanceof ApiError;

const qualified = (gr: GroupResource): string => (gr.group ? `${gr.resource}.${gr.group}` : gr.resource);

export const notFound = (gr: GroupResource, name: string): ApiError =>
  new ApiError(404, 'NotFound', `${qualified(gr)} "${name}" not found`, {
    name,
    group: gr.group,
    kind: gr.resource,
  });

export const alreadyExists = (gr: GroupResource, name: string): ApiError =>
  new ApiError(409, 'AlreadyExists', `${qualified(gr)} "${name}" already exists`, {
    name,
    group: gr.group,
    kind: gr.resource,
  });

export const conflict = (gr: GroupResource, name: string, why: string): ApiError =>
  new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${qualified(gr)} "${name}": ${why}`, {
    name,
    group: gr.group,
    kind: gr.resource,
  });

/** The message kubectl users know from a stale resourceVersion. */
export const OptimisticLockMessage = 'the object has been modified; please apply your changes to the latest version and try again';

/**
 * 422 Invalid, e.g. `Pod "x" is invalid: spec.containers: Required value`. `kind` is the Kind name;
 * outside the core group Kubernetes qualifies it (`Deployment.apps "x" is invalid: …`).
 */
export const invalid = (kind: string, group: string, name: string, causes: StatusCause[]): ApiError => {
  const summary = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : (c.message ?? ''))).join(', ');
  const list = causes.length > 1 ? `[${summary}]` : summary;
  const qualifiedKind = group ? `${kind}.${group}` : kind;
  return new ApiError(422, 'Invalid', `${qualifiedKind} "${name}" is invalid: ${list}`, { name, group, kind, causes });
};

export const badRequest = (message: string): ApiError => new ApiError(400, 'BadRequest', message);

export const forbidden = (gr: GroupResource, name: string, why: string): ApiError =>
  new ApiError(403, 'Forbidden', `${qualified(gr)} "${name}" is forbidden: ${why}`, {
    name,
    group: gr.group,
    kind: gr.resource,
  });

export const methodNotAllowed = (verb: string, gr: GroupResource): ApiError =>
  new ApiError(405, 'MethodNotAllowed', `${verb} is not supported on resources of kind "${qualified(gr)}"`, {
    group: gr.group,
    kind: gr.resource,
  });

export const gone = (message: string): ApiError => new ApiError(410, 'Expired', message);

/** 500: `cause` goes to the log, the client reads only that something failed. */
export const internalError = (cause?: unknown): ApiError =>
  new ApiError(500, 'InternalError', 'Internal error occurred: an unexpected error happened while handling the request', undefined, cause);

/** 503 with the retry hint clients honour; `cause` goes to the log. */
export const serviceUnavailable = (message: string, cause?: unknown, retryAfterSeconds = 1): ApiError =>
  new ApiError(503, 'ServiceUnavailable', message, { retryAfterSeconds }, cause);

/** 403 for an upgrade in protocols this server does not speak (the kubelet's httpstream.Handshake answer). */
export const upgradeRefused = (message: string): ApiError => new ApiError(403, 'Forbidden', message);

/**
 * 503 for a pod or service a proxy or port-forward cannot reach, as kube-apiserver's proxy answers:
 * no retry hint (client-go would retry a dead backend for ten seconds). `cause` goes to the log.
 */
export const backendUnavailable = (message: string, cause?: unknown): ApiError =>
  new ApiError(503, 'ServiceUnavailable', message, undefined, cause);

/** 410 Expired for a list continue token whose snapshot revision was compacted away. */
export const ContinueExpiredMessage =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.';

/** 410 Expired for a watch or list at a compacted revision (Kubernetes' etcd3 watcher wording). */
export const tooOldResourceVersion = (requested: number, compacted: number): ApiError =>
  gone(`too old resource version: ${requested} (${compacted})`);

/** 504 for `resourceVersion=N` newer than anything stored (clients retry after the hint). */
export const tooLargeResourceVersion = (requested: number, current: number): ApiError =>
  new ApiError(504, 'Timeout', `Timeout: Too large resource version: ${requested}, current: ${current}`, {
    causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
    retryAfterSeconds: 1,
  });

/**
 * Storage error → API error (the first arrow of storage → API → Status), as Kubernetes'
 * storage.InterpretGetError / InterpretUpdateError do. Anything else becomes a 500.
 */
export const fromStorageError = (err: unknown, gr: GroupResource, name: string): ApiError => {
  if (isApiError(err)) return err;
  if (isStorageError(err)) {
    switch (err.code) {
      case 'KeyNotFound':
        return notFound(gr, name);
      case 'KeyExists':
        return alreadyExists(gr, name);
      case 'Conflict':
        return conflict(gr, name, OptimisticLockMessage);
      case 'Compacted':
        return gone(`The resourceVersion for the provided list is too old.`);
      case 'Unavailable':
        return serviceUnavailable('the storage backend is unavailable; try again later', err);
      case 'InvalidArgument':
        return badRequest(err.message);
    }
  }
  return internalError(err);
};

/* ---- What kube-apiserver's HTTP handlers answer before a request reaches a resource ---- */

const acceptedMedia = 'application/json, application/yaml';

/** 404 from kube-apiserver's not-found handler: a path no group it serves claims (no details). */
export const pathNotFound = (): ApiError => new ApiError(404, 'NotFound', 'the server could not find the requested resource');

/** 404 from the go-restful container that serves `/api` and each served group: the same message with empty details. */
export const routeNotFound = (): ApiError => new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});

export const unauthorized = (): ApiError => new ApiError(401, 'Unauthorized', 'Unauthorized');

export const tooLarge = (limit: number): ApiError =>
  new ApiError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`);

export const unsupportedMediaType = (contentType: string): ApiError =>
  new ApiError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${acceptedMedia}` +
      (contentType ? ` (got ${contentType.slice(0, 100)})` : ''),
  );

const AllPatchTypes = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml'];
/** What kube-apiserver accepts for custom resources: no strategic merge (there are no patch strategies without Go types). */
export const CustomResourcePatchTypes = AllPatchTypes.filter((t) => t !== 'application/strategic-merge-patch+json');

export const unsupportedPatchType = (contentType: string, accepted: readonly string[] = AllPatchTypes): ApiError =>
  new ApiError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')} (got ${contentType.slice(0, 100)})`,
  );

export const notAcceptable = (): ApiError =>
  new ApiError(406, 'NotAcceptable', `only the following media types are accepted: ${acceptedMedia}`);

export const malformedBody = (why: string): ApiError =>
  new ApiError(400, 'BadRequest', `the object provided is unrecognized or malformed: ${why.slice(0, 200)}`);

/** 405 from the go-restful container (a method no route of the path takes): empty details, as NewGenericServerResponse writes them. */
export const methodNotSupported = (): ApiError =>
  new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {});
