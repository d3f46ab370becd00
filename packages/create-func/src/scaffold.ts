import { lstat, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { renderText, storedNames, type TemplateValues } from '@func/templates';
import { CreateError } from './errors.js';

/** True when `path` is `dir` itself or below it (after resolving `..`). */
export function isInside(dir: string, path: string): boolean {
  const rel = relative(resolve(dir), resolve(path));
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/**
 * Renders every file of `templateDir` into `destDir` (which must exist and be empty).
 * A template may hold only plain files and directories: a symbolic link or any other kind of
 * entry is refused before anything is written, so a template cannot make us read or write
 * outside the two directories. Files are created exclusively ('wx'), never through an existing path.
 */
export async function renderTemplate(templateDir: string, destDir: string, values: TemplateValues): Promise<string[]> {
  const files = await listTemplateFiles(templateDir);
  for (const file of files) {
    const target = resolve(destDir, targetPath(file));
    if (!isInside(destDir, target)) throw new CreateError(`template file "${file}" would be written outside the project`);
    await mkdir(resolve(target, '..'), { recursive: true });
    const text = await readFile(join(templateDir, file), 'utf8');
    await writeFile(target, renderText(text, values), { flag: 'wx' });
  }
  return files.map(targetPath);
}

/** The template's files, relative to it, checked to be plain files inside it. */
async function listTemplateFiles(templateDir: string): Promise<string[]> {
  const files: string[] = [];
  const pending = [''];
  for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) {
    for (const entry of await readdir(join(templateDir, dir))) {
      const rel = join(dir, entry);
      const stat = await lstat(join(templateDir, rel));
      if (stat.isDirectory()) pending.push(rel);
      else if (stat.isFile()) files.push(rel);
      else throw new CreateError(`template entry "${rel}" is not a regular file or directory; refusing to use it`);
    }
  }
  return files.sort();
}

/** Where a template file lands in the project: stored names (gitignore) get their real names. */
function targetPath(file: string): string {
  const parts = file.split(sep);
  const base = parts.pop()!;
  return [...parts, Object.hasOwn(storedNames, base) ? storedNames[base]! : base].join(sep);
}
