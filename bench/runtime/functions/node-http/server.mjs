// The floor: what one core serves with no framework. argv: <hello|echo|cloudevent> <port>
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';

const [scenario, port] = process.argv.slice(2);

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
    send(res, 400, { 'content-type': 'application/json' }, '{"error":"invalid json"}');
    return { ok: false };
  }
}

const handlers = {
  hello(req, res) {
    send(res, 200, { 'content-type': 'text/plain; charset=utf-8' }, 'Hello, world!');
  },
  echo(req, res) {
    readBody(req, (text) => {
      const parsed = parseOr400(res, text);
      if (!parsed.ok) return;
      send(res, 200, { 'content-type': 'application/json; charset=utf-8' }, JSON.stringify(parsed.value));
    });
  },
  // Binary-mode CloudEvent in and out, with the same required-attribute check an SDK does.
  cloudevent(req, res) {
    const h = req.headers;
    if (h['ce-specversion'] !== '1.0' || !h['ce-id'] || !h['ce-source'] || !h['ce-type']) {
      send(res, 400, { 'content-type': 'application/json' }, '{"error":"invalid cloudevent"}');
      return;
    }
    readBody(req, (text) => {
      const parsed = parseOr400(res, text);
      if (!parsed.ok) return;
      send(res, 200, {
        'content-type': 'application/json',
        'ce-specversion': '1.0',
        'ce-id': randomUUID(),
        'ce-source': '/bench/fn',
        'ce-type': 'dev.func.bench.pong',
        'ce-time': new Date().toISOString(),
      }, JSON.stringify(parsed.value));
    });
  },
};

const handler = handlers[scenario];
if (!handler) {
  console.error(`unknown scenario "${scenario}"; expected one of ${Object.keys(handlers).join(', ')}`);
  process.exit(2);
}
createServer(handler).listen(Number(port), '127.0.0.1');
// A normal exit on SIGTERM, so that `node --cpu-prof` can write its profile.
process.on('SIGTERM', () => process.exit(0));
