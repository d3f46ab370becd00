/**
 * `cluster-api migrate --from sqlite:./data/state.db --to etcd://host:2379`: copies every stored
 * object from one storage backend to another, byte for byte. Stored values never contain
 * resourceVersion (it is the storage revision), so objects keep their content — uid,
 * creationTimestamp, generation, labels, spec, status — and get new resourceVersions from the target.
 *
 * The source is read at one snapshot revision, in pages. A key already in the target with the same
 * bytes is skipped, so an interrupted migration can simply be run again; a key with different bytes
 * stops the migration (nothing is overwritten), except what the target server writes for itself at
 * start (it keeps its own). Run it while no API server uses the source: a
 * SQLite source in use by `serve` is locked and refused.
 */
import { existsSync } from 'node:fs';
import type { Argv } from 'yargs';
import { AutomanagedLabel } from './aggregation/local.js';
import { ConfigError } from './config.js';
import type { EtcdClientOptions } from './storage/etcd/client.js';
import { isStorageError } from './storage/errors.js';
import { openStorage, parseStorageUrl } from './storage/factory.js';
import type { KeyValue, Storage } from './storage/interface.js';
import { REGISTRY_ROOT } from './storage/keys.js';

export interface MigrateResult {
  /** Keys written to the target. */
  readonly copied: number;
  /** Keys the target already held with identical bytes. */
  readonly skipped: number;
  /** The source snapshot revision everything was read at. */
  readonly sourceRevision: number;
}

export interface CopyOptions {
  readonly prefix?: string;
  readonly pageSize?: number;
  /** Writes in flight at once (etcd commits in parallel; SQLite groups them). Default 32. */
  readonly concurrency?: number;
  /** Called after each page with the number of keys done so far. */
  readonly onProgress?: (done: number) => void;
}

export class MigrateConflictError extends Error {
  override readonly name = 'MigrateConflictError';
  readonly code = 'MigrateConflict';
}

/** The label of what `serve` writes about itself (its gateway's address, its built-in CRDs), as stored (JSON). */
const ManagedByServer = '"app.kubernetes.io/managed-by":"cluster-api"';

/**
 * What a server writes for itself at start: the APIServices it registers for the group versions it
 * serves (kube-aggregator's autoregister label), and what it labels as managed by cluster-api (the
 * gateway's address in knative-serving/config-gateway, the registry's in kube-public/local-registry-hosting). Each server keeps its own, so the target's
 * stands when it differs.
 */
const serverRegistered = (kv: KeyValue): boolean => {
  const value = Buffer.from(kv.value);
  return (kv.key.startsWith(`${REGISTRY_ROOT}apiservices.apiregistration.k8s.io/`) && value.includes(AutomanagedLabel)) || value.includes(ManagedByServer);
};

async function copyOne(to: Storage, kv: KeyValue): Promise<'copied' | 'skipped'> {
  try {
    await to.create(kv.key, kv.value);
    return 'copied';
  } catch (err) {
    if (!isStorageError(err, 'KeyExists')) throw err;
    const there = await to.get(kv.key);
    if (there && (Buffer.compare(there.value, kv.value) === 0 || serverRegistered(kv))) return 'skipped';
    throw new MigrateConflictError(`${kv.key} already exists in the target with different content; nothing was overwritten`);
  }
}

/** Copies every key under `prefix` (default all of /registry/) from `from` to `to`. */
export async function copyStorage(from: Storage, to: Storage, opts: CopyOptions = {}): Promise<MigrateResult> {
  const { prefix = REGISTRY_ROOT, pageSize = 500, concurrency = 32 } = opts;
  let copied = 0;
  let skipped = 0;
  let page = await from.list({ prefix, limit: pageSize });
  const sourceRevision = page.revision;
  for (;;) {
    const items = page.items;
    for (let i = 0; i < items.length; i += concurrency) {
      const results = await Promise.all(items.slice(i, i + concurrency).map((kv) => copyOne(to, kv)));
      for (const r of results) r === 'copied' ? copied++ : skipped++;
    }
    opts.onProgress?.(copied + skipped);
    if (!page.more || items.length === 0) break;
    page = await from.list({ prefix, limit: pageSize, revision: sourceRevision, startAfter: items[items.length - 1]!.key });
  }
  return { copied, skipped, sourceRevision };
}

export interface MigrateArgs {
  readonly from: string;
  readonly to: string;
  readonly etcd?: EtcdClientOptions;
}

/** Opens both storages (compaction off), copies, and closes both whatever happens. */
export async function migrate(args: MigrateArgs, onProgress?: (done: number) => void): Promise<MigrateResult> {
  if (args.from === args.to) throw new ConfigError('--from and --to name the same storage');
  const source = parseStorageUrl(args.from);
  // Opening a SQLite path creates it: a mistyped source would "migrate" an empty new database.
  if (source.scheme === 'sqlite' && !existsSync(source.location)) throw new ConfigError(`--from ${args.from}: no such file`);
  // The target first: its URL and TLS files are checked before the source is opened (and locked).
  const to = await openStorage(args.to, { compaction: false, etcd: args.etcd });
  try {
    const from = await openStorage(args.from, { compaction: false, etcd: args.etcd });
    try {
      return await copyStorage(from, to, { onProgress });
    } finally {
      await from.close();
    }
  } finally {
    await to.close();
  }
}

/** The yargs options of `cluster-api migrate`; cli.ts registers the command and owns the exit. */
export function migrateOptions(y: Argv): Argv<MigrateArgs & Record<string, unknown>> {
  return y
    .option('from', { type: 'string', demandOption: true, describe: 'source storage URL (e.g. sqlite:./data/state.db)' })
    .option('to', { type: 'string', demandOption: true, describe: 'target storage URL (e.g. etcd://127.0.0.1:2379)' })
    .option('etcd-cafile', { type: 'string', describe: 'CA bundle to verify etcd servers' })
    .option('etcd-certfile', { type: 'string', describe: 'client certificate for etcd (PEM)' })
    .option('etcd-keyfile', { type: 'string', describe: 'private key of --etcd-certfile (PEM)' }) as unknown as Argv<
    MigrateArgs & Record<string, unknown>
  >;
}

/** argv of `cluster-api migrate` → MigrateArgs (TLS file flags as the serve command names them). */
export function migrateArgs(argv: Record<string, unknown>): MigrateArgs {
  const str = (k: string): string | undefined => (typeof argv[k] === 'string' && argv[k] !== '' ? (argv[k] as string) : undefined);
  const from = str('from');
  const to = str('to');
  if (!from || !to) throw new ConfigError('migrate needs --from <storage URL> and --to <storage URL>');
  return { from, to, etcd: { caFile: str('etcd-cafile'), certFile: str('etcd-certfile'), keyFile: str('etcd-keyfile') } };
}
