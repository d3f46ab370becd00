/**
 * A CRI log file another process writes (conmon), followed as the agent follows its own logs: a
 * `write` event whenever the file changes, `close` once the container has exited. `kubectl logs -f`
 * and attach read it with the kubelet's log reader (logs/log-reader.ts).
 */
import { EventEmitter } from 'node:events';
import { watch, type FSWatcher } from 'node:fs';
import type { ContainerLogEvents, LiveLog } from '../../logs/logs.js';

export class WatchedLog extends EventEmitter<ContainerLogEvents> implements LiveLog {
  closed = false;
  private readonly watcher?: FSWatcher;

  constructor(path: string, exited: Promise<unknown>) {
    super();
    try {
      this.watcher = watch(path, () => this.emit('write'));
    } catch {
      /* no file yet: readers poll on close only */
    }
    void exited.then(() => {
      this.closed = true;
      this.watcher?.close();
      this.emit('close');
    });
  }
}
