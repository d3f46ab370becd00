/**
 * `cluster-api serve` as the Knative serving tests run it: memory storage, pod addresses of its
 * own, the probe function's image as `probe:v1`, the serving kinds served; its gateway's URL,
 * client-node's KubeConfig for it, requests to the gateway with a Route's Host, and kubectl that
 * must succeed.
 */
import { request } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'vitest';
import { startServe, type ServeProcess } from '../serve/process.js';
import { functionImage, probeFunction } from './node-fixtures.js';
import { ownPodCidr } from '../../../runtime/test/helpers/pod-cidr.js';
import { until } from '../../testing/src/poll.js';

export interface Answer { status: number; body: string }

export interface ServingServe {
  s: ServeProcess;
  gateway: URL;
  kc: KubeConfig;
  /** A request to the gateway with `host` as its Host; with `body`, a POST of it (text/plain). */
  send(host: string, path?: string, body?: string): Promise<Answer>;
  /** kubectl `args`, expected to succeed (its output and, on failure, the serving objects in the message); its stdout. */
  ok(...args: string[]): Promise<string>;
  /** `kubectl apply` of `yaml` (written to `name`.yaml). */
  apply(name: string, yaml: string): Promise<void>;
  /** The ConfigMap `name` in knative-serving (and the namespace) with `data`, applied. */
  knativeConfig(name: string, data: Record<string, string>): Promise<void>;
}

export interface ServingServeOptions {
  /** More of serve's flags (e.g. `--disable-controller-manager`). */
  args?: readonly string[];
  /** Called once serve listens, before the serving kinds are served (e.g. to start the controller manager they wait for). */
  listening?: (s: ServeProcess) => Promise<void>;
}

export async function startServingServe(options: ServingServeOptions = {}): Promise<ServingServe> {
  const env: NodeJS.ProcessEnv = {};
  ownPodCidr(env);
  const s = await startServe(['--storage', 'memory:', '--node-name', 'vm', ...(options.args ?? [])], env);
  await options.listening?.(s);
  const m = /"msg":"listening".*"gateway":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(s.log());
  expect(m, s.log()).not.toBeNull();
  const gateway = new URL(m![1]!);
  await functionImage(join(s.dir, 'data', 'images'), probeFunction, 'probe:v1');
  const kc = new KubeConfig();
  kc.loadFromString(readFileSync(join(s.dir, 'data', 'kubeconfig.yaml'), 'utf8'));
  await until('the serving kinds served', async () => (await s.kubectl('get', 'ksvc')).code === 0, { timeoutMs: 30_000, everyMs: 200 });
  const send = (host: string, path = '/', body?: string) => new Promise<Answer>((resolve, reject) => {
    const headers = { host, ...(body !== undefined && { 'content-type': 'text/plain', 'content-length': String(Buffer.byteLength(body)) }) };
    const req = request({ host: gateway.hostname, port: gateway.port, path, method: body === undefined ? 'GET' : 'POST', headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d)).on('end', () => resolve({ status: res.statusCode!, body: text }));
    });
    req.on('error', reject).end(body);
  });
  const ok = async (...args: string[]) => {
    const r = await s.kubectl(...args);
    const why = r.code === 0 ? '' : (await s.kubectl('get', 'ksvc,rev,deploy,pods', '-o', 'yaml')).stdout;
    expect(r.code, `kubectl ${args.join(' ')}: ${r.stdout}${r.stderr}\n${why}`).toBe(0);
    return r.stdout;
  };
  const apply = async (name: string, yaml: string) => {
    const file = join(s.dir, `${name}.yaml`);
    writeFileSync(file, yaml);
    await ok('apply', '-f', file);
  };
  const knativeConfig = (name: string, data: Record<string, string>) => apply(name, `apiVersion: v1
kind: Namespace
metadata:
  name: knative-serving
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}
  namespace: knative-serving
data:
${Object.entries(data).map(([k, v]) => `  ${k}: ${JSON.stringify(v)}`).join('\n')}
`);
  return { s, gateway, kc, send, ok, apply, knativeConfig };
}
