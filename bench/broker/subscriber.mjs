// The bench's HTTP subscriber, in a process of its own so the load generator does not slow it:
// answers every POST 202, counts them, and keeps ingress→subscriber latencies from `ce-sentat`
// (epoch milliseconds with a fraction, comparable across processes on one machine).
// GET /stats → {count, last, p50, p99, latencies}; POST /reset clears. Prints its URL on stdout.
import { createServer } from 'node:http';
import { performance } from 'node:perf_hooks';

const now = () => performance.timeOrigin + performance.now();
let count = 0;
let last = 0;
let latencies = [];
const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/stats') {
    const l = [...latencies].sort((a, b) => a - b);
    const q = (p) => l[Math.min(l.length - 1, Math.floor(l.length * p))];
    return void res.end(JSON.stringify({ count, last, latencies: l.length, p50: q(0.5), p99: q(0.99) }));
  }
  if (req.url === '/reset') {
    count = 0;
    latencies = [];
    req.resume();
    return void res.end('{}');
  }
  req.resume();
  req.on('end', () => {
    count++;
    last = now();
    const sent = Number(req.headers['ce-sentat']);
    if (sent) latencies.push(last - sent);
    res.writeHead(202).end();
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${server.address().port}/` })}\n`));
