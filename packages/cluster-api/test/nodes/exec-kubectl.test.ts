/**
 * `kubectl exec`, `exec -i`, `exec -it` (kubectl on a terminal), `cp` both ways and `attach` (the
 * real kubectl 1.32) against a real API server and node agent running function pods as processes:
 * over the WebSocket `v5.channel.k8s.io`
 * kubectl speaks by default and over its SPDY fallback (KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false),
 * the API server splicing the upgraded connection to the agent's kubelet server.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Resources, type KubeClient } from '@func/kube-client';
import { getText, isReady, podUntil, privatePodAddresses, useNodeCluster } from '../support/node-fixtures.js';
import { until } from '../../testing/src/poll.js';

const kubectlBin = '/usr/bin/kubectl';
const current = useNodeCluster(privatePodAddresses());
let kube: KubeClient;
let work: string;
let env: NodeJS.ProcessEnv;
let ip: string;

interface Run {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

/** kubectl with `input` on its stdin (none: stdin closed at once). */
function kubectl(args: readonly string[], input?: Buffer | string, extraEnv: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(kubectlBin, [`--server=${current.cluster.server.url}`, ...args], { env: { ...env, ...extraEnv } });
    const out: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('error', reject);
    child.once('close', (code) => (clearTimeout(timer), resolve({ code, stdout: Buffer.concat(out), stderr })));
    child.stdin.end(input);
  });
}

beforeAll(async () => {
  kube = current.kube;
  work = mkdtempSync(join(tmpdir(), 'exec-kubectl-'));
  env = { PATH: process.env.PATH, HOME: work, KUBECACHEDIR: join(work, 'cache') };
  await kube.create(Resources.pods, { metadata: { name: 'shell' }, spec: { containers: [{ name: 'fn', image: 'probe:v1' }] } });
  ip = (await podUntil(kube, 'shell', 'Ready', isReady)).status.podIP;
  await until('the function answers', () => getText(ip, '/').catch(() => undefined));
}, 60_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe.runIf(existsSync(kubectlBin))('kubectl exec, cp and attach on a function pod', () => {
  for (const [transport, extra] of [['WebSocket v5', {}], ['SPDY', { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: 'false' }]] as const) {
    it(`exec runs in the container's environment and passes its exit code (${transport})`, async () => {
      const r = await kubectl(['exec', 'shell', '--', 'sh', '-c', 'echo $HOSTNAME; echo to-stderr >&2; exit 3'], undefined, extra);
      expect(r.stdout.toString()).toBe('shell\n');
      expect(r.stderr).toContain('to-stderr\n');
      expect(r.stderr).toContain('command terminated with exit code 3');
      expect(r.code).toBe(3);
      const ok = await kubectl(['exec', 'shell', '-c', 'fn', '--', 'sh', '-c', 'echo $FUNC_HOST'], undefined, extra);
      expect([ok.code, ok.stdout.toString()]).toEqual([0, `${ip}\n`]);
    });

    it(`exec -i passes stdin through to its end (${transport})`, async () => {
      const r = await kubectl(['exec', '-i', 'shell', '--', 'sh', '-c', 'cat; echo done'], 'line one\nline two\n', extra);
      expect([r.code, r.stdout.toString()]).toEqual([0, 'line one\nline two\ndone\n']);
    });
  }

  for (const [transport, extra] of [['WebSocket v5', {}], ['SPDY', { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: 'false' }]] as const) {
    it(`cp copies a file into the container and back, byte for byte (${transport})`, async () => {
      const bytes = randomBytes(300 * 1024);
      const local = join(work, 'in.bin');
      writeFileSync(local, bytes);
      const inPod = mkdtempSync(join(tmpdir(), 'exec-cp-'));
      try {
        const up = await kubectl(['cp', local, `shell:${inPod}/copied.bin`], undefined, extra);
        expect(up.code, up.stderr).toBe(0);
        const check = await kubectl(['exec', 'shell', '--', 'sh', '-c', `wc -c < ${inPod}/copied.bin`]);
        expect(check.stdout.toString().trim()).toBe(String(bytes.length));
        const back = join(work, 'back.bin');
        const down = await kubectl(['cp', `shell:${inPod}/copied.bin`, back], undefined, extra);
        expect(down.code, down.stderr).toBe(0);
        expect(readFileSync(back).equals(bytes)).toBe(true);
      } finally {
        rmSync(inPod, { recursive: true, force: true });
      }
    });
  }

  it.runIf(existsSync('/usr/bin/script'))('exec -it from a terminal: the command gets a terminal and its exit code passes', async () => {
    // kubectl itself on a terminal (util-linux script), so that -t is honoured.
    const line = [kubectlBin, `--server=${current.cluster.server.url}`, 'exec', '-it', 'shell', '--', 'sh', '-c', "'test -t 0 && echo on-a-tty; exit 4'"].join(' ');
    const r = await new Promise<{ code: number | null; out: string }>((resolve, reject) => {
      const child = spawn('/usr/bin/script', ['-q', '-e', '-c', line, '/dev/null'], { env: { ...env, SHELL: '/bin/sh' } });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.once('error', reject);
      child.once('close', (code) => (clearTimeout(timer), resolve({ code, out })));
      child.stdin.end();
    });
    expect(r.out).toContain('on-a-tty\r\n');
    expect(r.code).toBe(4);
  });

  it('attach shows what the running process writes', async () => {
    const child = spawn(kubectlBin, [`--server=${current.cluster.server.url}`, 'attach', 'shell', '-c', 'fn'], { env });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    try {
      await until('attached output', async () => {
        await getText(ip, `/log?msg=${encodeURIComponent('seen by attach')}`);
        return out.includes('seen by attach') || undefined;
      });
    } finally {
      child.kill('SIGTERM');
    }
  });
});
