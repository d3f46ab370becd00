/**
 * Every response this service sends, as the runtime's structured return. Bodies are strings, so the
 * bytes an ETag is computed over are exactly the bytes sent.
 */
import { createHash } from 'node:crypto';
import { errorTypePath } from './catalog.js';
import type { ApiError, HttpResponse } from './types.js';

export const JSON_TYPE = 'application/json';
export const PROBLEM_JSON = 'application/problem+json';

/** The catalog types this service itself answers with; each has a catalog row. */
export const ServiceErrorTypes = [
  'invalid_request',
  'invalid_token',
  'expired_token',
  'insufficient_scope',
  'not_found',
  'method_not_allowed',
] as const;
export type ServiceErrorType = (typeof ServiceErrorTypes)[number];

/**
 * Quay's ApiException.to_dict: `detail` and `title` duplicated into the deprecated
 * `error_message` / `error_type` for old clients. With no usable base URL the `type` stays a
 * relative reference, which RFC 9457 allows.
 */
export const problem = (
  baseUrl: string,
  status: number,
  errorType: ServiceErrorType,
  detail: string,
  headers: Record<string, string> = {},
): HttpResponse => {
  const body: ApiError = {
    status,
    type: baseUrl + errorTypePath(errorType),
    title: errorType,
    detail,
    error_message: detail,
    error_type: errorType,
  };
  return {
    statusCode: status,
    headers: { 'content-type': PROBLEM_JSON, 'cache-control': 'no-store', ...headers },
    body: JSON.stringify(body),
  };
};

export const etagOf = (body: string): string => `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;

/** RFC 9110 §13.1.2: weak comparison, a list of tags or `*`. */
export const matchesIfNoneMatch = (header: string | undefined, etag: string): boolean => {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  const opaque = etag.replace(/^W\//, '');
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === opaque);
};

/**
 * A 200 with validators, or a 304 carrying the same ETag and Cache-Control (RFC 9110 §15.4.5)
 * and no body.
 */
export const cacheable = (
  value: unknown,
  ifNoneMatch: string | undefined,
  cacheHeaders: { 'cache-control': string; vary?: string },
): HttpResponse => {
  const body = JSON.stringify(value);
  const etag = etagOf(body);
  const headers: Record<string, string> = { etag, ...cacheHeaders };
  if (matchesIfNoneMatch(ifNoneMatch, etag)) return { statusCode: 304, headers };
  return { statusCode: 200, headers: { 'content-type': JSON_TYPE, ...headers }, body };
};
