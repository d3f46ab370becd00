import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isInside, renderTemplate } from '../src/scaffold.js';
import { entries, removeTempDirs, tempDir } from './helpers.js';

afterAll(removeTempDirs);

const values = { name: 'svc', created: '2026-01-01T00:00:00.000Z' };

describe('isInside', () => {
  it.each([
    ['/p', '/p', true],
    ['/p', '/p/a/b', true],
    ['/p', '/p/..a', true],
    ['/p', '/p/../q', false],
    ['/p', '/p/a/../../q', false],
    ['/p', '/pq', false],
    ['/p', '/', false],
  ])('%s contains %s: %s', (dir, path, inside) => {
    expect(isInside(dir, path)).toBe(inside);
  });
});

describe('renderTemplate', () => {
  it('renders every file, placeholders replaced and stored names restored', async () => {
    const template = await tempDir();
    await mkdir(join(template, 'src'));
    await writeFile(join(template, 'package.json'), '{"name":"{{name}}"}');
    await writeFile(join(template, 'src', 'index.ts'), '// {{name}} created {{created}}');
    await writeFile(join(template, 'gitignore'), 'node_modules/');
    const dest = await tempDir();

    const written = await renderTemplate(template, dest, values);

    expect(written.sort()).toEqual(['.gitignore', 'package.json', join('src', 'index.ts')]);
    expect(await readFile(join(dest, 'package.json'), 'utf8')).toBe('{"name":"svc"}');
    expect(await readFile(join(dest, 'src', 'index.ts'), 'utf8')).toBe('// svc created 2026-01-01T00:00:00.000Z');
    expect(await readFile(join(dest, '.gitignore'), 'utf8')).toBe('node_modules/');
  });

  it.each([
    ['a symbolic link to a file outside', (t: string, outside: string) => symlink(join(outside, 'secret'), join(t, 'README.md'))],
    ['a symbolic link to a directory outside', (t: string, outside: string) => symlink(outside, join(t, 'src'), 'dir')],
  ])('refuses a template holding %s, writing nothing', async (_what, plant) => {
    const outside = await tempDir();
    await writeFile(join(outside, 'secret'), 'do not copy');
    const template = await tempDir();
    await writeFile(join(template, 'package.json'), '{}');
    await plant(template, outside);
    const dest = await tempDir();

    await expect(renderTemplate(template, dest, values)).rejects.toThrow(/not a regular file or directory/);
    expect(await entries(dest)).toEqual([]);
    expect(await entries(outside)).toEqual(['secret']);
  });

  it('never writes through a path that already exists in the destination', async () => {
    const template = await tempDir();
    await writeFile(join(template, 'package.json'), '{}');
    const dest = await tempDir();
    const outside = await tempDir();
    await symlink(join(outside, 'victim'), join(dest, 'package.json'));

    await expect(renderTemplate(template, dest, values)).rejects.toThrow(/EEXIST/);
    expect(await entries(outside)).toEqual([]);
  });
});
