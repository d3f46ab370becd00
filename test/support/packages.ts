import { mkdir, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeResult, run } from './process.js';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/**
 * npm settings of every npm the tests run: one cache shared across runs (so a second run
 * installs from disk), preferring it to the network, no audit or funding requests.
 */
export function npmEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  // Drop what the outer `npm test` / vitest put in the environment: npm_* settings of the
  // repo's own npm, and VITEST* variables that would make a project's vitest think it is nested.
  // FORCE_COLOR too: output is matched as plain text.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(npm_|VITEST|FORCE_COLOR)/i.test(key)));
  return {
    ...inherited,
    NO_COLOR: '1',
    npm_config_cache: process.env.FUNC_E2E_NPM_CACHE ?? join(tmpdir(), 'func-e2e-npm-cache'),
    npm_config_prefer_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
    ...extra,
  };
}

export interface Tarballs {
  runtime: string;
  oci: string;
  kubeClient: string;
  templates: string;
  createFunc: string;
}

/** The packages a function project installs from the @func scope: the runtime and what it depends on. */
export const runtimePackages = (packs: Tarballs) => [
  { tarball: packs.runtime, packageJson: join(repoRoot, 'packages', 'runtime', 'package.json') },
  { tarball: packs.oci, packageJson: join(repoRoot, 'packages', 'oci', 'package.json') },
  { tarball: packs.kubeClient, packageJson: join(repoRoot, 'packages', 'kube-client', 'package.json') },
];

export async function mustRun(command: string, args: string[], cwd: string, env = npmEnv()): Promise<void> {
  const result = await run(command, args, { cwd, env });
  if (result.code !== 0) throw new Error(`${command} ${args.join(' ')} failed: ${describeResult(result)}`);
}

/** Builds the repo's packages and packs the ones a user installs, as npm publish would. */
export async function packPackages(destination: string): Promise<Tarballs> {
  await mkdir(destination, { recursive: true });
  const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
  await mustRun(process.execPath, [tsc, '-b', 'packages/runtime', 'packages/templates', 'packages/create-func'], repoRoot);
  await mustRun('npm', ['pack', '--pack-destination', destination, '-w', '@func/runtime', '-w', '@func/oci', '-w', '@func/kube-client', '-w', '@func/templates', '-w', 'create-func'], repoRoot);
  const files = await readdir(destination);
  const find = (prefix: string) => {
    const file = files.find((f) => f.startsWith(prefix) && f.endsWith('.tgz'));
    if (!file) throw new Error(`npm pack made no ${prefix}*.tgz in ${destination}: ${files.join(', ')}`);
    return join(destination, file);
  };
  return { runtime: find('func-runtime-'), oci: find('func-oci-'), kubeClient: find('func-kube-client-'), templates: find('func-templates-'), createFunc: find('create-func-') };
}
