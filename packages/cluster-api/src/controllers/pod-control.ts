/**
 * kube-controller-manager's RealPodControl: pods created and deleted on behalf of an owner, each
 * recorded as an Event on the owner (`SuccessfulCreate` "Created pod: web-7d4b9-x2x9q",
 * `FailedCreate` "Error creating: …", `SuccessfulDelete`, `FailedDelete`), and what was written
 * handed to the pod cache at once.
 */
import type { KubeObject } from '../api/meta.js';
import { isApiError } from '../api/errors.js';
import type { ObjectCache } from './cache.js';
import { errorText, namespaceTerminating } from './context.js';
import type { EventRecorder } from '@func/kube-client';
import { inNamespace } from './shared.js';

export class PodControl {
  constructor(
    private readonly pods: ObjectCache,
    private readonly recorder: EventRecorder,
  ) {}

  async create(owner: KubeObject, pod: KubeObject): Promise<KubeObject> {
    try {
      const { object } = await this.pods.store.create(inNamespace(owner.metadata.namespace), pod);
      this.pods.observe(object);
      this.recorder.event(owner, 'Normal', 'SuccessfulCreate', `Created pod: ${object.metadata.name}`);
      return object;
    } catch (err) {
      if (!namespaceTerminating(err)) this.recorder.event(owner, 'Warning', 'FailedCreate', `Error creating: ${errorText(err)}`);
      throw err;
    }
  }

  /** Deletes `pod` (its uid as precondition); a pod already gone counts as deleted. */
  async delete(owner: KubeObject, pod: KubeObject): Promise<void> {
    try {
      const written = await this.pods.store.delete(inNamespace(pod.metadata.namespace), pod.metadata.name!, { preconditions: { uid: pod.metadata.uid } });
      this.pods.observeDelete(written.object, written.deleted);
      this.recorder.event(owner, 'Normal', 'SuccessfulDelete', `Deleted pod: ${pod.metadata.name}`);
    } catch (err) {
      if (isApiError(err) && (err.code === 404 || err.code === 409)) return;
      this.recorder.event(owner, 'Warning', 'FailedDelete', `Error deleting: ${errorText(err)}`);
      throw err;
    }
  }
}
