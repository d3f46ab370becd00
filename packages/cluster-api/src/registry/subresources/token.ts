/**
 * TokenRequest (POST serviceaccounts/{name}/token), as kube-apiserver's TokenREST: a signed token for
 * an existing account, for the audiences asked (default: this API server's), valid from 10 minutes to
 * 2^32 s (default one hour), optionally bound to a Pod or Secret of the account's namespace so that it
 * dies with that object. Nothing is stored: the token is the whole answer. `kubectl create token`.
 */
import type { BoundObject, Services } from '../definition.js';
import type { RequestContext } from '../rest.js';
import type { SubresourceDef } from '../subresource.js';
import { badRequest, conflict, invalid, pathNotFound } from '../../api/errors.js';
import { isObject, timestamp } from '../generic/meta.js';
import { nodeTokenRequest } from '../kinds/node-restriction.js';

const DefaultSeconds = 3600;
const MinSeconds = 600;
const MaxSeconds = 2 ** 32;

const obj = (v: unknown): Record<string, unknown> => (isObject(v) ? v : {});

interface Asked {
  audiences: string[];
  seconds: number;
  bound?: { kind: 'Pod' | 'Secret'; apiVersion: string; name: string; uid?: string };
}

/** The request's spec, defaulted and checked as ValidateTokenRequest and TokenREST.Create check it. */
function askedOf(body: unknown, account: string): Asked {
  if (!isObject(body) || (body.kind !== undefined && body.kind !== 'TokenRequest'))
    throw badRequest('the body must be an authentication.k8s.io/v1 TokenRequest');
  const spec = obj(body.spec);
  const seconds = spec.expirationSeconds ?? DefaultSeconds;
  const invalidSeconds = (detail: string) =>
    invalid('TokenRequest', 'authentication.k8s.io', account, [
      { reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(seconds)}: ${detail}`, field: 'spec.expirationSeconds' },
    ]);
  if (typeof seconds !== 'number' || !Number.isInteger(seconds)) throw invalidSeconds('must be an integer');
  if (seconds < MinSeconds) throw invalidSeconds('may not specify a duration less than 10 minutes');
  if (seconds > MaxSeconds) throw invalidSeconds('may not specify a duration larger than 2^32 seconds');
  const audiences = Array.isArray(spec.audiences) ? spec.audiences.filter((a): a is string => typeof a === 'string' && a !== '') : [];
  if (spec.boundObjectRef === undefined || spec.boundObjectRef === null) return { audiences, seconds };
  const ref = obj(spec.boundObjectRef);
  if (ref.kind !== 'Pod' && ref.kind !== 'Secret') throw badRequest(`cannot bind token for object of kind ${JSON.stringify(ref.kind ?? '')}`);
  if (typeof ref.name !== 'string' || !ref.name) throw badRequest('boundObjectRef.name is required');
  const apiVersion = typeof ref.apiVersion === 'string' && ref.apiVersion ? ref.apiVersion : 'v1';
  if (apiVersion !== 'v1') throw badRequest(`cannot bind token to ${ref.kind} of apiVersion ${JSON.stringify(apiVersion)}`);
  return { audiences, seconds, bound: { kind: ref.kind, apiVersion, name: ref.name, ...(typeof ref.uid === 'string' && ref.uid && { uid: ref.uid }) } };
}

/** The Pod or Secret a token is bound to, checked to exist with the uid the client named (409 otherwise). */
async function boundObject(asked: NonNullable<Asked['bound']>, ctx: RequestContext, services: Services): Promise<BoundObject> {
  const found = await services.find('', 'v1', asked.kind === 'Pod' ? 'pods' : 'secrets')!.get(ctx, asked.name);
  const uid = found.metadata.uid ?? '';
  if (asked.uid && asked.uid !== uid) {
    throw conflict({ group: '', resource: asked.kind }, asked.name,
      `the UID in the bound object reference (${asked.uid}) does not match the UID in record. The object might have been deleted and then recreated`);
  }
  return { kind: asked.kind, name: asked.name, uid };
}

/** `serviceaccounts/{name}/token`: tokens the server's issuer signs; not served when it signs none. */
export const token: SubresourceDef = {
  verbs: ['create'],
  kind: { group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest' },
  behaviour: {
    type: 'create',
    check: askedOf,
    async create(asked: Asked, account, ctx, services) {
      if (!services.tokens) throw pathNotFound();
      const name = account.metadata.name ?? '';
      await nodeTokenRequest(asked.bound, name, ctx, services);
      const bound = asked.bound && (await boundObject(asked.bound, ctx, services));
      const namespace = account.metadata.namespace ?? '';
      const { token, expiresAt, audiences } = services.tokens.issue({ namespace, name, uid: account.metadata.uid ?? '' }, asked.audiences, asked.seconds, bound);
      return {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        metadata: { name, namespace, creationTimestamp: timestamp() },
        spec: {
          audiences,
          expirationSeconds: asked.seconds,
          ...(asked.bound && { boundObjectRef: { kind: asked.bound.kind, apiVersion: asked.bound.apiVersion, name: asked.bound.name, uid: bound!.uid } }),
        },
        status: { token, expirationTimestamp: timestamp(expiresAt) },
      };
    },
  },
};
