/**
 * A function project as `build --image`, `deploy` and the commands around them see it: its
 * directory, its func.yaml (required: the function's name comes from it, as for Knative's func)
 * checked against func.schema.json, and the entry an image is built from.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { FuncYamlError, funcSchemaValidator, checkFuncYaml, parseFuncYaml } from './func-yaml.js';
import { resolveEntry, type ResolvedEntry } from './loader.js';

/** A `run.envs` entry: `value` may be `{{ env:NAME }}`, `{{ secret:name[:key] }}`, `{{ configMap:name[:key] }}`. */
export interface EnvSpec {
  name?: string;
  value?: string;
}

/** A `run.volumes` entry: exactly one source, mounted at `path`. */
export interface VolumeSpec {
  secret?: string;
  configMap?: string;
  persistentVolumeClaim?: { claimName?: string; readOnly?: boolean };
  emptyDir?: { medium?: '' | 'Memory'; sizeLimit?: string };
  path?: string;
}

export interface ScaleSpec {
  min?: number;
  max?: number;
  metric?: 'concurrency' | 'rps';
  target?: number;
  utilization?: number;
}

export interface ResourcesSpec {
  requests?: { cpu?: string; memory?: string };
  limits?: { cpu?: string; memory?: string; concurrency?: number };
}

export interface SubscriptionSpec {
  /** The Broker's name. */
  source: string;
  /** CloudEvent attributes an event must have (exact match). */
  filters?: Record<string, string>;
}

/** The fields of func.yaml (func.schema.json) the deploy commands read and write. */
export interface FuncYamlDoc {
  specVersion: string;
  name: string;
  runtime?: string;
  registry?: string;
  image?: string;
  imageDigest?: string;
  namespace?: string;
  build?: { builderImages?: Record<string, string> };
  run?: { envs?: EnvSpec[]; volumes?: VolumeSpec[] };
  deploy?: {
    namespace?: string;
    image?: string;
    annotations?: Record<string, string>;
    labels?: { key: string; value?: string }[];
    options?: { scale?: ScaleSpec; resources?: ResourcesSpec };
    healthEndpoints?: { liveness?: string; readiness?: string };
    serviceAccountName?: string;
    subscriptions?: SubscriptionSpec[];
  };
}

export interface FunctionProject {
  dir: string;
  /** func.yaml's path. */
  file: string;
  doc: FuncYamlDoc;
  name: string;
}

export async function loadProject(path = '.'): Promise<FunctionProject> {
  const dir = resolve(path);
  const yaml = parseFuncYaml(dir);
  if (!yaml) {
    throw new FuncYamlError(`No func.yaml in ${dir}: building an image or deploying needs the function's name from it. Create the project with \`npm create func\`, or add a func.yaml with \`specVersion: 0.36.0\` and \`name: <a DNS label>\`.`);
  }
  const doc = checkFuncYaml(yaml, await funcSchemaValidator()) as FuncYamlDoc;
  return { dir, file: yaml.file, doc, name: doc.name };
}

const SOURCE_NAMES = ['index.ts', 'index.mts'];

/**
 * What an image is built from: the TypeScript source when the project has one (esbuild compiles
 * it), never a compiled `main` that may predate the last edit; otherwise the entry `func-runtime`
 * would serve.
 */
export function sourceEntry(dir: string): ResolvedEntry {
  for (const base of [dir, join(dir, 'src')]) {
    for (const name of SOURCE_NAMES) if (existsSync(join(base, name))) return { file: join(base, name), dir };
  }
  return resolveEntry(dir);
}
