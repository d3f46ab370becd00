import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { isTemplateName, renderText, storedNames, templateDir, templateNames } from '../src/index.js';

const root = new URL('../../../', import.meta.url);
const validateFuncYaml = new Ajv({ allErrors: true }).compile(
  JSON.parse(readFileSync(new URL('func.schema.json', root), 'utf8')) as object,
);
const runtimeVersion = (
  JSON.parse(readFileSync(new URL('packages/runtime/package.json', root), 'utf8')) as { version: string }
).version;
const values = { name: 'order-events', created: '2026-01-02T03:04:05.678Z' };

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort();
}

function rendered(template: (typeof templateNames)[number], file: string): string {
  return renderText(readFileSync(join(templateDir(template), file), 'utf8'), values);
}

// Spec 001's project layout (package-lock.json comes from the install), plus the ignore files,
// the Containerfile and the test runner's configuration.
const layout = [
  '.dockerignore',
  'Containerfile',
  'README.md',
  'func.yaml',
  'gitignore',
  'package.json',
  'src/index.ts',
  'test/integration.ts',
  'test/unit.ts',
  'tsconfig.json',
  'vitest.config.ts',
].sort();

describe.each(templateNames)('template %s', (template) => {
  it('has exactly the project layout', () => {
    expect(filesUnder(templateDir(template))).toEqual(layout);
  });

  it('renders a func.yaml that the schema accepts, with the schema header for editors', () => {
    const text = rendered(template, 'func.yaml');
    expect(text.split('\n')[0]).toBe('# yaml-language-server: $schema=./node_modules/@func/runtime/func.schema.json');
    const doc = parse(text) as Record<string, unknown>;
    expect(validateFuncYaml(doc), JSON.stringify(validateFuncYaml.errors)).toBe(true);
    expect(doc).toMatchObject({ name: 'order-events', created: values.created, runtime: 'typescript' });
    expect(doc.invoke).toBe(template === 'http' ? 'http' : 'cloudevent');
  });

  it('renders a package.json with every script and the runtime dependency', () => {
    const pkg = JSON.parse(rendered(template, 'package.json')) as {
      name: string;
      scripts: Record<string, string>;
      dependencies: Record<string, string>;
      allowScripts?: Record<string, boolean>;
    };
    expect(pkg.name).toBe('order-events');
    // npm 11 skips and warns about install scripts not approved here; esbuild (the runtime's) is.
    expect(pkg.allowScripts).toEqual({ esbuild: true });
    expect(Object.keys(pkg.scripts)).toEqual(expect.arrayContaining(['build', 'start', 'dev', 'test', 'invoke', 'deploy']));
    expect(pkg.scripts.test).toBe('tsc --noEmit && vitest run');
    expect(pkg.scripts.start).toBe('func-runtime .');
    // The runtime's own client, for both templates: no hand-written fetch to keep in step with it.
    expect(pkg.scripts.invoke).toMatch(/^func-runtime invoke /);
    if (template === 'cloudevents') expect(pkg.scripts.invoke).toContain('--cloudevent --type com.example.customer.created');
    // The source goes to the cluster as an image: no `npm run build` first (deploy bundles src/ itself).
    expect(pkg.scripts.deploy).toBe('func-runtime deploy');
    expect(pkg.dependencies['@func/runtime']).toBe(`^${runtimeVersion}`);
  });

  it('leaves no placeholder behind once rendered', () => {
    for (const file of filesUnder(templateDir(template))) {
      expect(rendered(template, file), file).not.toMatch(/\{\{(name|created)\}\}/);
    }
  });
});

describe('renderText', () => {
  it('replaces known placeholders and leaves others, including inherited names, alone', () => {
    expect(renderText('{{name}} {{created}} {{other}} {{constructor}} {{ name }}', values)).toBe(
      'order-events 2026-01-02T03:04:05.678Z {{other}} {{constructor}} {{ name }}',
    );
  });
});

describe('templateDir', () => {
  it.each(['', 'HTTP', '../http', 'http/../..', 'toString'])('refuses %j', (name) => {
    expect(isTemplateName(name)).toBe(false);
    expect(() => templateDir(name as 'http')).toThrow(/unknown template/);
  });
});

describe('the packed package', () => {
  it('ships every template file, the stored .gitignore included', () => {
    const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: new URL('..', import.meta.url),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const [{ files }] = JSON.parse(out) as [{ files: { path: string }[] }];
    const packed = files.map((f) => f.path);
    for (const template of templateNames) {
      for (const file of layout) expect(packed).toContain(`${template}/${file}`);
    }
    expect(Object.keys(storedNames)).toContain('gitignore');
  });
});
