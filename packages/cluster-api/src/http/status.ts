/**
 * The only place a Status body is built (storage error → API error → Status, principle 5): every
 * error an answer or a watch stream carries goes through `statusOf`. The errors themselves live in
 * api/errors.ts.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Status, StatusDetails } from '../api/meta.js';
import { ApiError, internalError, isApiError } from '../api/errors.js';

/**
 * Anything thrown below the HTTP layer, as the Status a client should see. Unknown errors leak
 * nothing; `requestId` (a server error's, see ReportServerError) is named so the log entry can be found.
 */
export function statusOf(err: unknown, requestId?: string): Status {
  return failure(isApiError(err) ? err : internalError(err), requestId);
}

/**
 * Logs a server error (5xx, or anything that is no ApiError) with its cause under a new request id
 * and answers that id; undefined for a client error, which is the client's to read and not logged.
 */
export type ReportServerError = (err: unknown, req: IncomingMessage) => string | undefined;

export const serverErrorReporter = (log: (entry: Record<string, unknown>) => void): ReportServerError => (err, req) => {
  if (isApiError(err) && err.code < 500) return undefined;
  const requestId = randomUUID();
  const cause = isApiError(err) ? (err.cause ?? err) : err;
  const path = (req.url ?? '/').split('?', 1)[0];
  log({ level: 'error', msg: 'request failed', requestId, method: req.method, path, code: isApiError(err) ? err.code : 500, err: describe(cause) });
  return requestId;
};

const describe = (err: unknown): string => (err instanceof Error ? `${err.name}: ${err.message}` : String(err));

function failure(err: ApiError, requestId?: string): Status {
  const status: Status = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: requestId ? `${err.message} (request id ${requestId})` : err.message,
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
