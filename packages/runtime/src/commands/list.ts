/**
 * `func-runtime list`: the functions deployed in a namespace (Knative Services and raw
 * Deployments) with their URL, ready state and latest revision, as `func list` shows them; or as
 * JSON / YAML for scripts.
 */
import type { Argv, CommandModule } from 'yargs';
import type { FunctionLine } from '../deploy/revisions.js';
import type { Exit } from '../lifecycle.js';
import { withClusterFlags, type ClusterFlags } from './deploy-flags.js';
import { table } from './describe.js';

interface ListArgs extends ClusterFlags {
  output?: 'json' | 'yaml';
}

export function formatList(namespace: string, functions: FunctionLine[]): string {
  if (!functions.length) return `No functions in namespace ${namespace}.\n`;
  return `${table([['NAME', 'KIND', 'URL', 'READY', 'LATEST REVISION'], ...functions.map((f) => [f.name, f.kind === 'KnativeService' ? 'ksvc' : 'deployment', f.url ?? '-', f.ready ? 'True' : 'False', f.latestRevision ?? '-'])]).join('\n')}\n`;
}

async function list(argv: ListArgs): Promise<void> {
  const { listFunctions } = await import('../deploy/revisions.js');
  const { namespace, functions } = await listFunctions({ ...argv, path: '.' });
  if (argv.output === 'json') process.stdout.write(`${JSON.stringify(functions, null, 2)}\n`);
  else if (argv.output === 'yaml') process.stdout.write((await import('yaml')).stringify(functions));
  else process.stdout.write(formatList(namespace, functions));
}

export function listCommand(exit: Exit, onError: (err: unknown) => void): CommandModule<object, ListArgs> {
  return {
    command: 'list',
    describe: 'List the functions deployed in a namespace: URL, ready, latest revision',
    builder: (y) => withClusterFlags(y).option('output', { alias: 'o', choices: ['json', 'yaml'] as const, describe: 'machine-readable output' }) as unknown as Argv<ListArgs>,
    handler: (argv) => list(argv).then(() => exit(0), onError),
  };
}
