/**
 * `kubectl logs` semantics end to end: the API server's pods/log asks the node agent's kubelet
 * server (TLS, the API server's client certificate, authorized by SubjectAccessReview), which reads
 * the container's CRI log file: tailLines, timestamps, sinceSeconds / sinceTime, limitBytes, follow
 * (new lines as they are written, the stream ending with the container), previous, and the
 * kubelet's and kube-apiserver's refusals.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { KubeApiError, Resources, type KubeClient } from '@func/kube-client';
import { isReady, podUntil, useNodeCluster } from '../support/node-fixtures.js';
import { until } from '../../testing/src/poll.js';

const current = useNodeCluster();
let kube: KubeClient;
let ip: string;

const say = (msg: string) => fetch(`http://${ip}:8080/log?msg=${encodeURIComponent(msg)}`).then((r) => r.text());
const read = async (opts: Parameters<KubeClient['logs']>[1] = {}, pod = 'talker') => (await (await kube.logs(pod, opts)).setEncoding('utf8').toArray()).join('');
const refusal = (opts: Parameters<KubeClient['logs']>[1], pod = 'talker') => kube.logs(pod, opts).then(() => undefined, (e: KubeApiError) => [e.code, e.reason, e.status?.message]);

beforeAll(async () => {
  kube = current.kube;
  await kube.create(Resources.pods, { metadata: { name: 'talker' }, spec: { containers: [{ name: 'fn', image: 'probe:v1' }] } });
  ip = (await podUntil(kube, 'talker', 'Ready', isReady)).status.podIP;
  await until('the function answers', () => say('line 1').catch(() => undefined));
  for (let i = 2; i <= 5; i++) await say(`line ${i}`);
}, 60_000);

describe('pods/log through the node agent', () => {
  it('reads the container\'s output, the last N lines, with timestamps, and up to a byte limit', async () => {
    const all = await until('five lines', async () => ((await read()).match(/^line \d$/gm)?.length === 5 ? read() : undefined));
    expect(all).toMatch(/line 1\nline 2\nline 3\nline 4\nline 5\n$/);
    expect(await read({ tailLines: 2 })).toBe('line 4\nline 5\n');
    expect(await read({ tailLines: 0 })).toBe('');
    const stamped = await read({ tailLines: 1, timestamps: true });
    expect(stamped).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z line 5\n$/);
    expect(await read({ tailLines: 2, limitBytes: 8 })).toBe('line 4\nl');
  });

  it('skips lines older than sinceSeconds or sinceTime', async () => {
    const stamped = await read({ timestamps: true, tailLines: 1 });
    const last = Date.parse(stamped.slice(0, stamped.indexOf(' ')));
    await new Promise((r) => setTimeout(r, 1100));
    await say('fresh');
    expect(await read({ sinceSeconds: 1 })).toBe('fresh\n');
    const since = new Date(last + 1).toISOString();
    const path = `/api/v1/namespaces/default/pods/talker/log?sinceTime=${encodeURIComponent(since)}`;
    expect((await kube.raw({ method: 'GET', path, accept: '*/*' })).body).toBe('fresh\n');
  });

  it('follows: lines written later arrive on the open stream', async () => {
    const abort = new AbortController();
    const stream = await kube.logs('talker', { follow: true, tailLines: 0, signal: abort.signal });
    let got = '';
    stream.setEncoding('utf8').on('data', (c: string) => (got += c));
    stream.on('error', () => undefined);
    await say('followed 1');
    await say('followed 2');
    await until('both followed lines', () => got === 'followed 1\nfollowed 2\n');
    abort.abort();
  });

  it('serves the previous instance after a crash, and ends a follow when the container ends', async () => {
    const abort = new AbortController();
    const stream = await kube.logs('talker', { follow: true, tailLines: 1, signal: abort.signal });
    const ended = new Promise<string>((resolve) => {
      let got = '';
      stream.setEncoding('utf8').on('data', (c: string) => (got += c)).on('end', () => resolve(got)).on('error', () => resolve(got));
    });
    await say('last words');
    await fetch(`http://${ip}:8080/crash`).catch(() => undefined);
    expect(await ended).toMatch(/last words\n$/);
    await podUntil(kube, 'talker', 'restarted', (p) => p.status.containerStatuses[0].restartCount === 1 && isReady(p), 30_000);
    expect(await read({ previous: true })).toMatch(/line 1\n[\s\S]*last words\n$/);
    expect(await read()).not.toContain('last words');
    abort.abort();
  });

  it('answers as kube-apiserver and the kubelet do when there is nothing to read', async () => {
    expect(await refusal({ container: 'nope' })).toEqual([400, 'BadRequest', 'container nope is not valid for pod talker']);
    expect(await refusal({ tailLines: -1 })).toEqual([422, 'Invalid', 'PodLogOptions "talker" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0']);
    expect(await refusal({ limitBytes: 0 })).toEqual([422, 'Invalid', 'PodLogOptions "talker" is invalid: limitBytes: Invalid value: 0: must be greater than 0']);
    await kube.create(Resources.pods, { metadata: { name: 'fresh' }, spec: { containers: [{ name: 'fn', image: 'probe:v1' }] } });
    await podUntil(kube, 'fresh', 'Ready', isReady);
    expect(await refusal({ previous: true }, 'fresh')).toEqual([400, 'BadRequest', 'previous terminated container "fn" in pod "fresh" not found']);
    await kube.create(Resources.pods, { metadata: { name: 'waiting' }, spec: { containers: [{ name: 'fn', image: 'probe:v1', env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 'absent', key: 'k' } } }] }] } });
    await podUntil(kube, 'waiting', 'CreateContainerConfigError', (p) => p.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CreateContainerConfigError');
    expect(await refusal({}, 'waiting')).toEqual([400, 'BadRequest', 'container "fn" in pod "waiting" is waiting to start: CreateContainerConfigError']);
  });

  it('answers exec and attach asked without an upgrade with kube-apiserver\'s 400 (they are served through the agent: test/nodes/exec-*.test.ts)', async () => {
    for (const sub of ['exec', 'attach']) {
      const r = await kube.raw({ method: 'POST', path: `/api/v1/namespaces/default/pods/talker/${sub}?command=ls&stdout=true` }).then(() => undefined, (e: KubeApiError) => [e.code, e.status?.message]);
      expect(r).toEqual([400, 'Upgrade request required']);
    }
  });
});
