/**
 * `func-runtime secret create|list|delete`: the Kubernetes Secrets a function reads (func.yaml
 * `{{ secret:name:key }}`, `config volumes add --type secret`), in the function's namespace,
 * through the user's kubeconfig (deploy/secrets.ts). Values are never printed.
 */
import type { Argv, CommandModule } from 'yargs';
import type { Exit } from '../lifecycle.js';
import { withClusterFlags, type ClusterFlags } from './deploy-flags.js';
import { table } from './describe.js';

interface SecretArgs extends ClusterFlags {
  path: string;
  name: string;
  fromLiteral: string[];
  fromFile: string[];
  fromEnvFile: string[];
  output?: 'json' | 'yaml';
}

const withCommon = <T>(y: Argv<T>) => withClusterFlags(y.option('path', { alias: 'p', type: 'string', default: '.', describe: 'function directory: its func.yaml\'s namespace is used' }));

async function create(argv: SecretArgs): Promise<void> {
  const { createSecret } = await import('../deploy/secrets.js');
  const { namespace, keys } = await createSecret({ ...argv, literals: argv.fromLiteral, files: argv.fromFile, envFiles: argv.fromEnvFile });
  process.stdout.write(`func-runtime: created Secret ${namespace}/${argv.name} with ${keys.length === 1 ? 'key' : 'keys'} ${keys.join(', ')}; use it in func.yaml as {{ secret:${argv.name}:${keys[0]} }}\n`);
}

async function list(argv: SecretArgs): Promise<void> {
  const { listSecrets } = await import('../deploy/secrets.js');
  const { namespace, secrets } = await listSecrets(argv);
  if (argv.output === 'json') process.stdout.write(`${JSON.stringify(secrets, null, 2)}\n`);
  else if (argv.output === 'yaml') process.stdout.write((await import('yaml')).stringify(secrets));
  else process.stdout.write(secrets.length ? `${table([['NAME', 'TYPE', 'KEYS'], ...secrets.map((s) => [s.name, s.type, s.keys.join(',') || '-'])]).join('\n')}\n` : `No Secrets in namespace ${namespace}.\n`);
}

async function remove(argv: SecretArgs): Promise<void> {
  const { deleteSecret } = await import('../deploy/secrets.js');
  const { namespace } = await deleteSecret(argv);
  process.stdout.write(`func-runtime: deleted Secret ${namespace}/${argv.name}\n`);
}

export function secretCommand(exit: Exit, onError: (err: unknown) => void): CommandModule<object, object> {
  const run = (fn: (argv: SecretArgs) => Promise<void>) => (argv: SecretArgs) => fn(argv).then(() => exit(0), onError);
  const named = <T>(y: Argv<T>) => y.positional('name', { type: 'string', demandOption: true, describe: 'the Secret\'s name' });
  return {
    command: 'secret',
    describe: 'Create, list or delete the Kubernetes Secrets a function reads, in its namespace',
    builder: (y) =>
      y.command({
        command: 'create <name>',
        describe: 'Create a Secret from literals, files or an env file',
        builder: (c: Argv) =>
          withCommon(named(c))
            .option('from-literal', { type: 'string', array: true, default: [], describe: 'KEY=value (repeatable)' })
            .option('from-file', { type: 'string', array: true, default: [], describe: '[KEY=]path: the file\'s bytes under KEY [default: the file\'s name] (repeatable)' })
            .option('from-env-file', { type: 'string', array: true, default: [], describe: 'a .env file: one key per KEY=value line (repeatable)' }),
        handler: run(create),
      } as unknown as CommandModule<object, SecretArgs>)
        .command({ command: 'list', describe: 'List the Secrets of the namespace: names and keys, never values', builder: (l: Argv) => withCommon(l).option('output', { alias: 'o', choices: ['json', 'yaml'] as const, describe: 'machine-readable output' }), handler: run(list) } as unknown as CommandModule<object, SecretArgs>)
        .command({ command: 'delete <name>', describe: 'Delete a Secret', builder: (d: Argv) => withCommon(named(d)), handler: run(remove) } as unknown as CommandModule<object, SecretArgs>)
        .demandCommand(1, 'Name what to do: secret create|list|delete (func-runtime secret --help)'),
    handler: () => undefined,
  };
}
