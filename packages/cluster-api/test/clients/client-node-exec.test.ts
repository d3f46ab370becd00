/**
 * @kubernetes/client-node's Exec and Attach (the library in node_modules, WebSocket channels)
 * against a real API server and node agent running function pods as processes: output, stdin, the
 * exit code in the Status callback, and attach to a container that keeps a stdin (`stdin: true`).
 */
import { existsSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { Attach, Exec, KubeConfig, type V1Status } from '@kubernetes/client-node';
import { Resources } from '@func/kube-client';
import { isReady, podUntil, privatePodAddresses, useNodeCluster } from '../support/node-fixtures.js';
import { terminalSession } from '../support/terminal-session.js';
import { until } from '../../testing/src/poll.js';

const current = useNodeCluster(privatePodAddresses());
let kc: KubeConfig;

const collect = () => {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (d: Buffer) => (text += d.toString()));
  return { stream, text: () => text };
};

beforeAll(async () => {
  kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'local', server: current.cluster.server.url, skipTLSVerify: true }],
    users: [{ name: 'anyone' }],
    contexts: [{ name: 'local', cluster: 'local', user: 'anyone' }],
    currentContext: 'local',
  });
  const kube = current.kube;
  await kube.create(Resources.pods, { metadata: { name: 'shell' }, spec: { containers: [{ name: 'fn', image: 'probe:v1' }] } });
  // A container that keeps a stdin and echoes it (a Node.js program: what the process runtime runs).
  const echo = 'process.stdin.on("data", (d) => process.stdout.write("echo: " + d))';
  await kube.create(Resources.pods, {
    metadata: { name: 'echo' },
    spec: { containers: [{ name: 'fn', image: 'probe:v1', command: ['node', '-e', echo], stdin: true }] },
  });
  await podUntil(kube, 'shell', 'Ready', isReady);
  await podUntil(kube, 'echo', 'Running', (p) => p.status?.containerStatuses?.[0]?.state?.running);
}, 60_000);

describe('client-node Exec and Attach', () => {
  it('Exec: stdout, stderr, stdin and the exit code in the Status', async () => {
    const out = collect();
    const err = collect();
    const stdin = new PassThrough();
    let status: V1Status | undefined;
    const ws = await new Exec(kc).exec('default', 'shell', 'fn', ['sh', '-c', 'cat; echo "on $HOSTNAME" >&2; exit 4'], out.stream, err.stream, stdin, false, (s) => (status = s));
    stdin.end('typed in\n');
    await new Promise((resolve) => ws.once('close', resolve));
    expect([out.text(), err.text()]).toEqual(['typed in\n', 'on shell\n']);
    expect(status).toMatchObject({ status: 'Failure', reason: 'NonZeroExitCode', details: { causes: [{ reason: 'ExitCode', message: '4' }] } });
    let ok: V1Status | undefined;
    const second = await new Exec(kc).exec('default', 'shell', 'fn', 'pwd', out.stream, null, null, false, (s) => (ok = s));
    await new Promise((resolve) => second.once('close', resolve));
    expect(ok?.status).toBe('Success');
  });

  it.runIf(existsSync('/usr/bin/script'))('Exec with a tty: the command on a terminal of the client\'s size, and of a new size', async () => {
    const term = await terminalSession(kc, 'shell', 'fn', ['sh'], { rows: 33, columns: 101 });
    try {
      term.type('stty size\n');
      await until('the client\'s size', () => /33 101\r\n/.test(term.output()));
      term.resize(40, 120);
      // Asked until the shell sees it (the size reaches the pty a moment after the event).
      await until('the new size', () => (term.type('stty size\n'), /40 120\r\n/.test(term.output())), { everyMs: 200 });
      term.type('exit 5\n');
      await until('the exit code in the Status', () => term.status());
      expect(term.status()).toMatchObject({ status: 'Failure', details: { causes: [{ reason: 'ExitCode', message: '5' }] } });
    } finally {
      term.close();
    }
  });

  it('Attach: the container\'s stdin and stdout', async () => {
    const out = collect();
    const stdin = new PassThrough();
    const ws = await new Attach(kc).attach('default', 'echo', 'fn', out.stream, null, stdin, false);
    stdin.write('first\n');
    await until('the echo', () => out.text().includes('echo: first\n') || undefined);
    ws.close();
  });
});
