/**
 * The `serve` the serving tests drive: the built CLI on memory storage with pod addresses of this
 * run's own (another serve on this machine hands out the default block too), the gateway's URL from
 * its `listening` line, the probe function's image as `probe:v1` on its node, and a client-node
 * KubeConfig for it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'vitest';
import { startServe, type ServeProcess } from '../serve/process.js';
import { functionImage, probeFunction } from '../support/node-fixtures.js';
import { ownPodCidr } from '../../../runtime/test/helpers/pod-cidr.js';

export async function startServingServe(): Promise<{ s: ServeProcess; gateway: URL; kc: KubeConfig }> {
  const env: NodeJS.ProcessEnv = {};
  ownPodCidr(env);
  const s = await startServe(['--storage', 'memory:', '--node-name', 'vm'], env);
  const m = /"msg":"listening".*"gateway":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(s.log());
  expect(m, s.log()).not.toBeNull();
  await functionImage(join(s.dir, 'data', 'images'), probeFunction, 'probe:v1');
  const kc = new KubeConfig();
  kc.loadFromString(readFileSync(join(s.dir, 'data', 'kubeconfig.yaml'), 'utf8'));
  return { s, gateway: new URL(m![1]!), kc };
}

/** A ConfigMap of Knative Serving's (`config-autoscaler`, `config-domain`…) in `knative-serving`, with that namespace, as YAML for `kubectl apply`. */
export const servingConfig = (name: string, data: Record<string, string>): string => `apiVersion: v1
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
`;
