/**
 * What the oci runtime keeps on disk of its sandboxes and containers, as CRI-O keeps its own state
 * beside runc's: a sandbox's record (`<dir>/sandboxes/<id>.json`: its config, namespace, CIDR,
 * hostPorts, IP) and a container's (`container.json` in its bundle: its CRI status and sandbox),
 * each written whole (a temporary file renamed over the old one) whenever it changes, and read back
 * when the node agent starts again, to adopt what still runs. A pod network made ahead of need
 * (sandbox-pool.ts) is recorded too (`<dir>/pool/<id>.json`), from before its CNI ADD until a
 * sandbox has it (recorded as that sandbox's first) or it is released, so a restarted agent finds
 * and releases what an earlier run had pooled.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ContainerStatus, PodSandboxConfig, PodSandboxStatus } from '../cri.js';
import type { PortMapping } from './cni.js';

export interface SandboxRecord {
  status: PodSandboxStatus;
  config: PodSandboxConfig;
  /** The pod's network namespace (none: hostNetwork). */
  netns?: string;
  cidr: string;
  ports: PortMapping[];
  /** The pod's /etc/hosts, hostname and resolv.conf. */
  etc: string;
}

/** A pod network made ahead of need: its CIDR from the start, its address and namespace once CNI ADD gave them. */
export interface PooledRecord {
  id: string;
  cidr: string;
  ip?: string;
  netns?: string;
}

export interface ContainerRecord {
  status: ContainerStatus;
  sandboxId: string;
}

const ContainerFile = 'container.json';

function writeWhole(file: string, value: unknown): void {
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, JSON.stringify(value));
  renameSync(tmp, file);
}

function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

/** The records `<dir>/<id>.json` of a directory whose names match their ids (an unreadable one is removed). */
function records<T>(dir: string, idOf: (record: T) => string | undefined): T[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.json'));
  } catch {
    return [];
  }
  const found: T[] = [];
  for (const n of names) {
    const record = readJson<T>(join(dir, n));
    if (record && idOf(record) === n.slice(0, -'.json'.length)) found.push(record);
    else rmSync(join(dir, n), { force: true });
  }
  return found;
}

export class RuntimeState {
  private readonly sandboxDir: string;
  private readonly poolDir: string;

  /** `dir`: the runtime's directory; containers' bundles are `<containers>/<id>`. */
  constructor(dir: string, private readonly containers: string) {
    this.sandboxDir = join(dir, 'sandboxes');
    this.poolDir = join(dir, 'pool');
  }

  saveSandbox(record: SandboxRecord): void {
    mkdirSync(this.sandboxDir, { recursive: true });
    writeWhole(join(this.sandboxDir, `${record.status.id}.json`), record);
  }

  forgetSandbox(id: string): void {
    rmSync(join(this.sandboxDir, `${id}.json`), { force: true });
  }

  /** `bundle`: the container's bundle directory. */
  saveContainer(bundle: string, record: ContainerRecord): void {
    writeWhole(join(bundle, ContainerFile), record);
  }

  /** Every sandbox recorded (an unreadable record is removed). */
  sandboxes(): SandboxRecord[] {
    return records<SandboxRecord>(this.sandboxDir, (r) => r.status?.id);
  }

  savePooled(record: PooledRecord): void {
    mkdirSync(this.poolDir, { recursive: true });
    writeWhole(join(this.poolDir, `${record.id}.json`), record);
  }

  forgetPooled(id: string): void {
    rmSync(join(this.poolDir, `${id}.json`), { force: true });
  }

  /** Every pooled network recorded (an unreadable record is removed). */
  pooled(): PooledRecord[] {
    return records<PooledRecord>(this.poolDir, (r) => (typeof r.cidr === 'string' ? r.id : undefined));
  }

  /** Every bundle directory, with its container's record when it has a readable one. */
  bundles(): { bundle: string; record?: ContainerRecord }[] {
    let names: string[];
    try {
      names = readdirSync(this.containers);
    } catch {
      return [];
    }
    return names.map((n) => {
      const bundle = join(this.containers, n);
      const record = readJson<ContainerRecord>(join(bundle, ContainerFile));
      return { bundle, record: record?.status?.id === n ? record : undefined };
    });
  }
}
