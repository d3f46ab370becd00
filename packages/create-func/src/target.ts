import { randomBytes } from 'node:crypto';
import { cp, lstat, mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { CreateError } from './errors.js';

/** What is at the project path before we start: decides how the finished project is moved in. */
export type TargetState = 'absent' | 'empty' | 'non-empty';

/** Refuses a file, or a non-empty directory without --force, before anything is written. */
export async function inspectTarget(targetDir: string, force: boolean): Promise<TargetState> {
  const info = await stat(targetDir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (!info) return 'absent';
  if (!info.isDirectory()) throw new CreateError(`${targetDir} exists and is not a directory`);
  if ((await readdir(targetDir)).length === 0) return 'empty';
  if (!force) {
    throw new CreateError(
      `${targetDir} is not empty: choose another directory, or pass --force to write into it ` +
        '(files the template has replace same-named files; other files are kept)',
    );
  }
  return 'non-empty';
}

/**
 * A project is built in a staging directory beside the target — same parent, hence same file
 * system (rename is atomic) and same depth (relative paths npm writes into package-lock.json stay
 * right) — and moved into place only once complete. Parents that did not exist are created and
 * reported, so a failure can remove them too.
 */
export async function createStaging(targetDir: string): Promise<{ staging: string; createdParent?: string }> {
  const createdParent = await mkdir(dirname(targetDir), { recursive: true });
  // mkdir, not mkdtemp: the project keeps the user's umask instead of mkdtemp's 0700.
  const staging = join(dirname(targetDir), `.${basename(targetDir)}.create-func-${randomBytes(6).toString('hex')}`);
  await mkdir(staging);
  return { staging, createdParent };
}

/**
 * Moves the finished staging directory into place. An existing directory is kept, not replaced —
 * it may be the user's working directory (`npm create func .`), and replacing it would leave
 * their shell in a deleted directory — so its entries are moved in one by one; with --force,
 * an entry that is already there is merged, template files replacing same-named files.
 */
export async function commitStaging(staging: string, targetDir: string, state: TargetState): Promise<void> {
  if (state === 'absent') {
    await rename(staging, targetDir);
    return;
  }
  for (const entry of await readdir(staging)) {
    const from = join(staging, entry);
    const to = join(targetDir, entry);
    const taken = await lstat(to).then(() => true, () => false);
    if (taken) await cp(from, to, { recursive: true, force: true, verbatimSymlinks: true });
    else await rename(from, to);
  }
  await rm(staging, { recursive: true, force: true });
}

/** Removes everything a failed or interrupted run created. */
export async function discardStaging(staging: string, createdParent?: string): Promise<void> {
  await rm(createdParent ?? staging, { recursive: true, force: true, maxRetries: 3 });
}
