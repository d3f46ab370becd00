/**
 * The etcd connection under the etcd backend: endpoints from the storage URL, TLS material, the
 * etcd3 client with bounded call deadlines, and the translation of etcd / gRPC failures into
 * StorageError codes.
 *
 * Two rules make an unavailable etcd fail fast instead of hanging the API: every unary call carries a
 * deadline, and every call carries gRPC metadata `hasleader: true` (etcd's require-leader, what
 * Kubernetes' client sets), so a member that has lost its leader answers "no leader" at once and ends
 * open watch streams instead of holding them silently.
 */
import { readFileSync } from 'node:fs';
import { InterceptingCall, type Interceptor } from '@grpc/grpc-js';
import { circuitBreaker, ConsecutiveBreaker, handleWhen, noop } from 'cockatiel';
import { Etcd3, GRPCCancelledError, type IOptions, isRecoverableError } from 'etcd3';
import { isStorageError, StorageError } from '../errors.js';

/** TLS files for the etcd client connection (`--etcd-cafile`, `--etcd-certfile`, `--etcd-keyfile`). */
export interface EtcdTlsFiles {
  readonly caFile?: string;
  readonly certFile?: string;
  readonly keyFile?: string;
}

export interface EtcdClientOptions extends EtcdTlsFiles {
  /** Upper bound of one storage call, including a retry on another member. Default 5000. */
  readonly requestTimeoutMs?: number;
}

export const DEFAULT_ETCD_TIMEOUT_MS = 5_000;

const HOST_PORT = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/;

function badUrl(url: string, why: string): StorageError {
  return new StorageError('InvalidArgument', url, `invalid etcd storage URL ${JSON.stringify(url)}: ${why}`);
}

/** `etcd://host1:2379,host2:2379` (the part after `etcd:`) → `['host1:2379', 'host2:2379']`. */
export function parseEtcdEndpoints(location: string): string[] {
  const url = `etcd:${location}`;
  if (!location.startsWith('//')) throw badUrl(url, 'expected etcd://host:port[,host:port…]');
  const list = location.slice(2).replace(/\/$/, '');
  if (list === '') throw badUrl(url, 'no endpoints; expected etcd://host:port[,host:port…]');
  return list.split(',').map((ep) => {
    const m = HOST_PORT.exec(ep.trim());
    const port = Number(m?.[2]);
    if (!m || port < 1 || port > 65535) throw badUrl(url, `endpoint ${JSON.stringify(ep)} is not host:port`);
    return ep.trim();
  });
}

function readPem(file: string | undefined, flag: string): Buffer | undefined {
  if (file === undefined) return undefined;
  try {
    return readFileSync(file);
  } catch (err) {
    throw new StorageError('InvalidArgument', file, `${flag} ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

function credentials(tls: EtcdTlsFiles): IOptions['credentials'] | undefined {
  if (Boolean(tls.certFile) !== Boolean(tls.keyFile)) {
    throw new StorageError('InvalidArgument', '', '--etcd-certfile and --etcd-keyfile must be given together');
  }
  if (!tls.caFile && !tls.certFile) return undefined;
  // A null root certificate makes gRPC verify the server against the system's trusted roots.
  const rootCertificate = readPem(tls.caFile, '--etcd-cafile') ?? (null as unknown as Buffer);
  return { rootCertificate, privateKey: readPem(tls.keyFile, '--etcd-keyfile'), certChain: readPem(tls.certFile, '--etcd-certfile') };
}

/** etcd's require-leader: members without a leader refuse at once rather than queue the request. */
const requireLeader: Interceptor = (options, nextCall) =>
  new InterceptingCall(nextCall(options), {
    start(metadata, listener, next) {
      metadata.set('hasleader', 'true');
      next(metadata, listener);
    },
  });

/** A failure that says something about the member; a call this process cancelled says nothing. */
const isMemberFailure = (err: Error): boolean => isRecoverableError(err) && !(err instanceof GRPCCancelledError);

/** Opens the client (lazily connecting); throws InvalidArgument for bad endpoints or TLS files. */
export function connectEtcd(location: string, opts: EtcdClientOptions = {}): Etcd3 {
  const endpoints = parseEtcdEndpoints(location);
  const creds = credentials(opts);
  const timeout = opts.requestTimeoutMs ?? DEFAULT_ETCD_TIMEOUT_MS;
  return new Etcd3({
    hosts: endpoints.map((ep) => `${creds ? 'https' : 'http'}://${ep}`),
    ...(creds && { credentials: creds }),
    dialTimeout: timeout,
    // Retries are ours (etcd-storage.ts): only reads and never-sent writes may be repeated, so a
    // write that reached etcd is never applied twice.
    faultHandling: {
      global: noop,
      host: () => circuitBreaker(handleWhen(isMemberFailure), { halfOpenAfter: 1_000, breaker: new ConsecutiveBreaker(2) }),
    },
    defaultCallOptions: (ctx) =>
      ctx.isStream ? { interceptors: [requireLeader] } : { deadline: Date.now() + timeout, interceptors: [requireLeader] },
    grpcOptions: {
      'grpc.keepalive_time_ms': 10_000,
      'grpc.keepalive_timeout_ms': 5_000,
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.max_reconnect_backoff_ms': 1_000,
      'grpc.max_receive_message_length': 256 * 1024 * 1024,
    },
  });
}

const COMPACTED = 'required revision has been compacted';
const FUTURE = 'required revision is a future revision';
const TOO_LARGE = 'request is too large';
const BREAKER_OPEN = /circuit breaker is open/i;
/** Failures where the request never left this process, so a write may be sent to another member. */
const NOT_SENT = /ECONNREFUSED|No connection established|failed to connect|Connection dropped|ENOTFOUND|breaker is open/i;

export const isCompactedError = (err: unknown): boolean => err instanceof Error && err.message.includes(COMPACTED);

/** True when the request surely did not reach etcd (safe to send a write elsewhere). */
export const neverSent = (err: unknown): boolean => err instanceof Error && NOT_SENT.test(err.message);

/**
 * etcd / gRPC failure → StorageError. Compacted needs the compacted revision, which the caller
 * supplies; anything not understood is Unavailable (the API answers 503 and clients retry).
 */
export function toStorageError(err: unknown, key: string, compacted = 0): StorageError {
  if (isStorageError(err)) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (message.includes(COMPACTED)) {
    return new StorageError('Compacted', key, `required revision has been compacted (oldest readable revision is ${compacted})`, compacted);
  }
  if (message.includes(FUTURE)) return new StorageError('InvalidArgument', key, `revision is in the future: ${message}`);
  if (message.includes(TOO_LARGE)) return new StorageError('InvalidArgument', key, `value too large for etcd: ${message}`);
  if (BREAKER_OPEN.test(message)) return new StorageError('Unavailable', key, 'etcd: no member reachable (every endpoint failed just now; retrying shortly)');
  return new StorageError('Unavailable', key, `etcd: ${message.replace(/ Please report this error at \S+/, '')}`);
}

/** Rejects with Unavailable when `work` takes longer than `ms`, so no call outlives its bound. */
export async function bounded<T>(work: Promise<T>, ms: number, key: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StorageError('Unavailable', key, `etcd did not answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
