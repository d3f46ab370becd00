/**
 * The only place a Status body is built (storage error → API error → Status, principle 5).
 * Messages and reasons are Kubernetes' own: kubectl prints `message` verbatim after "Error from
 * server (<reason>):" and client-node branches on `code` / `reason`.
 */
import type { Status, StatusDetails } from '../api/meta.js';
import { ApiError, isApiError } from '../registry/errors.js';

/** Kubernetes' default request body limit (apiserver MaxRequestBodyBytes, 3 MiB). */
export const MaxRequestBodyBytes = 3 * 1024 * 1024;

const acceptedMedia = 'application/json, application/yaml';

/** Anything thrown below the HTTP layer, as the Status a client should see. Unknown errors leak nothing. */
export function statusOf(err: unknown): Status {
  const api = isApiError(err) ? err : internal();
  return failure(api);
}

function failure(err: ApiError): Status {
  const status: Status = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: err.message,
    reason: err.reason,
    code: err.code,
  };
  if (err.details) status.details = stripUndefined(err.details);
  return status;
}

const stripUndefined = (d: StatusDetails): StatusDetails =>
  Object.fromEntries(Object.entries(d).filter(([, v]) => v !== undefined && v !== '')) as StatusDetails;

/** The Success Status a DELETE answers with when the object is gone at once (generic store's finalizeDelete). */
export function deletedStatus(details: StatusDetails): Status {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: stripUndefined(details), code: 200 };
}

// Not a stack, not the error's message: a 500 must not reveal internals (paths, SQL, keys).
const internal = (): ApiError =>
  new ApiError(500, 'InternalError', 'Internal error occurred: an unexpected error happened while handling the request');

/* ---- The HTTP layer's own errors, worded as kube-apiserver words them ---- */

export const pathNotFound = (): ApiError => new ApiError(404, 'NotFound', 'the server could not find the requested resource');

export const unauthorized = (): ApiError => new ApiError(401, 'Unauthorized', 'Unauthorized');

export const tooLarge = (): ApiError =>
  new ApiError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${MaxRequestBodyBytes}`);

export const unsupportedMediaType = (contentType: string): ApiError =>
  new ApiError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${acceptedMedia}` +
      (contentType ? ` (got ${contentType.slice(0, 100)})` : ''),
  );

export const unsupportedPatchType = (contentType: string): ApiError =>
  new ApiError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml (got ${contentType.slice(0, 100)})`,
  );

export const notAcceptable = (): ApiError =>
  new ApiError(406, 'NotAcceptable', `only the following media types are accepted: ${acceptedMedia}`);

export const malformedBody = (why: string): ApiError =>
  new ApiError(400, 'BadRequest', `the object provided is unrecognized or malformed: ${why.slice(0, 200)}`);

export const methodNotSupported = (method: string): ApiError =>
  new ApiError(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource (${method.slice(0, 16)})`);
