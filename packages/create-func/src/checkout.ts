/**
 * create-func run from a checkout of the func repository (`node packages/create-func/dist/cli.js`,
 * or `npm create func` inside it) makes a project that installs before anything is published: the
 * checkout's `@func/runtime` and the two packages it depends on (`@func/oci`, `@func/kube-client`)
 * are packed with `npm pack` into the project's `vendor/`, and its package.json depends on those
 * tarballs (`file:vendor/…`), so the project installs from a clean clone and from a copy of itself
 * elsewhere. From an installed create-func (the published form) the project depends on the
 * registry's `@func/runtime`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CreateError } from './errors.js';
import { npmOutput } from './install.js';

export type DependencySource = 'checkout' | 'registry';

/** The packages a project needs from the checkout, with a file that exists once each is built. */
export const CheckoutPackages = [
  { name: '@func/runtime', dir: 'packages/runtime', built: 'dist/cli.js' },
  { name: '@func/oci', dir: 'packages/oci', built: 'dist/index.js' },
  { name: '@func/kube-client', dir: 'packages/kube-client', built: 'dist/index.js' },
] as const;

export const VendorDir = 'vendor';

const packageName = (file: string): string | undefined => {
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { name?: string }).name;
  } catch {
    return undefined;
  }
};

/** The root of the func checkout this create-func runs from, or undefined for an installed one. */
export function checkoutRoot(self = fileURLToPath(new URL('..', import.meta.url))): string | undefined {
  const root = resolve(self, '..', '..');
  const isWorkspace = existsSync(join(root, 'package.json')) && (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { workspaces?: unknown }).workspaces !== undefined;
  return isWorkspace && CheckoutPackages.every((p) => packageName(join(root, p.dir, 'package.json')) === p.name) ? root : undefined;
}

/**
 * Packs the checkout's packages into `<projectDir>/vendor` and points the project's package.json
 * at them. The checkout must be built (`npm run build`): a package is its dist/.
 */
export async function vendorCheckout(root: string, projectDir: string, signal: AbortSignal, env?: NodeJS.ProcessEnv): Promise<string[]> {
  const unbuilt = CheckoutPackages.filter((p) => !existsSync(join(root, p.dir, p.built)));
  if (unbuilt.length > 0) throw new CreateError(`the checkout at ${root} is not built (${unbuilt.map((p) => p.name).join(', ')}): run \`npm run build\` there first, or pass --deps registry for the published packages`);
  const destination = join(projectDir, VendorDir);
  await mkdir(destination, { recursive: true });
  const out = await npmOutput(['pack', ...CheckoutPackages.flatMap((p) => ['-w', p.name]), '--pack-destination', destination, '--json', '--silent'], root, signal, env);
  let packed: { name: string; filename: string }[];
  try {
    packed = JSON.parse(out) as typeof packed;
  } catch {
    throw new CreateError('npm pack printed something other than its JSON report; nothing was created');
  }
  const file = (name: string) => packed.find((p) => p.name === name)?.filename;
  const missing = CheckoutPackages.filter((p) => !file(p.name));
  if (missing.length > 0) throw new CreateError(`npm pack did not pack ${missing.map((p) => p.name).join(', ')}; nothing was created`);
  const manifestPath = join(projectDir, 'package.json');
  const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as { dependencies?: Record<string, string> };
  manifest.dependencies = { ...manifest.dependencies, ...Object.fromEntries(CheckoutPackages.map((p) => [p.name, `file:${VendorDir}/${file(p.name)}`])) };
  await writeFile(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  return CheckoutPackages.map((p) => `${VendorDir}/${file(p.name)}`);
}
