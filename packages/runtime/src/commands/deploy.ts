/**
 * `func-runtime deploy [path]`: build the function's image, apply it to the cluster, wait until it
 * serves, say where (deploy/deploy.ts). `--dry-run -o yaml` prints what would be applied.
 * @func/oci and @func/kube-client load only when this command runs.
 */
import type { Argv, CommandModule } from 'yargs';
import type { Exit } from '../lifecycle.js';
import { withClusterFlags, withImageFlags, type ClusterFlags, type ImageFlags } from './deploy-flags.js';

interface DeployArgs extends ImageFlags, ClusterFlags {
  path: string;
  dryRun: boolean;
  output: 'yaml' | 'json';
  wait: boolean;
  timeout: number;
  deployer?: 'knative' | 'raw';
}

async function printManifests(argv: DeployArgs): Promise<void> {
  const { plan } = await import('../deploy/deploy.js');
  const { stringify } = await import('yaml');
  const { planned, cluster } = await plan({ ...argv, timeoutSeconds: argv.timeout, env: process.env, log: process.stderr });
  cluster?.kube.close();
  if (argv.output === 'json') process.stdout.write(`${JSON.stringify({ apiVersion: 'v1', kind: 'List', items: planned.manifests }, null, 2)}\n`);
  else process.stdout.write(planned.manifests.map((m) => stringify(m, { lineWidth: 0, aliasDuplicateObjects: false })).join('---\n'));
}

async function deployNow(argv: DeployArgs): Promise<void> {
  const { deploy } = await import('../deploy/deploy.js');
  const result = await deploy({ ...argv, timeoutSeconds: argv.timeout, env: process.env, log: process.stderr });
  const out = process.stdout;
  out.write(`func-runtime: deployed ${result.project.name} to namespace ${result.namespace} in ${(result.ms / 1000).toFixed(1)} s (${result.image.pinned})\n`);
  for (const t of result.triggers?.applied ?? []) out.write(`func-runtime: Trigger ${t} delivers to ${result.project.name}\n`);
  for (const t of result.triggers?.deleted ?? []) out.write(`func-runtime: deleted stale Trigger ${t}\n`);
  const width = Math.max(0, ...(result.where?.lines ?? []).map(([label]) => label.length));
  for (const [label, value] of result.where?.lines ?? []) out.write(`  ${label.padEnd(width)}  ${value}\n`);
}

export function deployCommand(exit: Exit, onError: (err: unknown) => void): CommandModule<object, DeployArgs> {
  return {
    command: 'deploy [path]',
    describe: 'Build the function\'s image and run it on the cluster (a Deployment + Service, or a Knative Service), then say where it answers',
    builder: (y) =>
      withImageFlags(withClusterFlags(y.positional('path', { type: 'string', default: '.', describe: 'function directory (with func.yaml)' })))
        .option('dry-run', { type: 'boolean', default: false, describe: 'build the image (not pushed) and print the manifests instead of applying them' })
        .option('output', { alias: 'o', choices: ['yaml', 'json'] as const, default: 'yaml' as const, describe: 'format of --dry-run\'s manifests' })
        .option('wait', { type: 'boolean', default: true, describe: 'wait until the new version serves (--no-wait: return once applied)' })
        .option('timeout', { type: 'number', default: 120, describe: 'seconds to wait for the rollout' })
        .option('deployer', { choices: ['knative', 'raw'] as const, describe: 'knative: a Knative Service (revisions, a URL through the gateway); raw: a Deployment and a Service [default: knative where the cluster serves serving.knative.dev/v1 Services, else raw]' }) as unknown as Argv<DeployArgs>,
    handler: (argv) => (argv.dryRun ? printManifests(argv) : deployNow(argv)).then(() => exit(0), onError),
  };
}
