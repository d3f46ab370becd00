import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { checkoutRoot, vendorCheckout } from '../src/checkout.js';
import { CreateError } from '../src/errors.js';
import { removeTempDirs, tempDir } from './helpers.js';

afterAll(removeTempDirs);

const packageDir = fileURLToPath(new URL('..', import.meta.url));

describe('the checkout create-func runs from', () => {
  it('is the repository for this package, and none for a create-func installed elsewhere', async () => {
    expect(checkoutRoot(packageDir)).toBe(join(packageDir, '..', '..'));
    const installed = join(await tempDir(), 'node_modules', 'create-func');
    await mkdir(installed, { recursive: true });
    expect(checkoutRoot(installed)).toBeUndefined();
  });

  it('a workspace whose packages are not the func ones is no checkout', async () => {
    const root = await tempDir();
    await writeFile(join(root, 'package.json'), JSON.stringify({ workspaces: ['packages/*'] }));
    for (const dir of ['runtime', 'oci', 'kube-client']) {
      await mkdir(join(root, 'packages', dir), { recursive: true });
      await writeFile(join(root, 'packages', dir, 'package.json'), JSON.stringify({ name: `other-${dir}` }));
    }
    expect(checkoutRoot(join(root, 'packages', 'create-func'))).toBeUndefined();
  });

  it('refuses to pack an unbuilt checkout, saying what to run', async () => {
    const root = await tempDir();
    const project = await tempDir();
    const failed = await vendorCheckout(root, project, new AbortController().signal).then(() => undefined, (e: unknown) => e);
    expect(failed).toBeInstanceOf(CreateError);
    expect((failed as Error).message).toMatch(/is not built \(@func\/runtime, @func\/oci, @func\/kube-client\): run `npm run build` there first, or pass --deps registry/);
  });
});
