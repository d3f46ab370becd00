/**
 * `func-runtime config envs|volumes|labels [add|remove|list]`: Knative func's `func config`, editing
 * func.yaml's `run.envs`, `run.volumes` and `deploy.labels` (func-yaml-lists.ts) in place. `add`
 * and `remove` take flags; on a terminal they ask for what the flags leave out. The next deploy
 * applies the change.
 */
import type { Argv, CommandModule } from 'yargs';
import { CommandError } from '../command-error.js';
import type { ListKind } from '../func-yaml-lists.js';
import type { Exit } from '../lifecycle.js';
import type { EnvSpec, VolumeSpec } from '../project.js';
import { table } from './describe.js';
import type { Prompter } from './prompt.js';

interface ConfigArgs {
  path: string;
  output?: 'json' | 'yaml';
  name?: string;
  value?: string;
  key?: string;
  type?: 'secret' | 'configMap' | 'pvc' | 'emptyDir';
  source?: string;
  mountPath?: string;
  readOnly?: boolean;
  medium?: '' | 'Memory';
}

/** A flag's value, else the answer on a terminal, else the error that names the flag. */
type Ask = (flag: keyof ConfigArgs & string, question: string, opts?: { choices?: readonly string[]; fallback?: string }) => Promise<string>;

interface Section<E> {
  name: 'envs' | 'volumes' | 'labels';
  /** The flag `remove` names an entry by (its identity, as the list kind reads it), and its alias. */
  removeFlag: { flag: 'name' | 'key' | 'mountPath'; alias?: string };
  kind: () => Promise<ListKind<E>>;
  describe: string;
  addFlags<T>(y: Argv<T>): Argv<T>;
  /** The entry from the flags; `ask` asks on a terminal (`prompting`) for what they leave out. */
  entry(argv: ConfigArgs, ask: Ask, prompting: boolean): Promise<E>;
}

const VOLUME_TYPES = ['secret', 'configMap', 'pvc', 'emptyDir'] as const;

const envsSection: Section<EnvSpec> = {
  name: 'envs',
  removeFlag: { flag: 'name' },
  kind: async () => (await import('../func-yaml-lists.js')).envs,
  describe: 'environment variables (func.yaml run.envs)',
  addFlags: (y) =>
    y.option('name', { type: 'string', describe: 'the variable\'s name (none: --value imports every key of a Secret or ConfigMap)' })
      .option('value', { type: 'string', describe: 'text, {{ env:LOCAL }}, {{ secret:name:key }}, {{ configMap:name:key }}, or without --name {{ secret:name }} / {{ configMap:name }}' }),
  async entry(argv, ask, prompting) {
    const name = argv.name ?? (argv.value === undefined && prompting ? await ask('name', 'Variable name (empty: import every key of a Secret or ConfigMap)', { fallback: '' }) : undefined);
    const value = await ask('value', name ? `Value of ${name} (text, {{ env:LOCAL }}, {{ secret:name:key }}, {{ configMap:name:key }})` : 'Import from ({{ secret:name }} or {{ configMap:name }})');
    return name ? { name, value } : { value };
  },
};

const volumesSection: Section<VolumeSpec> = {
  name: 'volumes',
  removeFlag: { flag: 'mountPath' },
  kind: async () => (await import('../func-yaml-lists.js')).volumes,
  describe: 'volumes mounted into the function (func.yaml run.volumes)',
  addFlags: (y) =>
    y.option('type', { choices: VOLUME_TYPES, describe: 'what to mount' })
      .option('source', { type: 'string', describe: 'the Secret, ConfigMap or PersistentVolumeClaim\'s name' })
      .option('mount-path', { type: 'string', describe: 'absolute path in the container' })
      .option('read-only', { type: 'boolean', describe: 'pvc: mount read-only' })
      .option('medium', { choices: ['', 'Memory'] as const, describe: 'emptyDir: Memory for a tmpfs' }),
  async entry(argv, ask) {
    const type = (await ask('type', 'Volume type', { choices: VOLUME_TYPES })) as (typeof VOLUME_TYPES)[number];
    const source = type === 'emptyDir' ? '' : await ask('source', `Name of the ${type === 'pvc' ? 'PersistentVolumeClaim' : type}`);
    const path = await ask('mountPath', 'Mount path (absolute)');
    if (type === 'secret') return { secret: source, path };
    if (type === 'configMap') return { configMap: source, path };
    if (type === 'pvc') return { persistentVolumeClaim: { claimName: source, ...(argv.readOnly ? { readOnly: true } : {}) }, path };
    return { emptyDir: argv.medium ? { medium: argv.medium } : {}, path };
  },
};

const labelsSection: Section<{ key: string; value?: string }> = {
  name: 'labels',
  removeFlag: { flag: 'key', alias: 'name' },
  kind: async () => (await import('../func-yaml-lists.js')).labels,
  describe: 'labels of the function\'s objects and pods (func.yaml deploy.labels)',
  addFlags: (y) => y.option('key', { alias: 'name', type: 'string', describe: 'label key ([prefix/]name)' }).option('value', { type: 'string', describe: 'label value' }),
  async entry(_argv, ask) {
    const key = await ask('key', 'Label key');
    return { key, value: await ask('value', `Value of ${key}`, { fallback: '' }) };
  },
};

const flagName = (flag: string) => flag.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

function asker(argv: ConfigArgs, command: string, prompter: Prompter | undefined): Ask {
  return async (flag, question, opts = {}) => {
    const given = argv[flag];
    if (given !== undefined) return String(given);
    if (!prompter) {
      if (opts.fallback !== undefined) return opts.fallback;
      throw new CommandError(`${command}: --${flagName(flag)} is required (stdin is not a terminal, so there is nothing to ask on).`);
    }
    return opts.choices ? prompter.choose(question, opts.choices) : prompter.text(question, opts.fallback);
  };
}

const withPath = <T>(y: Argv<T>) => y.option('path', { alias: 'p', type: 'string', default: '.', describe: 'function directory (its func.yaml)' });
const out = (line: string) => process.stdout.write(`func-runtime: ${line}\n`);

type Action = (argv: ConfigArgs, prompter: Prompter | undefined) => Promise<void>;
const ACTIONS = ['list', 'add', 'remove'] as const;

/** What `config <section> list|add|remove` do; `prompter` asks on a terminal (undefined elsewhere). */
function sectionActions<E>(section: Section<E>): Record<(typeof ACTIONS)[number], Action> {
  const command = `config ${section.name}`;
  const project = async (argv: ConfigArgs) => (await import('../project.js')).loadProject(argv.path);
  return {
    async list(argv) {
      const [{ listEntries }, kind] = await Promise.all([import('../func-yaml-lists.js'), section.kind()]);
      const entries = listEntries(await project(argv), kind);
      if (argv.output === 'json') process.stdout.write(`${JSON.stringify(entries, null, 2)}\n`);
      else if (argv.output === 'yaml') process.stdout.write((await import('yaml')).stringify(entries));
      else process.stdout.write(entries.length ? `${table([kind.header, ...entries.map((e) => kind.row(e))]).join('\n')}\n` : `No ${kind.noun}s in func.yaml ${kind.path.join('.')}.\n`);
    },
    async add(argv, prompter) {
      const [{ addEntry }, kind, p] = await Promise.all([import('../func-yaml-lists.js'), section.kind(), project(argv)]);
      const entry = await section.entry(argv, asker(argv, `${command} add`, prompter), prompter !== undefined);
      const outcome = await addEntry(p, kind, entry);
      out(outcome === 'unchanged' ? `func.yaml ${kind.path.join('.')} already has that ${kind.noun}` : `${outcome} ${kind.noun} ${kind.id(entry)} in func.yaml ${kind.path.join('.')}; the next deploy applies it`);
    },
    async remove(argv, prompter) {
      const [{ listEntries, removeEntry }, kind, p] = await Promise.all([import('../func-yaml-lists.js'), section.kind(), project(argv)]);
      const idKey = section.removeFlag.flag;
      const ids = listEntries(p, kind).map((e) => kind.id(e));
      if (argv[idKey] === undefined && prompter && ids.length === 0) throw new CommandError(`func.yaml ${kind.path.join('.')} has no ${kind.noun}s to remove.`);
      const id = await asker(argv, `${command} remove`, prompter)(idKey, `Which ${kind.noun}?`, { choices: ids });
      await removeEntry(p, kind, id);
      out(`removed ${kind.noun} ${id} from func.yaml ${kind.path.join('.')}; the next deploy applies it`);
    },
  };
}

/** Runs an action with a prompter when stdin is a terminal, closed afterwards; exits 0 or reports. */
function runner(exit: Exit, onError: (err: unknown) => void) {
  return (action: (argv: ConfigArgs, prompter: Prompter | undefined) => Promise<void>) => async (argv: ConfigArgs) => {
    // node:readline loads only here: a cold start of the runtime never pays for it.
    const { interactive, terminalPrompter } = await import('./prompt.js');
    const prompter = interactive() ? terminalPrompter() : undefined;
    return action(argv, prompter).finally(() => prompter?.close()).then(() => exit(0), onError);
  };
}

function sectionCommand<E>(section: Section<E>, exit: Exit, onError: (err: unknown) => void): CommandModule<object, ConfigArgs> {
  const actions = sectionActions(section);
  const run = runner(exit, onError);
  return {
    command: section.name,
    describe: `List, add or remove ${section.describe}`,
    builder: (y) =>
      y.command({ command: ['list', '$0'], describe: `List the ${section.describe}`, builder: (l: Argv) => withPath(l).option('output', { alias: 'o', choices: ['json', 'yaml'] as const, describe: 'machine-readable output' }), handler: run(actions.list) } as unknown as CommandModule<object, ConfigArgs>)
        .command({ command: 'add', describe: `Add one (or replace the one of the same ${flagName(section.removeFlag.flag)}); asks for what the flags leave out on a terminal`, builder: (a: Argv) => section.addFlags(withPath(a)), handler: run(actions.add) } as unknown as CommandModule<object, ConfigArgs>)
        .command({
          command: 'remove',
          describe: 'Remove one; on a terminal without the flag, pick it from the list',
          builder: (r: Argv) => withPath(r).option(flagName(section.removeFlag.flag), { type: 'string', describe: 'which one', ...(section.removeFlag.alias ? { alias: section.removeFlag.alias } : {}) }),
          handler: run(actions.remove),
        } as unknown as CommandModule<object, ConfigArgs>) as unknown as Argv<ConfigArgs>,
    handler: () => undefined,
  };
}

const SECTIONS = [envsSection, volumesSection, labelsSection] as Section<unknown>[];

/** `config` alone: on a terminal, asks what to configure and how, as Knative's `func config`; elsewhere names the choices. */
async function configMenu(argv: ConfigArgs, prompter: Prompter | undefined): Promise<void> {
  if (!prompter) throw new CommandError('config: name what to configure — config envs|volumes|labels [list|add|remove] (stdin is not a terminal, so there is nothing to ask on).');
  const name = await prompter.choose('What to configure?', SECTIONS.map((s) => s.name));
  const action = (await prompter.choose(`${name}: do what?`, ACTIONS)) as (typeof ACTIONS)[number];
  await sectionActions(SECTIONS.find((s) => s.name === name)!)[action](argv, prompter);
}

export function configCommand(exit: Exit, onError: (err: unknown) => void): CommandModule<object, ConfigArgs> {
  return {
    command: 'config',
    describe: 'Edit func.yaml: config envs|volumes|labels [list|add|remove]; alone, on a terminal, asks which',
    // --path here is for `config` alone (global: false); each subcommand declares its own.
    builder: (y) => SECTIONS.reduce((acc: Argv, s) => acc.command(sectionCommand(s, exit, onError)), y.option('path', { alias: 'p', type: 'string', default: '.', global: false, describe: 'function directory (its func.yaml)' })) as unknown as Argv<ConfigArgs>,
    handler: runner(exit, onError)(configMenu),
  };
}
