/**
 * The only place a Status body is built (storage error → API error → Status, principle 5): every
 * error an answer or a watch stream carries goes through `statusOf`. The errors themselves live in
 * api/errors.ts.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Status, StatusCause, StatusDetails } from '../api/meta.js';
import { ApiError, internalError, isApiError } from '../api/errors.js';

/**
 * Anything thrown below the HTTP layer, as the Status a client should see. Unknown errors leak
 * nothing; `requestId` (a server error's, see ReportServerError) is named so the log entry can be found.
 */
export function statusOf(err: unknown, requestId?: string): Status & { code: number } {
  return failure(isApiError(err) ? err : internalError(err), requestId);
}

/**
 * Logs a server error (5xx, or anything that is no ApiError) with its cause under a new request id
 * and answers that id; undefined for a client error, which is the client's to read and not logged.
 */
export type ReportServerError = (err: unknown, req: IncomingMessage) => string | undefined;

export const serverErrorReporter = (log: (entry: Record<string, unknown>) => void): ReportServerError => (err, req) => {
  if (!isServerFailure(err)) return undefined;
  const requestId = randomUUID();
  const cause = isApiError(err) ? (err.cause ?? err) : err;
  const path = (req.url ?? '/').split('?', 1)[0];
  log({ level: 'error', msg: 'request failed', requestId, method: req.method, path, code: isApiError(err) ? err.code : 500, err: describe(cause) });
  return requestId;
};

/**
 * A failure of this server: anything that is no ApiError, a 500, or a 5xx with a cause below it. A 5xx
 * said to the client on purpose with nothing behind it (504 for a future resourceVersion) is an answer.
 */
const isServerFailure = (err: unknown): boolean =>
  !isApiError(err) || err.code === 500 || (err.code > 500 && err.cause !== undefined);

const describe = (err: unknown): string => (err instanceof Error ? `${err.name}: ${err.message}` : String(err));

/**
 * The Status of a failure with its fields in Go's struct order (kind, apiVersion, metadata, status,
 * message, reason, details, code): kube-apiserver writes them so, and clients compare the bytes.
 */
function failure(err: ApiError, requestId?: string): Status & { code: number } {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: requestId ? `${err.message} (request id ${requestId})` : err.message,
    reason: err.reason,
    ...(err.details && { details: orderedDetails(err.details) }),
    code: err.code,
  };
}

/** StatusDetails in Go's order (name, group, kind, uid, causes, retryAfterSeconds), empty fields left out as omitempty does. */
function orderedDetails(d: StatusDetails): StatusDetails {
  const out: StatusDetails = {};
  if (d.name) out.name = d.name;
  if (d.group) out.group = d.group;
  if (d.kind) out.kind = d.kind;
  if (d.uid) out.uid = d.uid;
  if (d.causes?.length) out.causes = d.causes.map(orderedCause);
  if (d.retryAfterSeconds) out.retryAfterSeconds = d.retryAfterSeconds;
  return out;
}

const orderedCause = (c: StatusCause): StatusCause => {
  const out: StatusCause = {};
  if (c.reason) out.reason = c.reason;
  if (c.message) out.message = c.message;
  if (c.field) out.field = c.field;
  return out;
};

/**
 * The Success Status a DELETE answers with when the object is gone at once: the generic store's
 * finalizeDelete, which sets no code.
 */
export function deletedStatus(details: StatusDetails): Status {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: orderedDetails(details) };
}
