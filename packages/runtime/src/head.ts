/**
 * Response heads that the runtime sends again and again (a hello's CORS pairs, content-type and
 * length), checked once instead of on every response.
 *
 * node:http checks every header name and value with a regular expression on each
 * `writeHead(status, headers)`: for a hello with the CORS pairs faas-js-runtime sends, that is
 * about 4,000 of the 80,000 instructions node spends on the request (callgrind). It does not check
 * again the headers it keeps itself (what `setHeader` stored, in its outgoing-headers slot), since
 * they were checked when they were set. A Head carries such a slot's content, built once from a
 * flat list and checked with node:http's own public validators; `writeHead(res, status, head)`
 * puts it in the slot and lets node:http write it as it writes headers set one by one.
 *
 * The slot is node:http's own, so it is used only where a check at load shows that it works as
 * described (a response with a slot of our making, written, reads back those headers), and only on
 * a response that holds no headers yet (an Express app in front may have set some). Anywhere else
 * the same list goes to `writeHead(status, list)`: the same bytes on the wire either way.
 *
 * One slot serves every response with that head, so nothing may change it. node:http itself does
 * not (writeHead(status) only reads the slot, and setHeader and removeHeader throw once the head is
 * written), but a wrapped writeHead can change headers just before it writes them (on-headers does,
 * for Express's compression and response-time middleware; APM agents wrap writeHead on a response or
 * on ServerResponse.prototype). So the slot is handed over only when the response's writeHead is
 * node:http's own, recognised at load by its source (a wrapper installed before this module loads
 * has a source of its own); a wrapped one gets the list, and what it changes is that response's own.
 */
import { IncomingMessage, ServerResponse, validateHeaderName, validateHeaderValue } from 'node:http';

/** node:http's outgoing-headers slot: lower-case name → [name, value]. */
type Slot = Record<string, [string, string]>;

export interface Head {
  /** [name, value, …], as writeHead takes them. */
  readonly pairs: readonly string[];
  /** The same headers in node:http's slot form; undefined where the slot is not used. */
  readonly slot: Slot | undefined;
}

/** node:http's own ServerResponse.prototype.writeHead, unless something wrapped it before this module loaded. */
const NODE_WRITE_HEAD: ServerResponse['writeHead'] | undefined = nodeWriteHead();

function nodeWriteHead(): ServerResponse['writeHead'] | undefined {
  const own = ServerResponse.prototype.writeHead;
  const source = Function.prototype.toString.call(own);
  return source.startsWith('function writeHead(') && source.includes('kOutHeaders') ? own : undefined;
}

/** node:http's outgoing-headers symbol, if it keeps headers as this module expects. */
const SLOT: symbol | undefined = NODE_WRITE_HEAD === undefined ? undefined : findSlot();

function findSlot(): symbol | undefined {
  try {
    const req = Object.assign(Object.create(IncomingMessage.prototype) as IncomingMessage, { method: 'GET', httpVersionMajor: 1, httpVersionMinor: 1, headers: {} });
    const res = new ServerResponse(req);
    const symbol = Object.getOwnPropertySymbols(res).find((s) => s.description === 'kOutHeaders');
    if (symbol === undefined || (res as unknown as Record<symbol, unknown>)[symbol] !== null) return undefined;
    (res as unknown as Record<symbol, unknown>)[symbol] = slotOf(['x-probe', 'one', 'content-length', '0']);
    res.writeHead(204);
    const head = (res as unknown as { _header?: unknown })._header;
    const written = typeof head === 'string' && head.startsWith('HTTP/1.1 204 No Content\r\nx-probe: one\r\ncontent-length: 0\r\n');
    return written && res.getHeader('x-probe') === 'one' ? symbol : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A fast-properties object with no prototype, as node:http's own slot has none (an inherited
 * enumerable property would be written as a header). Made by a prototype change, not
 * Object.create(null), which makes a dictionary: node:http walks it with for-in, measurably slower.
 */
function emptySlot(): Slot {
  return Object.setPrototypeOf({}, null) as Slot;
}

function slotOf(pairs: readonly string[]): Slot {
  const slot = emptySlot();
  for (let i = 0; i < pairs.length; i += 2) slot[pairs[i]!.toLowerCase()] = [pairs[i]!, pairs[i + 1]!];
  return slot;
}

/** True when a name occurs twice (any case): a slot holds one entry per name. */
function repeatsAName(pairs: readonly string[]): boolean {
  const seen = new Set<string>();
  for (let i = 0; i < pairs.length; i += 2) {
    const lower = pairs[i]!.toLowerCase();
    if (seen.has(lower)) return true;
    seen.add(lower);
  }
  return false;
}

/** A head for `pairs`, checked now as node:http checks headers (it throws what writeHead would throw). */
export function headOf(pairs: readonly string[]): Head {
  for (let i = 0; i < pairs.length; i += 2) {
    validateHeaderName(pairs[i]!);
    validateHeaderValue(pairs[i]!, pairs[i + 1]);
  }
  return { pairs, slot: SLOT === undefined || repeatsAName(pairs) ? undefined : slotOf(pairs) };
}

/** `head` (which carries no content-length) with a content-length after its headers: digits, nothing to check. */
export function withLength(head: Head, length: number): Head {
  const value = String(length);
  const pairs = head.pairs.concat('content-length', value);
  if (head.slot === undefined || 'content-length' in head.slot) return { pairs, slot: undefined };
  const slot = emptySlot();
  for (const name in head.slot) slot[name] = head.slot[name]!;
  slot['content-length'] = ['content-length', value];
  return { pairs, slot };
}

/** res.writeHead(status, head.pairs), without checking the headers again where that can be done. */
export function writeHead(res: ServerResponse, status: number, head: Head): void {
  const slot = head.slot;
  if (slot !== undefined && res.writeHead === NODE_WRITE_HEAD && (res as unknown as Record<symbol, unknown>)[SLOT!] === null) {
    (res as unknown as Record<symbol, unknown>)[SLOT!] = slot;
    res.writeHead(status);
  } else {
    res.writeHead(status, head.pairs as string[]);
  }
}

/** Whether heads are handed over in node:http's slot on this Node (tests and the bench report it). */
export const slotInUse = SLOT !== undefined;
