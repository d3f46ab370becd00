/**
 * What the oci runtime's tests share: whether this machine can run it (and why not), a busybox
 * image built here from Debian's busybox-static and pushed to a real `docker-registry` on port 0,
 * a pod CIDR of private addresses for the test cluster, and exec on a pod's container through the
 * node's runtime.
 */
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { buildImage, ImageLayout, pushImage, type TarEntry } from '@func/oci';
import { ociSupport } from '../../src/node/runtime/oci/host.js';
import type { OciRuntime } from '../../src/node/runtime/oci/runtime.js';
import type { NodeAgent } from '../../src/node/agent.js';
import { startRegistry, type RunningRegistry } from '../../../oci/test/registry-server.js';
import type { Obj } from './node-fixtures.js';

const support = ociSupport();
/** Why the oci tests cannot run here, or undefined when they can. */
export const ociMissing = 'missing' in support ? support.missing.join('; ') : undefined;

const Applets = ['sh', 'id', 'cat', 'echo', 'sleep', 'wget', 'ls', 'grep', 'wc', 'touch', 'hostname', 'nslookup', 'tty', 'stty'];

/** busybox-static as an image (root user, Cmd sh) in an OCI layout, tagged `busybox:test`. */
export async function busyboxLayout(layoutDir: string): Promise<ImageLayout> {
  const entries: TarEntry[] = [
    { path: 'bin/', type: 'dir' },
    { path: 'bin/busybox', type: 'file', mode: 0o755, data: readFileSync('/bin/busybox') },
    ...Applets.map((a): TarEntry => ({ path: `bin/${a}`, type: 'symlink', linkname: 'busybox' })),
    { path: 'etc/', type: 'dir' },
    { path: 'etc/passwd', type: 'file', data: Buffer.from('root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n') },
    { path: 'etc/group', type: 'file', data: Buffer.from('root:x:0:\nnogroup:x:65534:\n') },
    { path: 'tmp/', type: 'dir', mode: 0o1777 },
    { path: 'root/', type: 'dir', mode: 0o700 },
  ];
  const layout = await ImageLayout.open(layoutDir);
  await buildImage(layout, { layers: [{ entries, createdBy: 'busybox-static' }], config: { Cmd: ['sh'], Env: ['PATH=/bin'] }, tag: 'busybox:test' });
  return layout;
}

/** busybox-static as an image (root user, Cmd sh) pushed to a fresh registry: the registry and the reference. */
export async function busyboxInRegistry(layoutDir: string): Promise<{ registry: RunningRegistry; ref: string }> {
  const layout = await busyboxLayout(layoutDir);
  const registry = await startRegistry();
  const ref = `${registry.host}/test/busybox:1`;
  await pushImage(layout, 'busybox:test', ref);
  return { registry, ref };
}

/** The node's oci runtime. */
export const ociOf = (agent: NodeAgent): OciRuntime => agent.handlers.find((h) => h.runtime.name === 'oci')!.runtime as OciRuntime;

/** A command in the pod's first container, through the runtime: exit code, stdout, stderr. */
export async function execIn(agent: NodeAgent, pod: Obj, cmd: string[]): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const id = String(pod.status.containerStatuses[0].containerID).replace(/^[a-z]+:\/\//, '');
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const sink = (into: Buffer[]) => new Writable({ write: (chunk: Buffer, _enc, done) => (into.push(chunk), done()) });
  const { exitCode } = await ociOf(agent).exec!(id, cmd, { stdout: sink(out), stderr: sink(err), tty: false });
  return { exitCode, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() };
}
