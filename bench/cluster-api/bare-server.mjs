// The machine's ceiling for the API bench: bare node:http answering every request with a ~2 KiB
// JSON body, no parsing, no storage. Prints its URL on stderr in the same shape `cluster-api serve` does.
import { createServer } from 'node:http';

const body = JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'bare', annotations: { pad: 'x'.repeat(1900) } } });
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  process.stderr.write(`${JSON.stringify({ msg: 'listening', url: `http://127.0.0.1:${server.address().port}` })}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
