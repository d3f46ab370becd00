/**
 * What a user does with kubectl to a function pod in an OCI sandbox (`serve --container-runtime
 * oci`), as root where runc is: `exec` (a non-root uid), `exec -i` with input, `cp` both ways (the
 * host's tar in the container, beside its Node.js), `attach` to its output, `port-forward`, and
 * `debug` with a busybox image pulled from a real docker-registry.
 */
import { spawn } from 'node:child_process';
import { KubeConfig } from '@kubernetes/client-node';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningRegistry } from '../../../oci/test/registry-server.js';
import { functionImage, probeFunction } from '../support/node-fixtures.js';
import { busyboxInRegistry, ociMissing } from '../support/oci-fixtures.js';
import { terminalSession } from '../support/terminal-session.js';
import { haveKubectl, kubectlBin, startServe, stopServe, type ServeProcess } from '../serve/process.js';
import { until } from '../../testing/src/poll.js';

describe.skipIf(ociMissing || !haveKubectl)(`kubectl on a function pod in an OCI sandbox${ociMissing ? ` (skipped: ${ociMissing})` : ''}`, () => {
  let s: ServeProcess;
  let registry: RunningRegistry;
  let busybox: string;
  const env = () => ({ PATH: process.env.PATH, HOME: s.dir, KUBECONFIG: join(s.dir, 'data', 'kubeconfig.yaml'), KUBECACHEDIR: join(s.dir, 'cache') });
  /** kubectl with `input` on its stdin, until it exits. */
  const withInput = (input: string, ...args: string[]) => new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(kubectlBin, args, { env: env() });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
  /** A kubectl that runs until stopped, its output so far. */
  const running = (...args: string[]) => {
    const child = spawn(kubectlBin, args, { env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    return { output: () => out, stop: () => child.kill() };
  };
  const ok = async (...args: string[]) => {
    const r = await s.kubectl(...args);
    expect(r.code, `kubectl ${args.join(' ')}: ${r.stderr}`).toBe(0);
    return r.stdout;
  };

  beforeAll(async () => {
    s = await startServe(['--container-runtime', 'oci', '--no-broker']);
    ({ registry, ref: busybox } = await busyboxInRegistry(join(s.dir, 'scratch')));
    await functionImage(join(s.dir, 'data', 'images'), probeFunction, 'probe:v1');
    await ok('run', 'fn', '--image=probe:v1', '--port=8080');
    await until('fn Ready', async () => (await s.kubectl('get', 'pod', 'fn', '-o', 'jsonpath={.status.containerStatuses[0].ready}')).stdout === 'true', { timeoutMs: 90_000 });
  }, 180_000);
  afterAll(async () => {
    await registry?.stop();
    await stopServe(s);
  }, 60_000);

  it('exec runs as the function\'s non-root uid; exec -i takes input', async () => {
    expect(await ok('exec', 'fn', '--', 'node', '-e', 'console.log(process.getuid(), process.getgid())')).toBe('65532 65532\n');
    const echoed = await withInput('through stdin\n', 'exec', '-i', 'fn', '--', 'node', '-e', 'process.stdin.pipe(process.stdout)');
    expect(echoed).toMatchObject({ code: 0, stdout: 'through stdin\n' });
  }, 60_000);

  it('cp copies a file into the pod and back out', async () => {
    const local = join(s.dir, 'in.txt');
    writeFileSync(local, 'copied in\nand out\n');
    await ok('cp', local, 'fn:/tmp/in.txt');
    expect(await ok('exec', 'fn', '--', 'node', '-e', 'process.stdout.write(require("fs").readFileSync("/tmp/in.txt", "utf8"))')).toBe('copied in\nand out\n');
    const back = join(s.dir, 'back.txt');
    await ok('cp', 'fn:/tmp/in.txt', back);
    expect(readFileSync(back, 'utf8')).toBe('copied in\nand out\n');
  }, 60_000);

  it('port-forward reaches the function, and attach streams what it writes', async () => {
    const forward = running('port-forward', 'pod/fn', ':8080');
    const attach = running('attach', 'fn');
    try {
      const port = await until('port-forward listening', () => /Forwarding from 127\.0\.0\.1:(\d+)/.exec(forward.output())?.[1], { timeoutMs: 30_000 });
      expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe('hello from fn');
      // What the function logs from now on reaches the attached client.
      await until('attach streaming the function\'s output', async () => {
        await fetch(`http://127.0.0.1:${port}/log?msg=seen-by-attach`);
        return attach.output().includes('seen-by-attach');
      }, { timeoutMs: 30_000, everyMs: 500 });
    } finally {
      forward.stop();
      attach.stop();
    }
  }, 60_000);

  it('exec -t runs the command on a terminal of the container\'s own: client-node\'s Exec with its sizes, kubectl on a terminal', async () => {
    await ok('run', 'term', `--image=${busybox}`, '--', 'sleep', '3600');
    await until('term Running', async () => (await s.kubectl('get', 'pod', 'term', '-o', 'jsonpath={.status.containerStatuses[0].ready}')).stdout === 'true', { timeoutMs: 60_000 });
    const kc = new KubeConfig();
    kc.loadFromFile(join(s.dir, 'data', 'kubeconfig.yaml'));
    // Lines end in CRLF, as on a terminal (one written before runc has set up the container's terminal may end in CR CR LF, which a terminal shows the same).
    const term = await terminalSession(kc, 'term', 'term', ['sh'], { rows: 33, columns: 101 });
    try {
      term.type('tty; stty size\n');
      await until('the shell on a terminal of its own, of the client\'s size', () => /\/dev\/pts\/\d+\r+\n33 101\r+\n/.test(term.output()));
      term.resize(40, 120);
      // Asked until the shell sees it (the size reaches the pty a moment after the event).
      await until('the new size', () => (term.type('stty size\n'), /40 120\r+\n/.test(term.output())), { everyMs: 200 });
      term.type('exit 7\n');
      await until('the exit code in the Status', () => term.status());
      expect(term.status()).toMatchObject({ status: 'Failure', reason: 'NonZeroExitCode', details: { causes: [{ reason: 'ExitCode', message: '7' }] } });
    } finally {
      term.close();
    }
    // kubectl needs a terminal of its own (and -i) for -t: script gives it one.
    const onTerminal = await new Promise<string>((resolve) => {
      const child = spawn('script', ['-q', '-e', '-c', `${kubectlBin} exec -it term -- tty`, '/dev/null'], { env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
      let text = '';
      child.stdout.on('data', (d: Buffer) => (text += d.toString()));
      child.once('close', () => resolve(text));
    });
    expect(onTerminal).toMatch(/\/dev\/pts\/\d+\r+\n/);
    // Without -t the same command has no terminal.
    expect(await s.kubectl('exec', 'term', '--', 'tty')).toMatchObject({ code: 1, stdout: 'not a tty\n' });
  }, 90_000);

  it('debug adds an ephemeral container from a registry\'s busybox image to the running pod', async () => {
    await ok('debug', 'fn', `--image=${busybox}`, '-c', 'dbg', '--', 'sh', '-c', 'echo debug ran in $(hostname); sleep 600');
    await until('the debug container\'s output', async () => (await s.kubectl('logs', 'fn', '-c', 'dbg')).stdout.includes('debug ran in fn'), { timeoutMs: 60_000, everyMs: 500 });
    const pod = JSON.parse(await ok('get', 'pod', 'fn', '-o', 'json'));
    expect(pod.status.ephemeralContainerStatuses?.[0]).toMatchObject({ name: 'dbg', state: { running: {} } });
  }, 90_000);
});
