import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { readContainerLog, type LogReadOptions } from './log-reader.js';
import { ContainerLog } from './logs.js';

const dirs: string[] = [];
const fresh = () => {
  const d = mkdtempSync(join(tmpdir(), 'logs-'));
  dirs.push(d);
  return join(d, 'c', '0.log');
};
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

const read = async (path: string, opts: LogReadOptions = {}, live?: ContainerLog) => {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  await readContainerLog(path, opts, out, live);
  return Buffer.concat(chunks).toString();
};

describe('ContainerLog', () => {
  it('writes CRI lines: time, stream, F for full lines, P for cut ones, CRLF trimmed', () => {
    const path = fresh();
    const log = new ContainerLog(path);
    log.write('stdout', 'one\r\ntw');
    log.write('stderr', 'err\n');
    log.write('stdout', 'o\n');
    log.write('stdout', 'x'.repeat(16 * 1024 + 3));
    log.close();
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n').map((l) => l.split(' ').slice(1).join(' '));
    expect(lines).toEqual(['stdout F one', 'stderr F err', 'stdout F two', `stdout P ${'x'.repeat(16 * 1024)}`, 'stdout F xxx']);
    expect(readFileSync(path, 'utf8')).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z stdout F one\n/);
  });

  it('rotates at the size cap and keeps at most maxFiles files', () => {
    const path = fresh();
    const log = new ContainerLog(path, { maxBytes: 200, maxFiles: 3 });
    for (let i = 0; i < 40; i++) log.write('stdout', `line ${i} ${'.'.repeat(20)}\n`);
    log.close();
    const files = readdirSync(join(path, '..'));
    expect(files.length).toBeLessThanOrEqual(3);
    expect(files).toContain('0.log');
    expect(files.filter((f) => /^0\.log\.\d{8}-\d{6}$/.test(f)).length).toBe(files.length - 1);
  });
});

describe('readContainerLog', () => {
  it('renders text, tails, times, limits and joins partial lines', async () => {
    const path = fresh();
    const log = new ContainerLog(path);
    log.write('stdout', 'a\nb\nc\n');
    log.write('stdout', 'y'.repeat(16 * 1024 + 1) + '\n');
    log.close();
    expect(await read(path, { tailLines: 2 })).toBe(`${'y'.repeat(16 * 1024 + 1)}\n`);
    expect(await read(path, { tailLines: 3, limitBytes: 3 })).toBe('c\ny');
    expect((await read(path, { timestamps: true, tailLines: 3 })).split('\n')[0]).toMatch(/^\S+Z c$/);
    expect(await read(path, { sinceTime: Date.now() + 60_000 })).toBe('');
    expect(await read(join(path, '..', 'missing.log'))).toBe('');
  });

  it('reads one stream when asked (PodLogOptions stream)', async () => {
    const path = fresh();
    const log = new ContainerLog(path);
    log.write('stdout', 'out 1\n');
    log.write('stderr', 'err 1\n');
    log.write('stdout', 'out 2\n');
    log.close();
    expect(await read(path, { stream: 'stdout' })).toBe('out 1\nout 2\n');
    expect(await read(path, { stream: 'stderr' })).toBe('err 1\n');
    expect(await read(path)).toBe('out 1\nerr 1\nout 2\n');
  });

  it('follows a live log across a rotation until it closes', async () => {
    const path = fresh();
    const log = new ContainerLog(path, { maxBytes: 120, maxFiles: 5 });
    log.write('stdout', 'before\n');
    // Written once the reader has the file open (kubectl's request has arrived), as in the kubelet.
    let opened!: () => void;
    const started = new Promise<void>((r) => (opened = r));
    const reading = read(path, { follow: true, started: () => opened() }, log);
    await started;
    for (let i = 0; i < 6; i++) log.write('stdout', `after ${i} ${'-'.repeat(30)}\n`);
    log.close();
    const text = await reading;
    expect(text.startsWith('before\n')).toBe(true);
    expect(text).toMatch(/after 5 -+\n$/);
  });
});
