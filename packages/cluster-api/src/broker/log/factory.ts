/**
 * The event log by URL, as `--broker-store` gives it: `sqlite:<file>` (the embedded default,
 * `sqlite:<data-dir>/broker.db`) or `nats://host:port[,host:port…][?replicas=N]`.
 */
import { type EventLog, LogUnavailableError } from './interface.js';
import { NatsLog } from './nats.js';
import { SqliteLog } from './sqlite.js';

export async function openEventLog(url: string): Promise<EventLog> {
  if (url.startsWith('sqlite:')) {
    const path = url.replace(/^sqlite:(\/\/)?/, '');
    if (!path) throw new LogUnavailableError('sqlite: needs a file, e.g. sqlite:./data/broker.db');
    return SqliteLog.open(path);
  }
  if (url.startsWith('nats://')) return NatsLog.connect(url);
  throw new LogUnavailableError(`unsupported broker store ${JSON.stringify(url)}: use sqlite:<file> or nats://host:port`);
}
