/**
 * Pod status writes, as the kubelet's status manager makes them: one writer per pod, at most one
 * request in flight, the latest status wins (intermediate ones are skipped), an unchanged status is
 * not sent again, a failed write is retried. Each write is a JSON merge patch of `status` through
 * pods/status carrying the pod's uid, so a write never lands on a newer pod of the same name.
 */
import { isNotFound, type KubeClient, KubeApiError, Resources } from '@func/kube-client';
import { isDeepStrictEqual } from 'node:util';
import type { Pod, PodStatus } from './types.js';

export class StatusWriter {
  private wanted?: PodStatus;
  private sent?: PodStatus;
  private flight?: Promise<void>;
  private gone = false;

  constructor(private readonly kube: KubeClient, private readonly pod: Pod, private readonly fieldManager: string, private readonly log: (e: Record<string, unknown>) => void) {}

  /** Asks for `status` to be written; resolves once it (or a later one) is. */
  write(status: PodStatus): Promise<void> {
    this.wanted = status;
    return (this.flight ??= this.drain().finally(() => (this.flight = undefined)));
  }

  /** Resolves when nothing is left to write. */
  flushed(): Promise<void> {
    return this.flight ?? Promise.resolve();
  }

  private async drain(): Promise<void> {
    for (let failures = 0; !this.gone && this.wanted && !isDeepStrictEqual(this.wanted, this.sent);) {
      const status = this.wanted;
      const { name = '', namespace, uid } = this.pod.metadata;
      try {
        await this.kube.patch(Resources.pods, name, { metadata: { uid }, status }, { namespace, type: 'merge', subresource: 'status', fieldManager: this.fieldManager });
        this.sent = status;
        failures = 0;
      } catch (err) {
        // Gone, or a newer pod of the same name (uid mismatch): nothing left to report for this one.
        if (isNotFound(err) || (err instanceof KubeApiError && err.code === 422)) return void (this.gone = true);
        failures++;
        this.log({ level: 'warn', msg: 'pod status not written', pod: `${namespace}/${name}`, error: (err as Error).message });
        await new Promise((r) => setTimeout(r, Math.min(200 * 2 ** failures, 10_000)).unref());
      }
    }
  }
}
