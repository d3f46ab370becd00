// The broker bench's load generator: keep-alive HTTP/1.1 connections over raw sockets, one POST in
// flight on each, reading only the status line and Content-Length. Node's http client would cost
// about as much CPU per request as the broker's ingress it measures (see bench/cluster-api's
// http-client.mjs for the measurement); this keeps the ceiling on the broker's side.
import { connect } from 'node:net';

class Connection {
  constructor(host, port) {
    this.socket = connect({ host, port, noDelay: true });
    this.buf = Buffer.alloc(0);
    this.waiting = undefined;
    this.socket.on('data', (chunk) => {
      this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
      this.parse();
    });
    const fail = (err) => {
      const w = this.waiting;
      this.waiting = undefined;
      this.dead = err ?? new Error('connection closed');
      w?.reject(this.dead);
    };
    this.socket.on('error', fail);
    this.socket.on('close', () => fail());
  }

  parse() {
    const end = this.buf.indexOf('\r\n\r\n');
    if (end < 0 || !this.waiting) return;
    const head = this.buf.toString('latin1', 0, end);
    const status = Number(head.slice(9, 12));
    const m = /content-length:\s*(\d+)/i.exec(head);
    const len = m ? Number(m[1]) : 0;
    if (this.buf.length < end + 4 + len) return;
    this.buf = this.buf.subarray(end + 4 + len);
    const w = this.waiting;
    this.waiting = undefined;
    w.resolve(status);
  }

  send(request) {
    if (this.dead) return Promise.reject(this.dead);
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.socket.write(request);
    });
  }
}

/** `connections` keep-alive connections to `url`; `post(path, headers, body)` resolves the status. */
export function rawClient(url, connections) {
  const { hostname, port } = new URL(url);
  const pool = Array.from({ length: connections }, () => new Connection(hostname, Number(port)));
  const idle = [...pool];
  const queue = [];
  const release = (c) => {
    const next = queue.shift();
    if (next) next(c);
    else idle.push(c);
  };
  const acquire = () => (idle.length > 0 ? Promise.resolve(idle.pop()) : new Promise((r) => queue.push(r)));
  return {
    async post(path, headers, body) {
      const c = await acquire();
      const lines = [`POST ${path} HTTP/1.1`, `host: ${hostname}:${port}`, `content-length: ${Buffer.byteLength(body)}`];
      for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
      try {
        return await c.send(`${lines.join('\r\n')}\r\n\r\n${body}`);
      } finally {
        release(c);
      }
    },
    close: () => pool.forEach((c) => c.socket.destroy()),
  };
}
