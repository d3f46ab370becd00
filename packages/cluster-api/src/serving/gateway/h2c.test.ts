import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { sniff } from './h2c.js';

const Preface = 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n';

describe('sniff', () => {
  let server: Server | undefined;
  afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

  /** A listener on port 0 that sniffs each connection with `timeoutMs`; resolves which side got the first one and what it read. */
  const listen = (timeoutMs?: number) => new Promise<{ port: number; handed: Promise<{ to: string; read: string } | 'closed'> }>((resolve) => {
    let hand!: (v: { to: string; read: string } | 'closed') => void;
    const handed = new Promise<{ to: string; read: string } | 'closed'>((r) => (hand = r));
    const read = (to: string) => (s: Socket) => {
      let text = '';
      s.setEncoding('utf8').on('data', (d: string) => {
        text += d;
        if (text.endsWith('END')) hand({ to, read: text });
      });
      // HTTP/2's side gets the connection paused (the HTTP/2 server reads what is buffered itself).
      s.resume();
    };
    server = createServer((s) => {
      s.on('close', () => hand('closed'));
      sniff(s, read('h1'), read('h2'), timeoutMs);
    }).listen(0, '127.0.0.1', () => resolve({ port: (server!.address() as { port: number }).port, handed }));
  });
  const send = (port: number, ...chunks: string[]) => {
    const c = connect(port, '127.0.0.1');
    void (async () => {
      for (const chunk of chunks) {
        c.write(chunk);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    return c;
  };

  it('hands a connection that opens with the HTTP/2 preface, even in pieces, to HTTP/2, the bytes read put back', async () => {
    const { port, handed } = await listen();
    const c = send(port, Preface.slice(0, 5), Preface.slice(5), 'frames END');
    expect(await handed).toEqual({ to: 'h2', read: `${Preface}frames END` });
    c.destroy();
  });

  it('hands anything else to HTTP/1.1: a request, and a line that starts as the preface and is not it', async () => {
    for (const chunks of [['GET / HTTP/1.1\r\n', 'END'], ['PRI * HTTP/1', '.1\r\nEND'], ['P', 'RX END']]) {
      const { port, handed } = await listen();
      const c = send(port, ...chunks);
      expect(await handed).toEqual({ to: 'h1', read: chunks.join('') });
      c.destroy();
      await new Promise<void>((r) => server!.close(() => r()));
      server = undefined;
    }
  });

  it('closes a connection that sends too little to tell within its time', async () => {
    const { port, handed } = await listen(50);
    const c = send(port, 'PRI');
    expect(await handed).toBe('closed');
    c.destroy();
  });
});
