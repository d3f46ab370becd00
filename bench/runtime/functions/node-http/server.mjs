// The floor: what one core serves with no framework. argv: <hello|echo|cloudevent> <port> [cors]
// With `cors`, every reply also carries the two CORS headers that func-runtime and faas-js-runtime
// send on every reply by default (faas-js-runtime's own suite checks them on a plain GET): the same
// reply headers, in an object literal as a node:http user writes them. Without it, the reply is the
// bare minimum.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';

const [scenario, port, variant] = process.argv.slice(2);
const cors = variant === 'cors';
const METHODS = 'OPTIONS, GET, DELETE, POST, PUT, HEAD, PATCH';

function readBody(req, done) {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => done(Buffer.concat(chunks).toString('utf8')));
}

// writeHead fixes the head at once, so without an explicit content-length every reply would be chunked.
function send(res, status, headers, body) {
  headers['content-length'] = Buffer.byteLength(body);
  res.writeHead(status, headers).end(body);
}

function parseOr400(res, text) {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    send(res, 400, cors ? { 'access-control-allow-origin': '*', 'access-control-allow-methods': METHODS, 'content-type': 'application/json' } : { 'content-type': 'application/json' }, '{"error":"invalid json"}');
    return { ok: false };
  }
}

const handlers = {
  hello(req, res) {
    send(res, 200, cors ? { 'access-control-allow-origin': '*', 'access-control-allow-methods': METHODS, 'content-type': 'text/plain; charset=utf-8' } : { 'content-type': 'text/plain; charset=utf-8' }, 'Hello, world!');
  },
  echo(req, res) {
    readBody(req, (text) => {
      const parsed = parseOr400(res, text);
      if (!parsed.ok) return;
      const type = 'application/json; charset=utf-8';
      send(res, 200, cors ? { 'access-control-allow-origin': '*', 'access-control-allow-methods': METHODS, 'content-type': type } : { 'content-type': type }, JSON.stringify(parsed.value));
    });
  },
  // Binary-mode CloudEvent in and out, with the same required-attribute check an SDK does.
  cloudevent(req, res) {
    const h = req.headers;
    if (h['ce-specversion'] !== '1.0' || !h['ce-id'] || !h['ce-source'] || !h['ce-type']) {
      send(res, 400, cors ? { 'access-control-allow-origin': '*', 'access-control-allow-methods': METHODS, 'content-type': 'application/json' } : { 'content-type': 'application/json' }, '{"error":"invalid cloudevent"}');
      return;
    }
    readBody(req, (text) => {
      const parsed = parseOr400(res, text);
      if (!parsed.ok) return;
      const headers = {
        'content-type': 'application/json',
        'ce-specversion': '1.0',
        'ce-id': randomUUID(),
        'ce-source': '/bench/fn',
        'ce-type': 'dev.func.bench.pong',
        'ce-time': new Date().toISOString(),
      };
      send(res, 200, cors ? { 'access-control-allow-origin': '*', 'access-control-allow-methods': METHODS, ...headers } : headers, JSON.stringify(parsed.value));
    });
  },
};

const handler = handlers[scenario];
if (!handler) {
  console.error(`unknown scenario "${scenario}"; expected one of ${Object.keys(handlers).join(', ')}`);
  process.exit(2);
}
if (variant !== undefined && !cors) {
  console.error(`unknown variant "${variant}"; expected cors, or nothing`);
  process.exit(2);
}
createServer(handler).listen(Number(port), '127.0.0.1');
// A normal exit on SIGTERM, so that `node --cpu-prof` can write its profile.
process.on('SIGTERM', () => process.exit(0));
