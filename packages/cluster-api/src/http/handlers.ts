/**
 * The generic resource handlers: one per verb, over any ResourceStore (never one per kind).
 * Status codes are kube-apiserver's: 201 on create, 200 on everything else, and a DELETE answers
 * a Success Status when the object is gone at once or the object itself while finalizers or a grace
 * period keep it (202 when the client asked for cascading deletion with orphanDependents=false).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KubeList, KubeObject } from '../api/meta.js';
import { ProtobufMediaType, supportsProtobuf } from '../protobuf/codec.js';
import { servesProtobuf } from '../protobuf/negotiation.js';
import type { RequestContext, UserInfo, Written } from '../registry/rest.js';
import type { Upgrade } from '../registry/subresource.js';
import { readBody, hasBody } from './body.js';
import { decodeBody, negotiateOutput, negotiateWatch, patchTypeOf, type Output } from './negotiate.js';
import { deleteOptionsOf, dryRunOf, intParam, isPretty, listQueryOf, watchQueryOf, writeOptionsOf } from './query.js';
import { send, sendStoredJson } from './respond.js';
import { toPartial } from './partial.js';
import type { Route } from './router.js';
import { malformedBody, pathNotFound, unsupportedMediaType, unsupportedPatchType } from '../api/errors.js';
import { deletedStatus, type ReportServerError } from './status.js';
import { includeObjectOf, toTable } from './table.js';
import { serveWatch } from './watch.js';

export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  query: URLSearchParams;
  user?: UserInfo;
  /** Where open watch streams are registered (see AppOptions.watches). */
  watches?: Set<ServerResponse>;
  /** Logs a server error a watch stream ends with; answers its request id. */
  report?: ReportServerError;
  /** The connection, for a request that asked to switch protocols (only a connect subresource takes it). */
  upgrade?: Upgrade;
}

/** A promise only when the answer has to wait: a read the storage holds at hand is answered in this tick. */
export function serveResource(route: Route, ex: Exchange): void | Promise<void> {
  const ctx: RequestContext = { namespace: route.namespace, user: ex.user };
  if (dryRunOf(ex.query)) ctx.dryRun = true;
  if (route.verb === 'watch') return watch(route, ex, ctx);
  if (route.sub?.behaviour.type === 'connect') return connect(route, ex, ctx);
  if (route.verb === 'get' || route.verb === 'list') return read(route, ex, ctx);
  return writeAndAnswer(route, ex, ctx);
}

/** `pretty` from the query or the User-Agent (query.ts), or `pretty=1` in the Accept range chosen. */
const prettyFor = (ex: Exchange, output: Output): boolean => output.pretty === true || isPretty(ex.query, ex.req.headers['user-agent']);

/** The object, list or Status as answered: the metadata alone when the client asked for it. */
const shaped = (route: Route, output: Output, value: unknown): unknown =>
  output.partial ? toPartial(value, output.partial, route.store.definition) : value;

async function writeAndAnswer(route: Route, ex: Exchange, ctx: RequestContext): Promise<void> {
  // Writes answer the object in JSON, YAML or protobuf; a Table Accept on a write still reads a JSON object.
  const output = negotiateOutput(ex.req.headers.accept, answersProtobuf(route));
  const format = output.format === 'table' ? 'json' : output.format;
  const pretty = prettyFor(ex, output);
  const { code, value, encoded } = await write(route, ex, ctx);
  if (ctx.warnings?.length) ex.res.setHeader('Warning', ctx.warnings.map(warningHeader));
  if (encoded && format === 'json' && !pretty && !output.partial) return sendStoredJson(ex.res, code, encoded());
  send(ex.res, code, shaped(route, output, value), format, pretty);
}

/** RFC 7234's warn-code 299 with agent "-", as kube-apiserver writes admission warnings. */
const warningHeader = (text: string): string => `299 - ${JSON.stringify(text.replace(/[\x00-\x1f\x7f]/g, ' '))}`;

/** Protobuf when the kind answered has a message: the object's own, or the subresource's (Scale has none here). */
const answersProtobuf = (route: Route): boolean => {
  const other = route.sub?.kind;
  if (!other) return servesProtobuf(route.store.definition);
  return supportsProtobuf(other.group ? `${other.group}/${other.version}` : other.version, other.kind);
};

function read(route: Route, ex: Exchange, ctx: RequestContext): void | Promise<void> {
  const output = negotiateOutput(ex.req.headers.accept, answersProtobuf(route));
  const pretty = prettyFor(ex, output);
  if (output.format === 'json' && !pretty && !output.partial && readsStored(route)) {
    const bytes = readEncoded(route, ex, ctx);
    if (bytes instanceof Uint8Array) return sendStoredJson(ex.res, 200, bytes);
    if (bytes) return bytes.then((b) => sendStoredJson(ex.res, 200, b));
  }
  return readObjects(route, ex, ctx, output, pretty);
}

/** The answer is the object as stored (not a view of it such as a Scale): it may come straight from the stored bytes. */
const readsStored = ({ sub }: Route): boolean => !sub || (sub.behaviour.type === 'view' && !sub.behaviour.read);

async function readObjects(route: Route, ex: Exchange, ctx: RequestContext, output: Output, pretty: boolean): Promise<void> {
  const include = output.format === 'table' ? includeObjectOf(ex.query.get('includeObject')) : undefined;
  const value: KubeObject | KubeList =
    route.verb === 'get' ? await route.store.get(ctx, route.name!, route.subresource) : await route.store.list(ctx, listQueryOf(ex.query));
  if (output.format === 'table')
    return send(ex.res, 200, toTable(route.store.definition, value, include!, output.tableVersion), 'json', pretty);
  send(ex.res, 200, shaped(route, output, value), output.format, pretty);
}

/**
 * Compact JSON straight from the stored bytes (no parse, no re-serialise): the same document `get`
 * and `list` would give, for stores that offer it. Pretty, Table, YAML and protobuf need the objects.
 */
function readEncoded(route: Route, ex: Exchange, ctx: RequestContext): Uint8Array | Promise<Uint8Array> | undefined {
  const { store } = route;
  if (route.verb === 'get') return store.getEncoded?.(ctx, route.name!);
  return store.listEncoded?.(ctx, listQueryOf(ex.query));
}

/**
 * A connect subresource (log, exec, portforward, proxy): checked by the store, then its handler takes
 * the exchange over, an upgraded connection included. Reached only through the whole pipeline
 * (authentication, and authorization of the route's verb and subresource, in app.ts).
 */
async function connect(route: Route, ex: Exchange, ctx: RequestContext): Promise<void> {
  if (!route.store.connect) throw pathNotFound();
  const request = { subresource: route.subresource!, query: ex.query, id: route.name!, namespace: route.namespace, subpath: route.subpath ?? '', verb: route.verb };
  const handler = await route.store.connect(ctx, route.name!, request);
  await handler(ex.req, ex.res, ex.upgrade);
}

async function watch(route: Route, ex: Exchange, ctx: RequestContext): Promise<void> {
  const output = negotiateWatch(ex.req.headers.accept, servesProtobuf(route.store.definition));
  const table =
    output.format === 'table'
      ? { include: includeObjectOf(ex.query.get('includeObject')), version: output.tableVersion ?? 'v1' }
      : undefined;
  const timeout = intParam(ex.query, 'timeoutSeconds');
  await serveWatch(ex.req, ex.res, {
    store: route.store,
    ctx,
    query: watchQueryOf(ex.query, route.name),
    timeoutSeconds: timeout === 0 ? undefined : timeout,
    table,
    // A watch of PartialObjectMetadataList sends whole objects, as kube-apiserver's failed per-event transform does.
    partial: output.partial?.kind === 'PartialObjectMetadata' ? output.partial.version : undefined,
    protobuf: output.format === 'protobuf',
    openWatches: ex.watches,
    report: ex.report && ((err: unknown) => ex.report!(err, ex.req)),
  });
}

/** What a write answers: `encoded` when the value is an object just stored, as its compact JSON. */
interface Answer {
  code: number;
  value: unknown;
  encoded?: () => Uint8Array;
}

const answer = (code: number, { object, encoded }: Written): Answer => ({ code, value: object, encoded });

async function write(route: Route, ex: Exchange, ctx: RequestContext): Promise<Answer> {
  const { store, name, subresource } = route;
  const contentType = ex.req.headers['content-type'];
  // Checked before the body is read: a wrong patch type is refused without buffering it.
  const patchType = route.verb === 'patch' ? patchTypeOf(contentType) : undefined;
  if (route.verb === 'create' || route.verb === 'update' || route.verb === 'patch')
    Object.assign(ctx, writeOptionsOf(ex.query, route.verb, patchType, ex.req.headers['user-agent']));
  // Custom resources are JSON (and YAML) only, as kube-apiserver serves them: a protobuf body is refused.
  if (store.definition.custom && contentType?.startsWith(ProtobufMediaType)) throw unsupportedMediaType(contentType);
  const bytes = await readBody(ex.req);
  const body = hasBody(bytes) ? decodeBody(contentType, bytes) : undefined;
  checkBodyShape(route, body);
  switch (route.verb) {
    case 'create':
      if (subresource) {
        if (!store.post) throw pathNotFound();
        // kube-apiserver's createHandler: a Status answer carries its own code (a rollback's is 200).
        const posted = await store.post(ctx, name!, subresource, body);
        const code = posted.object.kind === 'Status' && typeof posted.object.code === 'number' ? posted.object.code : 201;
        return answer(code, posted);
      }
      return answer(201, await store.create(ctx, body));
    case 'update':
      return answer(200, await store.update(ctx, name!, body, subresource));
    case 'patch':
      if (patchType === 'apply') {
        if (!store.apply) throw unsupportedPatchType('application/apply-patch+yaml');
        const applied = await store.apply(ctx, name!, body, subresource);
        return answer(applied.created ? 201 : 200, applied);
      }
      return answer(200, await store.patch(ctx, name!, patchType!, body, subresource));
    case 'delete':
      return remove(route, ctx, deleteOptionsOf(ex.query, body));
    default:
      return { code: 200, value: await store.deleteCollection(ctx, listQueryOf(ex.query), deleteOptionsOf(ex.query, body)) };
  }
}

/** Create and replace take one object, patch a document (a JSON patch is an array); delete may take none. */
function checkBodyShape(route: Route, body: unknown): void {
  if (route.verb === 'delete' || route.verb === 'deletecollection') return;
  if (body === undefined) throw malformedBody('the request body is empty');
  const isObject = typeof body === 'object' && body !== null && !Array.isArray(body);
  if (route.verb !== 'patch' && !isObject) throw malformedBody('the body must be a single object with kind and apiVersion');
  if (route.verb === 'patch' && (typeof body !== 'object' || body === null))
    throw malformedBody('the patch must be a JSON object or array');
}

async function remove(route: Route, ctx: RequestContext, options: ReturnType<typeof deleteOptionsOf>): Promise<Answer> {
  const written = await route.store.delete(ctx, route.name!, options);
  const { object, deleted } = written;
  if (!deleted) return answer(options.orphanDependents === false ? 202 : 200, written);
  const def = route.store.definition;
  return {
    code: 200,
    value: deletedStatus({ name: object.metadata.name, group: def.group, kind: def.plural, uid: object.metadata.uid }),
  };
}
