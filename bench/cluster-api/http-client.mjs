// The load generator of the cluster-api benches: `connections` keep-alive HTTP/1.1 connections over
// raw sockets, one request in flight on each. Node's http client costs about as much CPU per
// request as the server it measures (measured here: ~10,700 GETs/s of a bare node:http server with
// one http.Agent, the load generator's core saturated), so it, not the API, set the ceiling. This
// writes each request as one string and reads only the status line, Content-Length (or chunked
// framing) and the body: several times cheaper per request.
import { connect } from 'node:net';

const CRLF2 = Buffer.from('\r\n\r\n');

/** One connection: a queue of one. Resolves `{ status, body }` (body a Buffer) per request. */
class Connection {
  constructor(host, port) {
    this.socket = connect({ host, port, noDelay: true });
    this.buf = Buffer.alloc(0);
    // A long body arrives in many chunks: kept apart until `need` bytes are in, then joined once.
    this.parts = [];
    this.have = 0;
    this.need = 0;
    this.waiting = undefined;
    this.socket.on('data', (chunk) => {
      if (this.have + chunk.length < this.need) {
        this.parts.push(chunk);
        this.have += chunk.length;
        return;
      }
      this.buf = this.parts.length === 0 && this.buf.length === 0 ? chunk : Buffer.concat([this.buf, ...this.parts, chunk]);
      this.parts = [];
      this.need = 0;
      this.have = this.buf.length;
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

  send(text) {
    if (this.dead) return Promise.reject(this.dead);
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.socket.write(text);
    });
  }

  parse() {
    if (!this.waiting) return;
    const end = this.buf.indexOf(CRLF2);
    if (end < 0) return;
    const head = this.buf.toString('latin1', 0, end);
    const status = Number(head.slice(9, 12));
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    let body;
    let rest;
    if (length) {
      const start = end + 4;
      const stop = start + Number(length[1]);
      if (this.buf.length < stop) return void (this.need = stop);
      body = this.buf.subarray(start, stop);
      rest = this.buf.subarray(stop);
    } else if (/\r\ntransfer-encoding: *chunked/i.test(head)) {
      const parts = [];
      let at = end + 4;
      for (;;) {
        const eol = this.buf.indexOf('\r\n', at);
        if (eol < 0) return;
        const size = parseInt(this.buf.toString('latin1', at, eol), 16);
        if (this.buf.length < eol + 2 + size + 2) return;
        if (size === 0) {
          rest = this.buf.subarray(eol + 4);
          break;
        }
        parts.push(this.buf.subarray(eol + 2, eol + 2 + size));
        at = eol + 2 + size + 2;
      }
      body = Buffer.concat(parts);
    } else {
      this.waiting.reject(new Error(`response without a length: ${head.split('\r\n', 1)[0]}`));
      this.waiting = undefined;
      return;
    }
    this.buf = rest.length ? Buffer.from(rest) : Buffer.alloc(0);
    this.have = this.buf.length;
    const w = this.waiting;
    this.waiting = undefined;
    w.resolve({ status, body });
  }

  close() {
    this.socket.destroy();
  }
}

/**
 * `call(method, path, body?, contentType?, headers?)` → `{ status, body }` over up to `connections`
 * keep-alive connections to `url`; `headers` is an object of extra request headers; `close()` ends them.
 */
export function httpClient(url, { token, connections = 50 } = {}) {
  const { hostname, port } = new URL(url);
  const fixed = `Host: ${hostname}:${port}\r\n${token ? `Authorization: Bearer ${token}\r\n` : ''}Accept: application/json\r\n`;
  const idle = [];
  const all = [];
  const queue = [];
  const take = () => {
    if (idle.length > 0) return Promise.resolve(idle.pop());
    if (all.length < connections) {
      const c = new Connection(hostname, Number(port));
      all.push(c);
      return Promise.resolve(c);
    }
    return new Promise((resolve) => queue.push(resolve));
  };
  const give = (c) => {
    if (c.dead) {
      all.splice(all.indexOf(c), 1);
      const waiter = queue.shift();
      if (waiter) take().then(waiter);
      return;
    }
    const next = queue.shift();
    if (next) next(c);
    else idle.push(c);
  };
  const call = async (method, path, body, contentType = 'application/json', headers = undefined) => {
    const c = await take();
    let extra = body === undefined ? '' : `Content-Type: ${contentType}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`;
    if (headers) for (const [k, v] of Object.entries(headers)) extra += `${k}: ${v}\r\n`;
    try {
      return await c.send(`${method} ${path} HTTP/1.1\r\n${fixed}${extra}\r\n${body ?? ''}`);
    } finally {
      give(c);
    }
  };
  call.close = () => {
    for (const c of all) c.close();
  };
  return call;
}
