// A Sequence step for the bench, in a process of its own: answers every POST with the event it got
// (binary mode, every ce- header kept, `ce-sentat` included) as its reply, so the next step gets it.
// Prints its URL on stdout.
import { createServer } from 'node:http';

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => k.startsWith('ce-') || k === 'content-type'));
    res.writeHead(200, headers).end(Buffer.concat(chunks));
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${server.address().port}/` })}\n`));
