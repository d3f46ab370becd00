/**
 * Errors by what a caller does about them: a Kubernetes `Status` from the server (typed: code,
 * reason, causes), a connection that never got an answer (unreachable, TLS), or a kubeconfig that
 * cannot be used (naming the file and the field).
 */

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface Status {
  kind?: 'Status';
  apiVersion?: string;
  status?: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  code?: number;
  details?: { name?: string; group?: string; kind?: string; uid?: string; causes?: StatusCause[]; retryAfterSeconds?: number };
}

export class KubeApiError extends Error {
  override name = 'KubeApiError';
  /** HTTP status (the Status's `code`). */
  readonly code: number;
  /** Kubernetes' reason: NotFound, AlreadyExists, Conflict, Invalid, Expired, Gone, Unauthorized, Forbidden… */
  readonly reason: string;
  readonly causes: StatusCause[];
  readonly status: Status;

  constructor(status: Status, httpStatus: number, what: string) {
    const reason = status.reason || reasonFor(httpStatus);
    super(`${what}: ${status.message || reason} (${httpStatus} ${reason})`);
    this.code = status.code ?? httpStatus;
    this.reason = reason;
    this.causes = status.details?.causes ?? [];
    this.status = status;
  }
}

const REASONS: Record<number, string> = { 400: 'BadRequest', 401: 'Unauthorized', 403: 'Forbidden', 404: 'NotFound', 405: 'MethodNotAllowed', 409: 'Conflict', 410: 'Expired', 413: 'RequestEntityTooLarge', 415: 'UnsupportedMediaType', 422: 'Invalid', 429: 'TooManyRequests', 500: 'InternalError', 503: 'ServiceUnavailable', 504: 'Timeout' };
const reasonFor = (code: number) => REASONS[code] ?? 'Unknown';

/** The Status in an error body, or one made from the status line when the body is not a Status. */
export function statusFromBody(body: string, httpStatus: number): Status {
  try {
    const parsed = JSON.parse(body) as Status;
    if (parsed && typeof parsed === 'object' && (parsed.kind === 'Status' || parsed.reason || parsed.message)) return parsed;
  } catch {
    // not JSON
  }
  return { kind: 'Status', status: 'Failure', code: httpStatus, reason: reasonFor(httpStatus), message: body.trim().slice(0, 200) || undefined };
}

export const isNotFound = (err: unknown): boolean => err instanceof KubeApiError && err.code === 404;
export const isConflict = (err: unknown): boolean => err instanceof KubeApiError && err.code === 409;
export const isAlreadyExists = (err: unknown): boolean => err instanceof KubeApiError && err.reason === 'AlreadyExists';
/** A watch or list whose resourceVersion the server no longer has (410 Expired / Gone). */
export const isExpired = (err: unknown): boolean => err instanceof KubeApiError && err.code === 410;

export type ConnectionFailure = 'unreachable' | 'tls' | 'timeout';

export class KubeConnectionError extends Error {
  override name = 'KubeConnectionError';
  constructor(readonly kind: ConnectionFailure, message: string, readonly errno?: string) {
    super(message);
  }
}

const TLS = /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY|ALTNAME|EPROTO/;

export function connectionError(err: unknown, server: string): KubeConnectionError {
  const code = (err as NodeJS.ErrnoException).code ?? '';
  const message = (err as Error).message ?? String(err);
  if (TLS.test(code) || /certificate|SSL routines|TLS/i.test(message)) {
    return new KubeConnectionError('tls', `TLS handshake with ${server} failed: ${message} (${code || 'TLS'}); check the cluster's certificate-authority in the kubeconfig`, code);
  }
  if (code === 'ETIMEDOUT' || code === 'ESOCKETTIMEDOUT') return new KubeConnectionError('timeout', `Timed out talking to ${server}`, code);
  return new KubeConnectionError('unreachable', `Cannot reach the Kubernetes API at ${server} (${code || message}); is the cluster running?`, code);
}

export class KubeconfigError extends Error {
  override name = 'KubeconfigError';
}
