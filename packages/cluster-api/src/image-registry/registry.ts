/**
 * The cluster's OCI distribution registry (`serve`'s `registry` part): one HTTP listener answering
 * the distribution API (distribution.ts) over the node's image store, with access decided by the
 * API server (access.ts) and limits on what a client may send (blob and manifest sizes, uploads at
 * once). Every failure is a distribution error body; one nothing expected is logged here and
 * answered `UNKNOWN` without its text. Its address is published in kube-public/local-registry-hosting
 * (published.ts) for clients that only have a kubeconfig.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import type { KubeClient } from '@func/kube-client';
import { ImageLayout } from '@func/oci';
import { DelegatedAuth } from '../auth/delegated.js';
import { startListener } from '../serve/listener.js';
import { RegistryAccess } from './access.js';
import { Distribution } from './distribution.js';
import { DistributionError, sendError } from './errors.js';
import { route } from './names.js';
import { Uploads } from './uploads.js';

export interface ImageRegistryOptions {
  /** The node's image store (an OCI image layout directory). */
  layout: string;
  /** Where upload sessions keep their bytes (emptied at start). */
  uploads: string;
  /** The API server, as the registry's own identity (it needs system:auth-delegator). */
  kube: KubeClient;
  host: string;
  /** 0 picks a free one. */
  port: number;
  maxBlobBytes?: number;
  maxManifestBytes?: number;
  maxUploads?: number;
  log?: (entry: Record<string, unknown>) => void;
}

export class ImageRegistry {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly uploads: Uploads;
  private readonly access: RegistryAccess;
  private distribution?: Distribution;
  /** `127.0.0.1:5001`: what an image reference names. */
  host = '';

  constructor(private readonly opts: ImageRegistryOptions) {
    this.uploads = new Uploads(opts.uploads, { maxBlobBytes: opts.maxBlobBytes ?? 2 * 1024 ** 3, maxSessions: opts.maxUploads ?? 64 });
    this.access = new RegistryAccess(new DelegatedAuth(opts.kube));
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (s) => (this.sockets.add(s), s.once('close', () => this.sockets.delete(s))));
  }

  async start(): Promise<void> {
    this.distribution = new Distribution(await ImageLayout.open(this.opts.layout), this.uploads, { maxManifestBytes: this.opts.maxManifestBytes ?? 4 * 1024 ** 2 });
    await this.uploads.open();
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.opts.port, this.opts.host, () => (this.server.off('error', reject), resolve()));
    });
    const { port } = this.server.address() as AddressInfo;
    const host = this.opts.host === '0.0.0.0' || this.opts.host === '::' ? '127.0.0.1' : this.opts.host.includes(':') ? `[${this.opts.host}]` : this.opts.host;
    this.host = `${host}:${port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      for (const s of this.sockets) s.destroy();
    });
    await this.uploads.close();
    this.opts.kube.close();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    res.setHeader('docker-distribution-api-version', 'registry/2.0');
    const raw = req.url ?? '/';
    const q = raw.indexOf('?');
    const path = q < 0 ? raw : raw.slice(0, q);
    try {
      const r = route(path);
      if (!r) throw new DistributionError('NAME_UNKNOWN', 'no such endpoint', 404);
      await this.access.check(req, path, r.kind === 'base');
      await this.distribution!.handle(r, req, res, new URLSearchParams(q < 0 ? '' : raw.slice(q + 1)));
    } catch (err) {
      if (!(err instanceof DistributionError)) this.opts.log?.({ level: 'error', msg: 'registry request failed', method: req.method, path, error: (err as Error)?.message });
      sendError(res, err instanceof DistributionError ? err : new DistributionError('UNKNOWN', 'internal error'));
      if (!req.complete) drain(req);
    }
  }
}

/** What is left of a refused request's body is read and dropped (so the client reads the answer), up to 64 MiB; then the connection is cut. */
function drain(req: IncomingMessage): void {
  let left = 64 * 1024 ** 2;
  req.on('data', (chunk: Buffer) => {
    left -= chunk.length;
    if (left < 0) req.destroy();
  });
  req.resume();
}

/** A started registry; a failed start releases what it opened. `portFlag` names the flag that sets the port. */
export const startImageRegistry = (opts: ImageRegistryOptions, portFlag = '--registry-port'): Promise<ImageRegistry> =>
  startListener(new ImageRegistry(opts), { what: 'the registry', host: opts.host, port: opts.port, portFlag });

export const uploadsDir = (dataDir: string): string => join(dataDir, 'registry-uploads');
