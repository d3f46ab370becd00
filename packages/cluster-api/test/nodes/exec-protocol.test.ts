/**
 * pods/exec and pods/attach at the protocol level, against a real API server and node agent: the
 * WebSocket channels (v5 with its stdin close, v4, v4.base64) as client libraries speak them, exec
 * probes run through the runtime's exec, and every malformed request: a Status before the upgrade
 * (no command, a container the pod does not have, no stream, a flag that is not a boolean, a
 * completed pod, no upgrade) or a Status on the error channel after it (a missing executable, a
 * runtime that cannot exec), a terminal size that is not JSON ignored; the server serves on. A tty
 * is a real pseudo-terminal where util-linux's `script` is installed (this test machine has it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Resources, type KubeClient } from '@func/kube-client';
import { isReady, podUntil, privatePodAddresses, useNodeCluster } from '../support/node-fixtures.js';
import { until } from '../../testing/src/poll.js';

const current = useNodeCluster(privatePodAddresses());
let kube: KubeClient;
let work: string;

const execPath = (pod: string, query: string) => `/api/v1/namespaces/default/pods/${pod}/exec?${query}`;
const cmd = (...parts: string[]) => parts.map((p) => `command=${encodeURIComponent(p)}`).join('&');

interface Session {
  protocol: string;
  /** Bytes per channel, in arrival order. */
  channels: Map<number, Buffer[]>;
  status: () => Record<string, any> | undefined;
  text: (channel: number) => string;
  send: (channel: number, data: Buffer | string) => void;
  closed: Promise<number>;
}

/** A WebSocket exec or attach as client libraries open one; resolves once the server switched protocols. */
function open(path: string, protocols: string[]): Promise<Session> {
  const ws = new WebSocket(current.cluster.server.url.replace(/^http/, 'ws') + path, protocols);
  const channels = new Map<number, Buffer[]>();
  const base64 = () => ws.protocol === 'v4.base64.channel.k8s.io';
  ws.on('message', (data: Buffer) => {
    const bytes = base64() ? Buffer.concat([Buffer.from([data[0]! - 48]), Buffer.from(data.subarray(1).toString(), 'base64')]) : data;
    const list = channels.get(bytes[0]!) ?? [];
    list.push(bytes.subarray(1));
    channels.set(bytes[0]!, list);
  });
  const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
  const text = (channel: number) => Buffer.concat(channels.get(channel) ?? []).toString();
  return new Promise((resolve, reject) => {
    ws.once('unexpected-response', (_req, res) => reject(new Error(`status ${res.statusCode}`)));
    ws.once('error', reject);
    ws.once('open', () =>
      resolve({
        protocol: ws.protocol, channels, closed, text,
        status: () => (text(3) ? JSON.parse(text(3)) : undefined),
        send: (channel, data) => {
          const payload = Buffer.from(data);
          ws.send(base64() ? String.fromCharCode(48 + channel) + payload.toString('base64') : Buffer.concat([Buffer.from([channel]), payload]));
        },
      }),
    );
  });
}

/** The Status of a refused request (upgrade or not). */
function refusal(method: string, path: string, headers: Record<string, string> = {}): Promise<[number, string]> {
  return new Promise((resolve, reject) => {
    const req = request(current.cluster.server.url + path, { method, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => (text += c)).on('end', () => {
        const body = JSON.parse(text) as { kind: string; message: string };
        expect(body.kind).toBe('Status');
        resolve([res.statusCode ?? 0, body.message]);
      });
    });
    req.once('upgrade', () => reject(new Error('switched protocols')));
    req.once('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  kube = current.kube;
  work = mkdtempSync(join(tmpdir(), 'exec-protocol-'));
  await kube.create(Resources.pods, { metadata: { name: 'shell' }, spec: { containers: [{ name: 'fn', image: 'probe:v1' }] } });
  await kube.create(Resources.pods, { metadata: { name: 'web' }, spec: { containers: [{ name: 'nginx', image: 'nginx:1.27' }] } });
  await kube.create(Resources.pods, { metadata: { name: 'done' }, spec: { restartPolicy: 'Never', containers: [{ name: 'fn', image: 'probe:v1', env: [{ name: 'CRASH_ON_START', value: 'yes' }] }] } });
  await podUntil(kube, 'shell', 'Ready', isReady);
  await podUntil(kube, 'web', 'Running', (p) => p.status?.phase === 'Running');
  await podUntil(kube, 'done', 'Failed', (p) => p.status?.phase === 'Failed');
}, 60_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the channel protocols', () => {
  it('v5: output on channels 1 and 2, stdin until its close message, then the exit code as a Status', async () => {
    const s = await open(execPath('shell', `${cmd('sh', '-c', 'cat; echo err >&2; exit 7')}&stdin=true&stdout=true&stderr=true`), ['v5.channel.k8s.io', 'v4.channel.k8s.io']);
    expect(s.protocol).toBe('v5.channel.k8s.io');
    s.send(0, 'from stdin\n');
    s.send(255, Buffer.from([0]));
    expect(await s.closed).toBe(1000);
    expect([s.text(1), s.text(2)]).toEqual(['from stdin\n', 'err\n']);
    expect(s.status()).toEqual({
      metadata: {}, status: 'Failure', reason: 'NonZeroExitCode', details: { causes: [{ reason: 'ExitCode', message: '7' }] },
      message: 'command terminated with non-zero exit code: error executing command [sh -c cat; echo err >&2; exit 7], exit code 7',
    });
    // The first message is the empty one on the lowest output channel: the connection is ready.
    expect(s.channels.get(1)![0]!.length).toBe(0);
  });

  it('v4 and v4.base64: Success when the command exits 0', async () => {
    for (const protocol of ['v4.channel.k8s.io', 'v4.base64.channel.k8s.io']) {
      const s = await open(execPath('shell', `${cmd('sh', '-c', 'printf "%s" "$HOSTNAME"')}&stdout=true`), [protocol]);
      expect(s.protocol).toBe(protocol);
      await s.closed;
      expect([s.text(1), s.status()]).toEqual(['shell', { metadata: {}, status: 'Success' }]);
    }
  });

  it('a tty is a terminal (util-linux script): stderr merged into stdout, input echoed, CRLF; a terminal size that is not JSON is ignored', async () => {
    const s = await open(execPath('shell', `${cmd('sh', '-c', 'test -t 0 && echo is-a-tty; read line; echo "got $line"; echo oops >&2')}&stdin=true&stdout=true&stderr=true&tty=true`), ['v5.channel.k8s.io']);
    s.send(4, '{"Width": 80, "Height"');
    s.send(4, 'not json at all');
    s.send(0, 'hello\n');
    await s.closed;
    for (const line of ['is-a-tty\r\n', 'hello\r\n', 'got hello\r\n', 'oops\r\n']) expect(s.text(1)).toContain(line);
    expect([s.text(2), s.status()?.status]).toEqual(['', 'Success']);
  });

  it('a command whose client goes away is ended', async () => {
    const ws = new WebSocket(current.cluster.server.url.replace(/^http/, 'ws') + execPath('shell', `${cmd('sh', '-c', 'echo $$; exec sleep 600')}&stdout=true`), ['v5.channel.k8s.io']);
    const pid = await new Promise<number>((resolve, reject) => {
      ws.on('message', (d: Buffer) => d.length > 1 && resolve(Number(d.subarray(1).toString().trim())));
      ws.once('error', reject);
    });
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    expect(alive()).toBe(true);
    ws.terminate();
    await until('the command ended', () => !alive() || undefined);
  });

  it('exec probes run through the runtime: not ready until the command succeeds', async () => {
    const ready = join(work, 'ready');
    await kube.create(Resources.pods, {
      metadata: { name: 'probed' },
      spec: { containers: [{ name: 'fn', image: 'probe:v1', env: [{ name: 'READY_FILE', value: ready }], readinessProbe: { exec: { command: ['sh', '-c', 'test -f "$READY_FILE"'] }, periodSeconds: 1 } }] },
    });
    const running = await podUntil(kube, 'probed', 'Running', (p) => p.status?.phase === 'Running' && p.status?.containerStatuses?.[0]?.state?.running);
    expect(isReady(running)).toBe(false);
    const s = await open(execPath('probed', `${cmd('sh', '-c', 'touch "$READY_FILE"')}&stdout=true`), ['v5.channel.k8s.io']);
    await s.closed;
    expect(s.status()?.status).toBe('Success');
    await podUntil(kube, 'probed', 'Ready', isReady);
  });
});

describe('malformed and refused', () => {
  const upgrade = { connection: 'Upgrade', upgrade: 'SPDY/3.1', 'x-stream-protocol-version': 'v4.channel.k8s.io' };

  it('answers a Status before the upgrade', async () => {
    expect(await refusal('POST', execPath('shell', 'stdout=true'), upgrade)).toEqual([400, 'you must specify at least one command for the container']);
    expect(await refusal('POST', execPath('shell', `${cmd('ls')}`), upgrade)).toEqual([400, 'you must specify at least 1 of stdin, stdout, stderr']);
    expect(await refusal('POST', execPath('shell', `${cmd('ls')}&stdout=maybe`), upgrade)).toEqual([400, 'invalid value "maybe" for stdout: must be a boolean']);
    expect(await refusal('POST', execPath('shell', `${cmd('ls')}&stdout=true&container=nope`), upgrade)).toEqual([400, 'container nope is not valid for pod shell']);
    expect(await refusal('POST', execPath('done', `${cmd('ls')}&stdout=true`), upgrade)).toEqual([400, 'cannot exec into a container in a completed pod; current phase is Failed']);
    expect(await refusal('POST', '/api/v1/namespaces/default/pods/done/attach?stdout=true', upgrade)).toEqual([400, 'cannot attach to a container in a completed pod; current phase is Failed']);
    expect(await refusal('POST', execPath('shell', `${cmd('ls')}&stdout=true`))).toEqual([400, 'Upgrade request required']);
    expect((await refusal('POST', execPath('nosuch', `${cmd('ls')}&stdout=true`), upgrade))[0]).toBe(404);
    const spdyOnly = { ...upgrade, 'x-stream-protocol-version': 'v9.channel.k8s.io' };
    expect(await refusal('POST', execPath('shell', `${cmd('ls')}&stdout=true`), spdyOnly)).toEqual([403, 'unable to upgrade: unable to negotiate protocol: client supports [v9.channel.k8s.io], server accepts [v4.channel.k8s.io]']);
  });

  it('answers on the error channel once the command cannot run', async () => {
    const missing = await open(execPath('shell', `${cmd('no-such-program')}&stdout=true`), ['v5.channel.k8s.io']);
    await missing.closed;
    expect(missing.status()).toEqual({ metadata: {}, status: 'Failure', message: 'error executing command in container: exec: "no-such-program": executable file not found in $PATH' });
    const simulated = await open(execPath('web', `${cmd('ls')}&stdout=true`), ['v4.channel.k8s.io']);
    await simulated.closed;
    expect(simulated.status()?.message).toBe('the simulated container runtime does not support exec: container "nginx" runs without a process to run commands beside');
  });

  it('serves on after all of it', async () => {
    const s = await open(execPath('shell', `${cmd('echo', 'still here')}&stdout=true`), ['v5.channel.k8s.io']);
    await s.closed;
    expect(s.text(1)).toBe('still here\n');
  });
});
