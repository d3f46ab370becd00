/**
 * A pod's sandbox, what the kubelet asks the runtime for before any container: the pod's IP, its
 * directory and its volumes (a failure is a FailedMount event and another try later, the pod staying
 * ContainerCreating), and service account tokens kept fresh while the pod lives.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { PodPlace } from '../pods/downward.js';
import { withServiceAccount } from './mounts.js';
import type { PodSources } from '../sources.js';
import type { Container, Pod, VolumeMount } from '../types.js';
import { setUpVolumes, VolumeError, writeToken, type TokenFile } from './volumes.js';

export interface Sandbox {
  volumes: ReadonlyMap<string, string>;
  mounts(c: Container): VolumeMount[];
  close(): void;
}

export type SandboxResult = { ok: true; sandbox: Sandbox } | { ok: false; message: string };

/** Refreshes token files before they expire; errors leave the old token (retried at the next tick). */
function refresher(tokens: TokenFile[], pod: () => Pod, sources: PodSources): () => void {
  if (tokens.length === 0) return () => undefined;
  const timer = setInterval(() => {
    for (const t of tokens) if (Date.now() >= t.refreshAt) void writeToken(t, pod(), sources).catch(() => undefined);
  }, 60_000);
  timer.unref();
  return () => clearInterval(timer);
}

export async function openSandbox(pod: () => Pod, podDir: string, sources: PodSources, place: PodPlace): Promise<SandboxResult> {
  const { volumes, mounts } = withServiceAccount(pod());
  mkdirSync(podDir, { recursive: true, mode: 0o750 });
  try {
    const set = await setUpVolumes(pod(), volumes, join(podDir, 'volumes'), sources, place);
    const stop = refresher(set.tokens, pod, sources);
    return { ok: true, sandbox: { volumes: set.paths, mounts, close: stop } };
  } catch (err) {
    if (err instanceof VolumeError) return { ok: false, message: err.message };
    return { ok: false, message: `MountVolume.SetUp failed: ${(err as Error).message}` };
  }
}

/** The pod's directory, volumes and mount roots; logs stay until the pod object is gone. */
export function removePodDir(podDir: string): void {
  rmSync(podDir, { recursive: true, force: true });
}
