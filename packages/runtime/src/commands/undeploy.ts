/**
 * `func-runtime delete [path]` (also `undeploy`): remove a deployed function from the cluster — its
 * Triggers, its Service and its Deployment (the Deployment's ReplicaSets and pods go with it), or
 * its Knative Service — as Knative's `func delete` does.
 */
import type { Argv, CommandModule } from 'yargs';
import type { Exit } from '../lifecycle.js';
import { withTargetFlags, type TargetFlags } from './deploy-flags.js';

interface UndeployArgs extends TargetFlags {
  ignoreNotFound: boolean;
}

async function undeploy(argv: UndeployArgs & { _: (string | number)[] }): Promise<void> {
  const { removeFunction } = await import('../deploy/undeploy.js');
  const removed = await removeFunction(argv);
  if (removed.length === 0) return;
  process.stdout.write(`func-runtime: ${argv._[0] === 'delete' ? 'deleted' : 'undeployed'} ${removed.join(', ')}\n`);
}

export function undeployCommand(exit: Exit, onError: (err: unknown) => void): CommandModule<object, UndeployArgs> {
  return {
    command: 'delete [path]',
    aliases: ['undeploy'],
    describe: 'Remove a deployed function (its Deployment, Service and Triggers, or its Knative Service) from the cluster',
    builder: (y) => withTargetFlags(y).option('ignore-not-found', { type: 'boolean', default: false, describe: 'succeed when nothing of that name is deployed' }) as unknown as Argv<UndeployArgs>,
    handler: (argv) => undeploy(argv).then(() => exit(0), onError),
  };
}
