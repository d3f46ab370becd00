import { createServer } from 'node:net';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultListenHost, describeHolder, inContainer, portHolder } from './listen-host.js';

const none = () => false;

describe('listen host', () => {
  it('is every address in a pod or a container, the IPv4 loopback elsewhere', () => {
    expect(defaultListenHost({}, none)).toBe('127.0.0.1');
    expect(defaultListenHost({ K_SERVICE: 'hello' }, none)).toBe('');
    expect(defaultListenHost({ KUBERNETES_SERVICE_HOST: '10.0.0.1' }, none)).toBe('');
    expect(defaultListenHost({}, (p) => p === '/.dockerenv')).toBe('');
    expect(defaultListenHost({}, (p) => p === '/run/.containerenv')).toBe('');
    expect(inContainer({ K_SERVICE: '' }, none)).toBe(false);
  });
});

describe('port holder', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it.runIf(process.platform === 'linux')('names this process for a port it listens on', async () => {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    try {
      const holder = portHolder(port);
      expect(holder?.pid).toBe(process.pid);
      expect(holder?.command).toContain('node');
    } finally {
      server.close();
    }
  });

  it('reads a /proc tree: the listening socket\'s inode, then the process holding it', () => {
    const proc = mkdtempSync(join(tmpdir(), 'proc-'));
    dirs.push(proc);
    mkdirSync(join(proc, 'net'));
    const header = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n';
    // 8080 = 0x1F90; one established (01) and one listening (0A) socket.
    writeFileSync(join(proc, 'net', 'tcp'), header
      + '   0: 0100007F:1F90 0100007F:D2A4 01 00000000:00000000 00:00000000 00000000  1000        0 111 1\n'
      + '   1: 0240007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 222 1\n');
    for (const [pid, inode, cmd] of [['10', '111', 'curl'], ['20', '222', 'node\0/x/cluster-api/dist/cli.js\0serve']] as const) {
      mkdirSync(join(proc, pid, 'fd'), { recursive: true });
      symlinkSync(`socket:[${inode}]`, join(proc, pid, 'fd', '3'));
      writeFileSync(join(proc, pid, 'cmdline'), `${cmd}\0`);
    }
    const holder = portHolder(8080, proc);
    expect(holder).toEqual({ pid: 20, command: 'node /x/cluster-api/dist/cli.js serve' });
    expect(describeHolder(holder)).toBe(' by pid 20 (node /x/cluster-api/dist/cli.js serve): the local cluster (a pod it runs, or the cluster itself)');
    expect(portHolder(9090, proc)).toBeUndefined();
    expect(describeHolder(undefined)).toBe('');
  });

  it('gives nothing for a malformed or missing /proc', () => {
    const proc = mkdtempSync(join(tmpdir(), 'proc-'));
    dirs.push(proc);
    expect(portHolder(8080, proc)).toBeUndefined();
    mkdirSync(join(proc, 'net'));
    writeFileSync(join(proc, 'net', 'tcp'), 'garbage\n\n   0: zz\n');
    expect(portHolder(8080, proc)).toBeUndefined();
  });
});
