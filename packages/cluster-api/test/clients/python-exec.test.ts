/**
 * The Python client's `stream` (Debian's python3-kubernetes, WebSocket `v4.channel.k8s.io`) running
 * commands in a function pod through a real API server and node agent: the output, stdin, and the
 * exit code read from the error channel's Status.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { Resources } from '@func/kube-client';
import { isReady, podUntil, privatePodAddresses, useNodeCluster } from '../support/node-fixtures.js';

const python = '/usr/bin/python3';
const current = useNodeCluster(privatePodAddresses());

const script = `
import json, sys
from kubernetes import client
from kubernetes.stream import stream
cfg = client.Configuration()
cfg.host = sys.argv[1]
api = client.CoreV1Api(client.ApiClient(cfg))
out = stream(api.connect_get_namespaced_pod_exec, 'shell', 'default', command=['sh', '-c', 'echo "hello from $HOSTNAME"'], stderr=True, stdin=False, stdout=True, tty=False)
ws = stream(api.connect_get_namespaced_pod_exec, 'shell', 'default', command=['sh', '-c', 'read x; echo "got $x"; exit 5'], stderr=True, stdin=True, stdout=True, tty=False, _preload_content=False)
ws.write_stdin('typed\\n')
ws.run_forever(timeout=20)
print(json.dumps({'out': out, 'stdout': ws.read_stdout(), 'rc': ws.returncode}))
`;

beforeAll(async () => {
  await current.kube.create(Resources.pods, { metadata: { name: 'shell' }, spec: { containers: [{ name: 'fn', image: 'probe:v1' }] } });
  await podUntil(current.kube, 'shell', 'Ready', isReady);
}, 60_000);

describe.runIf(existsSync(python))('the Python client\'s exec stream', () => {
  it('runs a command, passes stdin, and reads the exit code', async () => {
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(python, ['-c', script, current.cluster.server.url], { env: { PATH: process.env.PATH, HOME: current.cluster.dir }, timeout: 60_000 }, (err, out, errOut) => (err ? reject(new Error(`${err.message}: ${errOut}`)) : resolve(out))),
    );
    expect(JSON.parse(stdout)).toEqual({ out: 'hello from shell\n', stdout: 'got typed\n', rc: 5 });
  }, 60_000);
});
