/** kube-client's event recorder writing through an ApiClient (in-process or over HTTP): events as that client's identity. */
import type { EventSink } from '@func/kube-client';
import type { KubeObject } from '../api/meta.js';
import { inNamespace } from '../controllers/shared.js';
import type { ApiClient } from './interface.js';

export const apiEventSink = (client: ApiClient): EventSink => {
  const events = () => client.find('', 'v1', 'events');
  return {
    create: async (namespace, event) => events()?.create(inNamespace(namespace), event as unknown as KubeObject),
    patch: async (namespace, name, patch) => events()?.patch(inNamespace(namespace), name, 'merge', patch),
  };
};
