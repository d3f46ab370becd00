/**
 * Response heads that the runtime sends again and again (a hello's CORS pairs, content-type and
 * length), built once as flat lists and reused, so a response allocates no head of its own.
 *
 * A head goes to node:http through its public `writeHead(status, [name, value, …])` (the raw list
 * form, documented since Node 14.14 and in Node 20, 22 and 24), which is the cheapest public way to
 * send a whole head: node:http checks each name and value and writes them out as given, without
 * keeping them. Headers a response already holds (set by an Express app in front, or by a wrapped
 * writeHead: on-headers for compression and response-time, APM agents) are merged by node:http
 * itself, with the list taking precedence, into that response's own headers; a head is never changed.
 */
import type { ServerResponse } from 'node:http';

/** [name, value, …], as writeHead takes them. Plain arrays: node:http reads frozen ones through a generic keyed load. */
export type Head = readonly string[];

/** `head` (which carries no content-length) with a content-length after its headers. */
export function withLength(head: Head, length: number): Head {
  return head.concat('content-length', String(length));
}

/** res.writeHead(status, head), through node:http's public API. */
export function writeHead(res: ServerResponse, status: number, head: Head): void {
  res.writeHead(status, head as string[]);
}
