/**
 * Reading kubeconfig files and merging them as kubectl does: across the KUBECONFIG list, the first
 * file that defines a cluster, user or context name wins, and the first non-empty current-context
 * wins. Every entry remembers the file and index it came from, so an error names both.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { KubeconfigError } from './errors.js';

export interface Located<T> {
  value: T;
  file: string;
  /** e.g. `clusters[2].cluster` */
  field: string;
}

export interface MergedKubeconfig {
  files: string[];
  currentContext?: Located<string>;
  clusters: Map<string, Located<Record<string, unknown>>>;
  users: Map<string, Located<Record<string, unknown>>>;
  contexts: Map<string, Located<Record<string, unknown>>>;
}

const SECTIONS = [['clusters', 'cluster'], ['users', 'user'], ['contexts', 'context']] as const;

function readDoc(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new KubeconfigError(`kubeconfig ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  let doc: unknown;
  try {
    doc = parse(text, { maxAliasCount: 100 });
  } catch (err) {
    throw new KubeconfigError(`kubeconfig ${file}: not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new KubeconfigError(`kubeconfig ${file}: the top level must be a mapping (apiVersion, clusters, users, contexts…)`);
  return doc as Record<string, unknown>;
}

function mergeSection(target: MergedKubeconfig[(typeof SECTIONS)[number][0]], doc: Record<string, unknown>, file: string, section: string, inner: string): void {
  const list = doc[section];
  if (list === undefined || list === null) return;
  if (!Array.isArray(list)) throw new KubeconfigError(`kubeconfig ${file}: ${section} must be a list`);
  list.forEach((item: unknown, i) => {
    const at = `${section}[${i}]`;
    if (!item || typeof item !== 'object') throw new KubeconfigError(`kubeconfig ${file}: ${at} must be a mapping with name and ${inner}`);
    const { name, [inner]: body } = item as Record<string, unknown>;
    if (typeof name !== 'string' || name === '') throw new KubeconfigError(`kubeconfig ${file}: ${at}.name is missing`);
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw new KubeconfigError(`kubeconfig ${file}: ${at}.${inner} is missing or not a mapping (${section.slice(0, -1)} "${name}")`);
    if (!target.has(name)) target.set(name, { value: body as Record<string, unknown>, file, field: `${at}.${inner}` });
  });
}

/** Merges the files in order; a missing file is an error (callers drop missing KUBECONFIG entries first). */
export function mergeKubeconfigFiles(files: string[]): MergedKubeconfig {
  const merged: MergedKubeconfig = { files, clusters: new Map(), users: new Map(), contexts: new Map() };
  for (const file of files) {
    const doc = readDoc(file);
    for (const [section, inner] of SECTIONS) mergeSection(merged[section], doc, file, section, inner);
    const current = doc['current-context'];
    if (current !== undefined && current !== null && typeof current !== 'string') throw new KubeconfigError(`kubeconfig ${file}: current-context must be a string`);
    if (!merged.currentContext && current) merged.currentContext = { value: current, file, field: 'current-context' };
  }
  return merged;
}
