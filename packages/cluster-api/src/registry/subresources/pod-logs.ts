/**
 * pods/{name}/log for a pod bound to a node, as kube-apiserver's LogREST does it: PodLogOptions
 * checked (ValidatePodLogOptions: 422 with causes), then the node's kubelet asked for
 * `/containerLogs/{namespace}/{pod}/{container}` with the same options, its answer streamed back.
 * A kubelet refusal becomes the Status GenericHttpResponseChecker makes of it: 400 → BadRequest with
 * the kubelet's text, 404 → NotFound, anything else an internal error.
 */
import type { IncomingMessage } from 'node:http';
import type { KubeObject } from '../../api/meta.js';
import { ApiError, badRequest, invalid, notFound } from '../../api/errors.js';
import type { Services } from '../definition.js';
import type { ConnectHandler } from '../subresource.js';
import { arr, obj, spec, str } from '../kinds/common.js';

const IntOptions = ['tailLines', 'sinceSeconds', 'limitBytes'] as const;
const Passed = ['container', 'follow', 'previous', 'timestamps', 'sinceTime', 'tailLines', 'sinceSeconds', 'limitBytes'];

/** The options as ValidatePodLogOptions checks them; the query string forwarded to the kubelet. */
export function checkLogOptions(name: string, query: URLSearchParams): string {
  const causes: { reason: string; message: string; field: string }[] = [];
  for (const field of IntOptions) {
    const v = query.get(field);
    if (v === null || v === '') continue;
    if (!/^-?\d+$/.test(v)) throw badRequest(`invalid value ${JSON.stringify(v.slice(0, 40))} for ${field}: must be an integer`);
    const n = Number(v);
    if (field === 'tailLines' && n < 0) causes.push({ reason: 'FieldValueInvalid', message: `Invalid value: ${n}: must be greater than or equal to 0`, field });
    if (field !== 'tailLines' && n < 1) causes.push({ reason: 'FieldValueInvalid', message: `Invalid value: ${n}: must be greater than 0`, field });
  }
  const sinceTime = query.get('sinceTime');
  if (sinceTime && Number.isNaN(Date.parse(sinceTime))) throw badRequest(`invalid value ${JSON.stringify(sinceTime.slice(0, 40))} for sinceTime: must be an RFC 3339 time`);
  if (sinceTime && query.get('sinceSeconds')) causes.push({ reason: 'FieldValueForbidden', message: 'Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified', field: '' });
  if (causes.length) throw invalid('PodLogOptions', '', name, causes);
  const out = new URLSearchParams();
  for (const [k, v] of query) if (Passed.includes(k)) out.set(k, v);
  return out.toString();
}

/**
 * A node agent's refusal as a Status (GenericHttpResponseChecker): 400 → BadRequest with its text,
 * 404 → NotFound (`notFound` words it from the text), 403 → Forbidden with its text (a protocol the
 * agent does not speak), anything else an internal error.
 */
export async function kubeletRefusal(res: IncomingMessage, notFound: (text: string) => string): Promise<ApiError> {
  let body = '';
  for await (const chunk of res.setEncoding('utf8')) if ((body += chunk).length > 64 * 1024) break;
  const text = body.trim().slice(0, 64 * 1024);
  if (res.statusCode === 400) return badRequest(text);
  if (res.statusCode === 404) return new ApiError(404, 'NotFound', notFound(text));
  if (res.statusCode === 403) return new ApiError(403, 'Forbidden', text);
  return new ApiError(500, 'InternalError', `Internal error occurred: the node agent answered ${res.statusCode}`);
}

/** The handler streaming a scheduled pod's logs from its node's agent. */
export async function nodeLogs(pod: KubeObject, container: string, query: URLSearchParams, services: Services): Promise<ConnectHandler> {
  const name = pod.metadata.name ?? '';
  const forwarded = checkLogOptions(name, query);
  const nodeName = str(spec(pod).nodeName);
  const node = await services.find('', 'v1', 'nodes')?.get({}, nodeName).catch(() => undefined);
  if (!node || !services.kubelet) throw notFound({ group: '', resource: 'nodes' }, nodeName);
  const containerName = container || str(obj(arr(spec(pod).containers)[0]).name);
  const path = `/containerLogs/${encodeURIComponent(pod.metadata.namespace ?? '')}/${encodeURIComponent(name)}/${encodeURIComponent(containerName)}${forwarded ? `?${forwarded}` : ''}`;
  let res: IncomingMessage;
  try {
    res = await services.kubelet.request(node, 'GET', path);
  } catch (err) {
    throw new ApiError(503, 'ServiceUnavailable', `the node agent of ${nodeName} cannot be reached`, undefined, err);
  }
  if (res.statusCode !== 200) throw await kubeletRefusal(res, () => `the server could not find the requested resource ( pods/log ${name})`);
  return (req, out) => {
    out.writeHead(200, { 'Content-Type': 'text/plain' });
    out.flushHeaders();
    res.pipe(out);
    const stop = () => res.destroy();
    req.once('close', stop);
    out.once('close', stop);
  };
}
