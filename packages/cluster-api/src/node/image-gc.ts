/**
 * Image garbage collection, as the kubelet's image manager does it: every five minutes the node
 * looks at the filesystem its images live on; past `highThresholdPercent` used it removes images no
 * container uses (running or exited, not yet removed), least recently used first, until the
 * estimated use is down to `lowThresholdPercent`; an image not used for `maximumAgeMs` goes whatever
 * the disk (the kubelet's imageMaximumGCAge, 0: never). An image first seen less than
 * `minimumAgeMs` ago is never removed (an image pulled for a container about to be created).
 * Removing an image untags it; the image store then drops the blobs and unpacked layers nothing
 * references any more. When not enough could be freed, a `FreeDiskSpaceFailed` Warning Event on the
 * Node says so (the kubelet's words).
 */
import { statfs } from 'node:fs/promises';
import { GoDuration, goDurationMs } from '../registry/kinds/cron.js';
import { ConfigError, count, type AnyRow } from '../options.js';
import type { ImageService } from './runtime/cri.js';

export interface ImageGcPolicy {
  /** Disk use (percent) at which collection starts (the kubelet's --image-gc-high-threshold; 100 turns disk-based collection off). */
  highThresholdPercent: number;
  /** Disk use (percent) collection brings the disk down to (--image-gc-low-threshold). */
  lowThresholdPercent: number;
  /** An image is kept at least this long after it is first seen (--minimum-image-ttl-duration). */
  minimumAgeMs: number;
  /** An image unused this long is removed whatever the disk (imageMaximumGCAge); 0: never. */
  maximumAgeMs: number;
}

/** The kubelet's defaults. */
export const DefaultImageGcPolicy: ImageGcPolicy = { highThresholdPercent: 85, lowThresholdPercent: 80, minimumAgeMs: 2 * 60_000, maximumAgeMs: 0 };
/** How often the kubelet collects (its ImageGCPeriod). */
export const ImageGcPeriodMs = 5 * 60_000;

/** A policy's rules between its numbers (the kubelet's configuration validation); undefined when it holds, else why not. */
export function invalidImageGcPolicy(p: ImageGcPolicy): string | undefined {
  if (!(p.highThresholdPercent >= 0 && p.highThresholdPercent <= 100)) return `image-gc-high-threshold must be between 0 and 100, got ${p.highThresholdPercent}`;
  if (!(p.lowThresholdPercent >= 0 && p.lowThresholdPercent <= 100)) return `image-gc-low-threshold must be between 0 and 100, got ${p.lowThresholdPercent}`;
  if (p.lowThresholdPercent > p.highThresholdPercent) return `image-gc-low-threshold (${p.lowThresholdPercent}) must not be above image-gc-high-threshold (${p.highThresholdPercent})`;
  return undefined;
}

/** The options of `cluster-api node` and `serve` (its embedded node) that set the policy. */
export interface ImageGcConfig {
  imageGcHighThreshold: number;
  imageGcLowThreshold: number;
  /** Milliseconds. */
  minimumImageTtl: number;
  /** Milliseconds; 0 never. */
  imageMaximumGcAge: number;
}

const duration = (flag: string) => (raw: unknown): number => {
  const text = String(raw);
  if (text === '0') return 0;
  if (!GoDuration.test(text) || text.startsWith('-')) throw new ConfigError(`--${flag} must be a duration such as 2m or 1h30m, got ${JSON.stringify(text)}`);
  return goDurationMs(text);
};

/**
 * The option rows, their variables named `<envPrefix>IMAGE_GC_HIGH_THRESHOLD`…; `who` begins the
 * first description, `high` is the default high threshold and why.
 */
export const imageGcRows = <C extends ImageGcConfig>(envPrefix: string, who: string, high = { percent: DefaultImageGcPolicy.highThresholdPercent, why: '100: never for disk use' }): AnyRow<C>[] => ([
  { key: 'imageGcHighThreshold', flag: 'image-gc-high-threshold', env: `${envPrefix}IMAGE_GC_HIGH_THRESHOLD`, type: 'number', default: high.percent, parse: count('image-gc-high-threshold', 0, 100), describe: `${who} removes unused images once its image filesystem is this full, in percent (default ${high.percent}; ${high.why})` },
  { key: 'imageGcLowThreshold', flag: 'image-gc-low-threshold', env: `${envPrefix}IMAGE_GC_LOW_THRESHOLD`, type: 'number', default: DefaultImageGcPolicy.lowThresholdPercent, parse: count('image-gc-low-threshold', 0, 100), describe: `down to this percent (default ${DefaultImageGcPolicy.lowThresholdPercent}; not above --image-gc-high-threshold)` },
  { key: 'minimumImageTtl', flag: 'minimum-image-ttl-duration', env: `${envPrefix}MINIMUM_IMAGE_TTL_DURATION`, type: 'string', default: DefaultImageGcPolicy.minimumAgeMs, parse: duration('minimum-image-ttl-duration'), describe: 'an image is kept at least this long after it is first seen (default 2m)' },
  { key: 'imageMaximumGcAge', flag: 'image-maximum-gc-age', env: `${envPrefix}IMAGE_MAXIMUM_GC_AGE`, type: 'string', default: DefaultImageGcPolicy.maximumAgeMs, parse: duration('image-maximum-gc-age'), describe: 'an image unused this long is removed whatever the disk use (default 0: never)' },
] as AnyRow<ImageGcConfig>[]) as unknown as AnyRow<C>[];

/** The policy the options give; a ConfigError when the thresholds are the wrong way round. */
export function imageGcPolicy(c: ImageGcConfig): ImageGcPolicy {
  const policy = { highThresholdPercent: c.imageGcHighThreshold, lowThresholdPercent: c.imageGcLowThreshold, minimumAgeMs: c.minimumImageTtl, maximumAgeMs: c.imageMaximumGcAge };
  const why = invalidImageGcPolicy(policy);
  if (why) throw new ConfigError(`--${why}`);
  return policy;
}

export interface ImageGcOptions {
  images: Pick<ImageService, 'listImages' | 'removeImage'>;
  /** The digests (`sha256:…`) of the images the node's containers use now. */
  inUse: () => Promise<Set<string>>;
  /** A directory on the filesystem the images live on. */
  dir: string;
  policy: ImageGcPolicy;
  log: (entry: Record<string, unknown>) => void;
  /** A Warning Event on the Node. */
  warn: (reason: string, message: string) => void;
  /** The filesystem's size and free bytes (default: statfs of `dir`). */
  disk?: (dir: string) => Promise<{ capacity: number; available: number }>;
}

export const digestOf = (id: string): string | undefined => /@?(sha256:[0-9a-f]{64})$/.exec(id)?.[1];

const statDisk = async (dir: string) => {
  const s = await statfs(dir);
  return { capacity: s.blocks * s.bsize, available: s.bavail * s.bsize };
};

interface Seen {
  firstDetected: number;
  lastUsed: number;
}

export class ImageGarbageCollector {
  /** By image digest: when this node first saw it, and last saw a container use it. */
  private readonly seen = new Map<string, Seen>();
  private timer?: NodeJS.Timeout;
  private running?: Promise<string[]>;

  constructor(private readonly opts: ImageGcOptions) {}

  /** Collects every `periodMs` (the first time after one period, as the kubelet) until stop(). */
  start(periodMs = ImageGcPeriodMs): this {
    // The images present now are known from the start, so the minimum age counts from here.
    void this.detect(Date.now()).catch(() => undefined);
    this.timer = setInterval(() => void this.collect().catch((err: Error) => this.opts.log({ level: 'warn', msg: 'image garbage collection failed', error: err.message })), periodMs);
    this.timer.unref();
    return this;
  }

  stop(): Promise<unknown> {
    clearInterval(this.timer);
    return this.running ?? Promise.resolve();
  }

  /** One pass (one at a time); resolves to the references removed. */
  collect(now = Date.now()): Promise<string[]> {
    return (this.running ??= this.pass(now).finally(() => (this.running = undefined)));
  }

  /** Images by digest (each with its references), their records brought up to date. */
  private async detect(now: number): Promise<{ byDigest: Map<string, { refs: string[]; size: number }>; used: Set<string> }> {
    const [images, used] = await Promise.all([this.opts.images.listImages(), this.opts.inUse()]);
    const byDigest = new Map<string, { refs: string[]; size: number }>();
    for (const image of images) {
      const digest = digestOf(image.id);
      if (!digest) continue;
      const entry = byDigest.get(digest) ?? { refs: [], size: image.size };
      for (const tag of image.repoTags) if (!entry.refs.includes(tag)) entry.refs.push(tag);
      byDigest.set(digest, entry);
    }
    for (const digest of byDigest.keys()) {
      const r = this.seen.get(digest) ?? { firstDetected: now, lastUsed: 0 };
      if (used.has(digest)) r.lastUsed = now;
      this.seen.set(digest, r);
    }
    for (const digest of this.seen.keys()) if (!byDigest.has(digest)) this.seen.delete(digest);
    return { byDigest, used };
  }

  private async pass(now: number): Promise<string[]> {
    const { policy } = this.opts;
    const { byDigest, used } = await this.detect(now);
    const candidates = [...byDigest.entries()]
      // An image listed with no tag cannot be untagged: left alone.
      .filter(([digest, e]) => e.refs.length > 0 && !used.has(digest) && now - this.seen.get(digest)!.firstDetected >= policy.minimumAgeMs)
      .map(([digest, e]) => ({ digest, ...e, ...this.seen.get(digest)! }))
      // Least recently used first; never used counts as oldest, then the first seen.
      .sort((a, b) => a.lastUsed - b.lastUsed || a.firstDetected - b.firstDetected);
    const removed: string[] = [];
    const remove = async (c: (typeof candidates)[number], why: string) => {
      for (const ref of c.refs) {
        await this.opts.images.removeImage({ image: ref });
        removed.push(ref);
      }
      this.seen.delete(c.digest);
      this.opts.log({ level: 'info', msg: 'image removed', image: c.refs.join(', '), digest: c.digest, size: c.size, why });
    };
    // Unused for longer than the maximum age: removed whatever the disk.
    const left: typeof candidates = [];
    for (const c of candidates) {
      const unusedSince = c.lastUsed || c.firstDetected;
      if (policy.maximumAgeMs > 0 && now - unusedSince > policy.maximumAgeMs) await remove(c, 'unused past the maximum age');
      else left.push(c);
    }
    if (policy.highThresholdPercent >= 100) return removed;
    const { capacity, available } = await (this.opts.disk ?? statDisk)(this.opts.dir);
    if (capacity <= 0) return removed;
    const usage = ((capacity - available) * 100) / capacity;
    if (usage < policy.highThresholdPercent) return removed;
    const toFree = capacity - available - Math.floor((capacity * policy.lowThresholdPercent) / 100);
    let freed = 0;
    for (const c of left) {
      if (freed >= toFree) break;
      await remove(c, `disk ${usage.toFixed(0)}% used, at or over the high threshold ${policy.highThresholdPercent}%`);
      freed += c.size;
    }
    if (freed < toFree) {
      this.opts.warn('FreeDiskSpaceFailed', `Failed to garbage collect required amount of images. Attempted to free ${toFree} bytes, but only found ${freed} bytes eligible to free.`);
    }
    return removed;
  }
}
