/**
 * The runtime's error catalog. Each code is part of the public contract: problem-details bodies
 * carry it in `code`, and the error-description service serves these entries by code.
 */
import { Buffer } from 'node:buffer';
import type { ServerResponse } from 'node:http';

export interface RuntimeErrorEntry {
  status: number;
  title: string;
  description: string;
}

export const runtimeErrors = {
  invalid_json: {
    status: 400,
    title: 'Malformed JSON body',
    description: 'The request declared a JSON content type but its body is not valid JSON. Fix the body or the content-type header.',
  },
  invalid_body: {
    status: 400,
    title: 'Malformed request body',
    description: 'The request body could not be decoded for its declared content type or charset.',
  },
  invalid_cloudevent: {
    status: 400,
    title: 'Invalid CloudEvent',
    description: 'The request looks like a CloudEvent (a ce-specversion header or a cloudevents content type) but is not a valid one: required attributes (id, source, type, specversion) are missing, the spec version is unknown, or the structured JSON is malformed.',
  },
  payload_too_large: {
    status: 413,
    title: 'Request body too large',
    description: 'The request body is larger than the runtime accepts. Send less, or raise the limit with --body-limit / FUNC_BODY_LIMIT.',
  },
  function_error: {
    status: 400,
    title: 'The function rejected the request',
    description: 'The function threw an error that carries a 4xx status; the detail is the error message.',
  },
  internal_error: {
    status: 500,
    title: 'Internal error',
    description: 'The function failed while handling the request. The runtime log has the details; the response never does.',
  },
  function_unavailable: {
    status: 503,
    title: 'Function unavailable',
    description: 'The function threw an error that carries a 5xx status, or the runtime is shutting down or overloaded.',
  },
  timeout: {
    status: 504,
    title: 'Function timed out',
    description: 'The function did not answer within the configured timeout (--timeout / FUNC_TIMEOUT).',
  },
  invalid_response: {
    status: 500,
    title: 'Invalid function response',
    description: 'The function returned a value the runtime cannot send, such as an invalid CloudEvent or a body that cannot be serialised.',
  },
} as const satisfies Record<string, RuntimeErrorEntry>;

export type RuntimeErrorCode = keyof typeof runtimeErrors;

/** An error the runtime raises on bad input; it maps to a problem-details response. */
export class RuntimeError extends Error {
  readonly code: RuntimeErrorCode;
  readonly status: number;
  constructor(code: RuntimeErrorCode, detail: string, status?: number) {
    super(detail);
    this.name = 'RuntimeError';
    this.code = code;
    this.status = status ?? runtimeErrors[code].status;
  }
}

const PROBLEM_TYPE = 'application/problem+json';

/** Sends an RFC 9457 problem-details body; the only writer of runtime error responses. */
export function sendProblem(res: ServerResponse, code: RuntimeErrorCode, detail: string, status?: number): void {
  const entry = runtimeErrors[code];
  const st = status ?? entry.status;
  const body = JSON.stringify({ status: st, code, title: entry.title, detail });
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(st, { 'content-type': PROBLEM_TYPE, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
