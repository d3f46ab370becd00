/**
 * A CRI log file another process writes (conmon), followed as the agent follows its own logs: a
 * `write` event whenever the file changes, `rotate` when the agent has renamed it away and conmon
 * writes a new one (the file watched again), `close` once the container has exited. `kubectl logs -f`
 * and attach read it with the kubelet's log reader (logs/log-reader.ts).
 */
import { EventEmitter } from 'node:events';
import { watch, type FSWatcher } from 'node:fs';
import type { ContainerLogEvents, LiveLog } from '../../logs/logs.js';

export class WatchedLog extends EventEmitter<ContainerLogEvents> implements LiveLog {
  closed = false;
  private watcher?: FSWatcher;

  constructor(private readonly path: string, exited: Promise<unknown>) {
    super();
    this.follow();
    void exited.then(() => {
      this.closed = true;
      this.watcher?.close();
      this.emit('close');
    });
  }

  private follow(): void {
    this.watcher?.close();
    try {
      this.watcher = watch(this.path, () => this.emit('write'));
    } catch {
      /* no file yet: readers poll on close only */
    }
  }

  /** The file was renamed away and a new one is at the path: followers move to it. */
  rotated(): void {
    if (this.closed) return;
    this.follow();
    this.emit('rotate');
  }
}
