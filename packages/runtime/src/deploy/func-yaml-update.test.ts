import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { recordDeployment } from './func-yaml-update.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
const file = (text: string) => {
  const dir = mkdtempSync(join(tmpdir(), 'func-yaml-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'func.yaml'), text);
  return join(dir, 'func.yaml');
};
const deployed = { image: 'localhost/hello:latest', imageDigest: `sha256:${'c'.repeat(64)}`, namespace: 'shop' };

describe('recordDeployment (func.yaml write-back)', () => {
  it('adds image, imageDigest and deploy.namespace, keeping comments and the rest', () => {
    const f = file('# yaml-language-server: $schema=./node_modules/@func/runtime/func.schema.json\nspecVersion: 0.36.0\nname: hello # the name\ndeploy:\n  healthEndpoints:\n    liveness: /alive\n');
    expect(recordDeployment(f, deployed)).toBe(true);
    const text = readFileSync(f, 'utf8');
    expect(text).toContain('# yaml-language-server: $schema=./node_modules/@func/runtime/func.schema.json\n');
    expect(text).toContain('name: hello # the name\n');
    expect(text).toContain(`image: localhost/hello:latest\nimageDigest: sha256:${'c'.repeat(64)}\n`);
    expect(text).toMatch(/deploy:\n  healthEndpoints:\n    liveness: \/alive\n  namespace: shop\n/);
  });

  it('updates in place, and leaves an up-to-date file untouched', () => {
    const f = file(`specVersion: 0.36.0\nname: hello\nimage: localhost/hello:latest\nimageDigest: sha256:${'d'.repeat(64)}\ndeploy:\n  namespace: shop\n`);
    expect(recordDeployment(f, deployed)).toBe(true);
    expect(readFileSync(f, 'utf8')).toBe(`specVersion: 0.36.0\nname: hello\nimage: localhost/hello:latest\nimageDigest: sha256:${'c'.repeat(64)}\ndeploy:\n  namespace: shop\n`);
    expect(recordDeployment(f, deployed)).toBe(false);
  });
});
