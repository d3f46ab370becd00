/**
 * `func-runtime subscribe --filter type=x [--source broker]`: Knative func's `func subscribe`. Adds a
 * subscription to func.yaml `deploy.subscriptions` (func-yaml-lists.ts); the next deploy makes its
 * Trigger (deploy/triggers.ts), and a subscription removed from the file loses its Trigger then.
 */
import type { Argv, CommandModule } from 'yargs';
import type { Exit } from '../lifecycle.js';

interface SubscribeArgs {
  path: string;
  filter: string[];
  source: string;
}

async function subscribe(argv: SubscribeArgs): Promise<void> {
  const [{ addEntry, parseKeyValue, subscriptions }, { loadProject }, { triggerName }] = await Promise.all([import('../func-yaml-lists.js'), import('../project.js'), import('../deploy/triggers.js')]);
  const filters = Object.fromEntries(argv.filter.map((f) => parseKeyValue(f, '--filter', 'type=com.example.order')));
  const project = await loadProject(argv.path);
  const entry = { source: argv.source, ...(Object.keys(filters).length ? { filters } : {}) };
  const outcome = await addEntry(project, subscriptions, entry);
  const what = `${project.name} to Broker ${argv.source}${Object.keys(filters).length ? ` for ${Object.entries(filters).map(([k, v]) => `${k}=${v}`).join(', ')}` : ' for every event'}`;
  process.stdout.write(outcome === 'unchanged'
    ? `func-runtime: func.yaml already subscribes ${what}\n`
    : `func-runtime: subscribed ${what} in func.yaml deploy.subscriptions; the next deploy makes Trigger ${triggerName(project.name, entry)}\n`);
}

export function subscribeCommand(exit: Exit, onError: (err: unknown) => void): CommandModule<object, SubscribeArgs> {
  return {
    command: 'subscribe',
    describe: 'Subscribe the function to CloudEvents from a Broker (func.yaml deploy.subscriptions; deploy makes the Trigger)',
    builder: (y) =>
      y.option('filter', { alias: 'f', type: 'string', array: true, default: [], describe: 'attribute=value an event must have (repeatable): type=com.example.order, source=…, an extension' })
        .option('source', { alias: 's', type: 'string', default: 'default', describe: 'the Broker\'s name' })
        .option('path', { alias: 'p', type: 'string', default: '.', describe: 'function directory (its func.yaml)' }) as unknown as Argv<SubscribeArgs>,
    handler: (argv) => subscribe(argv).then(() => exit(0), onError),
  };
}
