/**
 * kube-aggregator's availability controller, one APIService at a time: Local ones are always
 * available; a remote one is when its Service, port and an endpoint exist and its discovery document
 * (`/apis/<group>/<version>`) answers 2xx within 5 s to the front proxy acting as
 * `system:kube-aggregator`. The condition keeps its lastTransitionTime while its status holds.
 */
import { request as httpRequest } from 'node:http';
import { connect as tlsConnect } from 'node:tls';
import type { Duplex } from 'node:stream';
import type { KubeObject } from '../api/meta.js';
import type { Services } from '../registry/definition.js';
import { arr, obj, spec, str } from '../registry/kinds/common.js';
import { dialFailure } from '../streaming/splice.js';
import { locateBackend, type Backend } from './backend.js';
import { GroupHeader, UserHeader, type FrontProxy } from './front-proxy.js';
import { isLocal } from './local.js';

export interface Availability {
  status: 'True' | 'False';
  reason: string;
  message: string;
}

const DiscoveryTimeoutMs = 5000;

/** `signal`: the check is given up (the server stops); its answer is then not to be written. */
export async function checkAvailability(apiService: KubeObject, services: Pick<Services, 'find' | 'podNetwork'>, frontProxy: FrontProxy | undefined, signal?: AbortSignal): Promise<Availability> {
  if (isLocal(apiService)) return { status: 'True', reason: 'Local', message: 'Local APIServices are always available' };
  const located = await locateBackend(apiService, services, frontProxy);
  if ('unavailable' in located) return { status: 'False', ...located.unavailable };
  const s = spec(apiService);
  const ref = obj(s.service);
  const path = `/apis/${str(s.group)}/${str(s.version)}`;
  const url = `https://${str(ref.name)}.${str(ref.namespace)}.svc:${Number(ref.port ?? 443)}${path}`;
  const failed = await discoveryFailure(located.backend, path, signal);
  if (failed === undefined) return { status: 'True', reason: 'Passed', message: 'all checks passed' };
  return { status: 'False', reason: 'FailedDiscoveryCheck', message: typeof failed === 'number' ? `bad status from ${url}: ${failed}` : `failing or missing response from ${url}: ${failed}` };
}

/** undefined: a 2xx answer; a number: the status otherwise; a string: why no answer came. */
async function discoveryFailure(backend: Backend, path: string, signal: AbortSignal | undefined): Promise<number | string | undefined> {
  let socket: Duplex;
  try {
    socket = await backend.endpoint.dial();
  } catch (err) {
    return dialFailure(err);
  }
  return new Promise((resolve) => {
    const done = (answer: number | string | undefined) => (clearTimeout(timer), secure.destroy(), socket.destroy(), resolve(answer));
    const timer = setTimeout(() => done('context deadline exceeded'), DiscoveryTimeoutMs);
    signal?.addEventListener('abort', () => done('context canceled'), { once: true });
    const secure = tlsConnect({ ...backend.tls, socket });
    secure.once('error', (err) => done(tlsFailure(err)));
    const request = httpRequest({
      method: 'GET', path, createConnection: () => secure as never,
      headers: { accept: 'application/json', [UserHeader]: 'system:kube-aggregator', [GroupHeader]: 'system:masters', connection: 'close' },
    });
    request.once('error', (err) => done(tlsFailure(err)));
    request.once('response', (res) => {
      res.resume();
      const code = res.statusCode ?? 0;
      done(code >= 200 && code < 300 ? undefined : code);
    });
    request.end();
  });
}

const tlsFailure = (err: unknown): string => {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && /CERT|SELF_SIGNED|UNABLE_TO|ERR_TLS/.test(code) ? 'tls: failed to verify certificate' : dialFailure(err);
};

/** The status with its Available condition set; undefined when nothing changes. */
export function withAvailability(apiService: KubeObject, found: Availability, now: string): KubeObject['status'] | undefined {
  const conditions = arr(obj(apiService.status).conditions).map(obj);
  const old = conditions.find((c) => c.type === 'Available');
  if (old && old.status === found.status && old.reason === found.reason && old.message === found.message) return undefined;
  const lastTransitionTime = old && old.status === found.status ? old.lastTransitionTime : now;
  const condition = { type: 'Available', ...found, lastTransitionTime };
  return { ...obj(apiService.status), conditions: [...conditions.filter((c) => c.type !== 'Available'), condition] };
}
