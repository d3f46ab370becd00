/**
 * What the oci runtime keeps on disk of its sandboxes and containers, as CRI-O keeps its own state
 * beside runc's: a sandbox's record (`<dir>/sandboxes/<id>.json`: its config, namespace, CIDR,
 * hostPorts, IP) and a container's (`container.json` in its bundle: its CRI status and sandbox),
 * each written whole (a temporary file renamed over the old one) whenever it changes, and read back
 * when the node agent starts again, to adopt what still runs.
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

export class RuntimeState {
  private readonly sandboxDir: string;

  /** `dir`: the runtime's directory; containers' bundles are `<containers>/<id>`. */
  constructor(dir: string, private readonly containers: string) {
    this.sandboxDir = join(dir, 'sandboxes');
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
    let names: string[];
    try {
      names = readdirSync(this.sandboxDir).filter((n) => n.endsWith('.json'));
    } catch {
      return [];
    }
    const records: SandboxRecord[] = [];
    for (const n of names) {
      const record = readJson<SandboxRecord>(join(this.sandboxDir, n));
      if (record?.status?.id === n.slice(0, -'.json'.length)) records.push(record);
      else rmSync(join(this.sandboxDir, n), { force: true });
    }
    return records;
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
