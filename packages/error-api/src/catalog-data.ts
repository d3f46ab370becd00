/**
 * The error catalog, as data. Every error type the project emits has one row here, except the
 * runtime's codes, which the runtime describes itself (`runtimeErrors`) and catalog.ts merges in.
 *
 * Quay's ten rows start with Quay's own sentence verbatim (endpoints/exception.py ERROR_DESCRIPTION),
 * so Quay clients that show it see familiar text; the sentences after it say how to fix the error.
 * Cluster API rows are Kubernetes' Status reasons (k8s.io/apimachinery metav1.StatusReason).
 */
import type { CatalogEntry } from './types.js';

export const catalogData: readonly CatalogEntry[] = [
  // Red Hat Quay's ApiErrorType.
  {
    title: 'external_service_timeout',
    status: 520,
    source: 'quay',
    description:
      'An external service timed out. Retrying the request may resolve the issue. Retry with exponential back-off; if it keeps failing, check the health of the service named in `detail`.',
  },
  {
    title: 'invalid_request',
    status: 400,
    source: 'quay',
    description:
      'The request was invalid. It may have contained invalid values or was improperly formatted. Read `detail` for the offending value, correct it and send the request again.',
  },
  {
    title: 'invalid_response',
    status: 400,
    source: 'quay',
    description:
      'The response was invalid. A service answered with data that could not be used; retry, and report it to the service owner if it persists.',
  },
  {
    title: 'invalid_token',
    status: 401,
    source: 'quay',
    description:
      'The access token provided was invalid. Send `Authorization: Bearer <token>` with a token signed by a key this service trusts, issued for its audience and issuer; obtain a new token if it was revoked or corrupted.',
  },
  {
    title: 'expired_token',
    status: 401,
    source: 'quay',
    description:
      'The access token provided has expired. Obtain a new token from your token issuer and retry; check that the client clock is correct.',
  },
  {
    title: 'insufficient_scope',
    status: 403,
    source: 'quay',
    description:
      'The access token did not have sufficient scope to access the requested resource. Request a token that carries the scope named in the `WWW-Authenticate` header (`scope` claim, space-separated, or `scp` array).',
  },
  {
    title: 'fresh_login_required',
    status: 401,
    source: 'quay',
    description: 'The action requires a fresh login to succeed. Sign in again, then repeat the action.',
  },
  {
    title: 'exceeds_license',
    status: 402,
    source: 'quay',
    description:
      'The action was refused because the current license does not allow it. Ask an administrator to extend the license, or reduce usage below its limits.',
  },
  {
    title: 'not_found',
    status: 404,
    source: 'quay',
    description:
      'The resource was not found. Check the path and the identifier in it; list the collection to see which names exist.',
  },
  {
    title: 'downstream_issue',
    status: 520,
    source: 'quay',
    description:
      'An error occurred in a downstream service. Retry later; if it persists, report `detail` to the operator of the service.',
  },
  // This service's own.
  {
    title: 'method_not_allowed',
    status: 405,
    source: 'service',
    description:
      'The HTTP method is not supported on this path. Use one of the methods listed in the `Allow` response header.',
  },
  // The cluster API's Status reasons.
  {
    title: 'BadRequest',
    status: 400,
    source: 'cluster-api',
    description:
      'The request was malformed: a bad query parameter, body or selector. Read `message` in the Status, correct the request and retry.',
  },
  {
    title: 'Unauthorized',
    status: 401,
    source: 'cluster-api',
    description:
      'The server could not authenticate the client. Send a valid bearer token (`kubectl --token`, or a kubeconfig user with a token) and retry.',
  },
  {
    title: 'Forbidden',
    status: 403,
    source: 'cluster-api',
    description:
      'The client is authenticated but may not perform this action, or the server refuses it (e.g. the namespace is terminating). Use credentials with the needed permission or change the request as `message` explains.',
  },
  {
    title: 'NotFound',
    status: 404,
    source: 'cluster-api',
    description:
      'The named resource does not exist. Check the name, namespace and resource type (`kubectl get <type> -n <namespace>`); create it first if it should exist.',
  },
  {
    title: 'AlreadyExists',
    status: 409,
    source: 'cluster-api',
    description:
      'A resource with this name already exists. Choose another name, use `metadata.generateName`, or update the existing object instead of creating it.',
  },
  {
    title: 'Conflict',
    status: 409,
    source: 'cluster-api',
    description:
      'The object has been modified since you read it (stale `metadata.resourceVersion`). Get the latest version, apply your change to it and retry the update.',
  },
  {
    title: 'Gone',
    status: 410,
    source: 'cluster-api',
    description:
      'The resource is no longer available at this server. Re-list to find its current state and location.',
  },
  {
    title: 'Expired',
    status: 410,
    source: 'cluster-api',
    description:
      'The requested resourceVersion is older than the server still retains (it was compacted). Re-list without a resourceVersion and start a new watch from the list\'s resourceVersion.',
  },
  {
    title: 'Invalid',
    status: 422,
    source: 'cluster-api',
    description:
      'The object failed validation. `details.causes` lists each invalid field and why; fix those fields and submit the object again.',
  },
  {
    title: 'MethodNotAllowed',
    status: 405,
    source: 'cluster-api',
    description:
      'The verb is not supported on this resource (e.g. update on a read-only resource). Use a verb listed for the resource in API discovery (`kubectl api-resources -o wide`).',
  },
  {
    title: 'NotAcceptable',
    status: 406,
    source: 'cluster-api',
    description:
      'None of the media types in the `Accept` header can be served. Accept `application/json` (or `application/yaml`) and retry.',
  },
  {
    title: 'RequestEntityTooLarge',
    status: 413,
    source: 'cluster-api',
    description: 'The request body exceeds the server\'s size limit. Split the object or reduce its size, then retry.',
  },
  {
    title: 'UnsupportedMediaType',
    status: 415,
    source: 'cluster-api',
    description:
      'The `Content-Type` of the request body is not supported for this verb. Send `application/json`, or for PATCH one of `application/json-patch+json`, `application/merge-patch+json`, `application/strategic-merge-patch+json`.',
  },
  {
    title: 'TooManyRequests',
    status: 429,
    source: 'cluster-api',
    description:
      'The server is rate-limiting the client. Wait for `Retry-After` seconds (`details.retryAfterSeconds`) before retrying, and reduce the request rate.',
  },
  {
    title: 'InternalError',
    status: 500,
    source: 'cluster-api',
    description:
      'The server hit an unexpected error. Retry; if it persists, report the `message` and the time to the cluster operator and check the server logs.',
  },
  {
    title: 'Timeout',
    status: 504,
    source: 'cluster-api',
    description:
      'The request could not complete within the given time (e.g. `timeoutSeconds`). Retry with a longer timeout or a smaller request (use `limit` for lists).',
  },
  {
    title: 'ServerTimeout',
    status: 500,
    source: 'cluster-api',
    description:
      'The server could not complete the request in time and it may be retried. Retry after `details.retryAfterSeconds`.',
  },
  {
    title: 'ServiceUnavailable',
    status: 503,
    source: 'cluster-api',
    description:
      'The server is temporarily unable to serve the request (starting, overloaded or its storage is down). Retry after `Retry-After`; check the storage backend if it persists.',
  },
];
