/**
 * The lists of func.yaml that `config envs|volumes|labels` and `subscribe` edit: `run.envs`,
 * `run.volumes`, `deploy.labels`, `deploy.subscriptions`. Each list says what identifies an entry
 * (adding one with the same identity replaces it), how it is shown, and what a valid entry is —
 * checked when it is added, with the words deploy would use, so a mistake is reported at the
 * command that made it rather than at the next deploy. The file is edited in place
 * (deploy/func-yaml-update.ts): comments and order stay.
 */
import { isSeq, type Document } from 'yaml';
import { CommandError } from './command-error.js';
import { containerEnv, containerVolumes, noReferences } from './deploy/envs.js';
import { editFuncYaml } from './deploy/func-yaml-update.js';
import { FuncYamlError, funcSchemaValidator, funcYamlProblem } from './func-yaml.js';
import type { EnvSpec, FunctionProject, SubscriptionSpec, VolumeSpec } from './project.js';
import { didYouMean } from './suggest.js';

export interface ListKind<E> {
  /** Where the list is in func.yaml. */
  path: string[];
  /** One entry, in messages. */
  noun: string;
  /** Entries with the same identity are the same entry. */
  id(entry: E): string;
  header: string[];
  row(entry: E): string[];
  /** Throws a CommandError that says what is wrong with the entry. */
  check(entry: E): void;
}

// Every {{ env:NAME }} is "set" while checking: whether this shell has it matters at deploy, not here.
const anyEnv = new Proxy({}, { get: () => '' }) as NodeJS.ProcessEnv;

export const envs: ListKind<EnvSpec> = {
  path: ['run', 'envs'],
  noun: 'environment variable',
  id: (e) => e.name ?? e.value ?? '',
  header: ['NAME', 'VALUE'],
  row: (e) => [e.name ?? '(all keys)', e.value ?? ''],
  check: (e) => void containerEnv([e], anyEnv, noReferences()),
};

export const volumes: ListKind<VolumeSpec> = {
  path: ['run', 'volumes'],
  noun: 'volume',
  id: (v) => v.path ?? '',
  header: ['PATH', 'TYPE', 'SOURCE'],
  row: (v) =>
    v.secret !== undefined ? [v.path ?? '', 'secret', v.secret]
    : v.configMap !== undefined ? [v.path ?? '', 'configMap', v.configMap]
    : v.persistentVolumeClaim !== undefined ? [v.path ?? '', 'pvc', `${v.persistentVolumeClaim.claimName ?? ''}${v.persistentVolumeClaim.readOnly ? ' (read-only)' : ''}`]
    : [v.path ?? '', 'emptyDir', v.emptyDir?.medium || '-'],
  check: (v) => void containerVolumes([v], noReferences()),
};

const LABEL_NAME = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** A Kubernetes label key: [prefix/]name, as the API server checks it. */
function labelKeyProblem(key: string): string | undefined {
  const slash = key.lastIndexOf('/');
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  const name = slash < 0 ? key : key.slice(slash + 1);
  if (prefix !== undefined && (prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))) return 'its prefix (before /) must be a DNS subdomain (lower case letters, digits, - and .)';
  if (!LABEL_NAME.test(name)) return 'its name must be 1-63 letters, digits, -, _ or ., starting and ending with a letter or digit';
  return undefined;
}

export const labels: ListKind<{ key: string; value?: string }> = {
  path: ['deploy', 'labels'],
  noun: 'label',
  id: (l) => l.key,
  header: ['KEY', 'VALUE'],
  row: (l) => [l.key, l.value ?? ''],
  check: (l) => {
    const problem = labelKeyProblem(l.key);
    if (problem) throw new CommandError(`Label key ${JSON.stringify(l.key)} is not valid: ${problem}.`);
    const value = l.value ?? '';
    if (value !== '' && !LABEL_NAME.test(value)) throw new CommandError(`Label value ${JSON.stringify(value)} (key ${l.key}) is not valid: at most 63 letters, digits, -, _ or ., starting and ending with a letter or digit.`);
  },
};

const filterText = (filters: Record<string, string> | undefined) => Object.keys(filters ?? {}).sort().map((k) => `${k}=${filters![k]}`).join(',');

export const subscriptions: ListKind<SubscriptionSpec> = {
  path: ['deploy', 'subscriptions'],
  noun: 'subscription',
  id: (s) => `${s.source}|${filterText(s.filters)}`,
  header: ['BROKER', 'FILTERS'],
  row: (s) => [s.source, filterText(s.filters) || '(every event)'],
  check: (s) => {
    if (!DNS_SUBDOMAIN.test(s.source) || s.source.length > 253) throw new CommandError(`Broker name ${JSON.stringify(s.source)} is not valid: lower case letters, digits, - and ., starting and ending with a letter or digit.`);
    for (const attribute of Object.keys(s.filters ?? {})) {
      if (!/^[a-z0-9]{1,20}$/.test(attribute)) throw new CommandError(`--filter ${attribute}=…: a CloudEvent attribute name is 1-20 lower case letters or digits (type, source, subject, or an extension).`);
    }
  },
};

/** `key=value` (the first = splits); `what` names the flag in the error. */
export function parseKeyValue(text: string, what: string, example: string): [string, string] {
  const at = text.indexOf('=');
  if (at <= 0) throw new CommandError(`${what} ${JSON.stringify(text)}: expected key=value (for example ${example}).`);
  return [text.slice(0, at), text.slice(at + 1)];
}

export function listEntries<E>(project: FunctionProject, kind: ListKind<E>): E[] {
  let cur: unknown = project.doc;
  for (const key of kind.path) cur = (cur as Record<string, unknown> | undefined)?.[key];
  return Array.isArray(cur) ? (cur as E[]) : [];
}

async function schemaCheck(file: string): Promise<(data: unknown) => void> {
  const validate = await funcSchemaValidator();
  return (doc) => {
    const problem = funcYamlProblem({ file, doc }, validate);
    if (problem) throw new FuncYamlError(problem);
  };
}

function entryIndex<E>(doc: Document, kind: ListKind<E>, id: string): number {
  const seq = doc.getIn(kind.path);
  return isSeq(seq) ? seq.items.findIndex((item) => kind.id((item as { toJSON(): E }).toJSON()) === id) : -1;
}

/** Adds the entry, or replaces the one with its identity: 'added', 'replaced' or 'unchanged'. */
export async function addEntry<E>(project: FunctionProject, kind: ListKind<E>, entry: E): Promise<'added' | 'replaced' | 'unchanged'> {
  kind.check(entry);
  let outcome: 'added' | 'replaced' = 'added';
  const changed = editFuncYaml(project.file, (doc) => {
    const seq = doc.getIn(kind.path);
    if (!isSeq(seq)) return doc.setIn(kind.path, doc.createNode([entry]));
    const at = entryIndex(doc, kind, kind.id(entry));
    if (at < 0) return void seq.items.push(doc.createNode(entry));
    outcome = 'replaced';
    if (JSON.stringify((seq.items[at] as { toJSON(): E }).toJSON()) !== JSON.stringify(entry)) seq.items[at] = doc.createNode(entry);
  }, await schemaCheck(project.file));
  return changed ? outcome : 'unchanged';
}

/** Removes the entry with that identity; a CommandError naming the ones there are when none has it. */
export async function removeEntry<E>(project: FunctionProject, kind: ListKind<E>, id: string): Promise<E> {
  const entries = listEntries(project, kind);
  const entry = entries.find((e) => kind.id(e) === id);
  if (entry === undefined) {
    const ids = entries.map((e) => kind.id(e));
    throw new CommandError(`func.yaml ${kind.path.join('.')} has no ${kind.noun} ${JSON.stringify(id)}.${didYouMean(id, ids)}${ids.length ? ` It has: ${ids.join(', ')}.` : ' It has none.'}`);
  }
  editFuncYaml(project.file, (doc) => {
    const seq = doc.getIn(kind.path);
    if (!isSeq(seq)) return;
    seq.items.splice(entryIndex(doc, kind, id), 1);
    if (seq.items.length === 0) doc.deleteIn(kind.path);
  }, await schemaCheck(project.file));
  return entry;
}
