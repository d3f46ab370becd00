/**
 * The distribution spec's error answer: a status and `{"errors":[{"code","message","detail"}]}`
 * with one of its codes. Messages are the registry's own words; nothing internal (a path, a stack,
 * a library's message) reaches a client.
 */
import type { ServerResponse } from 'node:http';

export const ErrorStatus = {
  BLOB_UNKNOWN: 404,
  BLOB_UPLOAD_INVALID: 400,
  BLOB_UPLOAD_UNKNOWN: 404,
  DIGEST_INVALID: 400,
  MANIFEST_BLOB_UNKNOWN: 400,
  MANIFEST_INVALID: 400,
  MANIFEST_UNKNOWN: 404,
  NAME_INVALID: 400,
  NAME_UNKNOWN: 404,
  SIZE_INVALID: 400,
  TAG_INVALID: 400,
  UNAUTHORIZED: 401,
  DENIED: 403,
  UNSUPPORTED: 405,
  TOOMANYREQUESTS: 429,
  UNAVAILABLE: 503,
  UNKNOWN: 500,
} as const;
export type ErrorCode = keyof typeof ErrorStatus;

/** A failure to answer with; `status` overrides the code's usual one (413 for a body too large, 416 for a bad range). */
export class DistributionError extends Error {
  override readonly name = 'DistributionError';
  constructor(readonly code: ErrorCode, message: string, readonly status: number = ErrorStatus[code], readonly headers: Record<string, string> = {}) {
    super(message);
  }
}

export function sendError(res: ServerResponse, err: DistributionError): void {
  if (res.headersSent) return void res.destroy();
  const body = JSON.stringify({ errors: [{ code: err.code, message: err.message, detail: null }] });
  res.writeHead(err.status, { ...err.headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
}
