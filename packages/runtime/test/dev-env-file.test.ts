/** The .env file as dev applies it: the shell wins, removals are undone, an unreadable file is an error. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EnvFile } from '../src/dev/env-file.js';

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));
const project = () => (dir = mkdtempSync(join(tmpdir(), 'func-env-')));

describe('EnvFile', () => {
  it('fills unset variables, leaves the shell\'s alone, and reports what changed', () => {
    const env: NodeJS.ProcessEnv = { FROM_SHELL: 'shell' };
    writeFileSync(join(project(), '.env'), 'FROM_SHELL=file\nGREETING="hello there"\n# a comment\nEMPTY=\n');
    const file = new EnvFile(dir);
    expect(file.apply(env).sort()).toEqual(['EMPTY', 'GREETING']);
    expect(env).toEqual({ FROM_SHELL: 'shell', GREETING: 'hello there', EMPTY: '' });
    expect(file.apply(env)).toEqual([]);
  });

  it('updates and removes the keys it set when the file changes or disappears', () => {
    const env: NodeJS.ProcessEnv = {};
    writeFileSync(join(project(), '.env'), 'A=1\nB=2\n');
    const file = new EnvFile(dir);
    file.apply(env);
    writeFileSync(join(dir, '.env'), 'A=10\n');
    expect(file.apply(env).sort()).toEqual(['A', 'B']);
    expect(env).toEqual({ A: '10' });
    rmSync(join(dir, '.env'));
    expect(file.apply(env)).toEqual(['A']);
    expect(env).toEqual({});
  });

  it('no .env is an empty one; an unreadable .env is an error naming it', () => {
    const env: NodeJS.ProcessEnv = {};
    expect(new EnvFile(project()).apply(env)).toEqual([]);
    mkdirSync(join(dir, '.env'));
    expect(() => new EnvFile(dir).apply(env)).toThrow(/Cannot read .*\.env: EISDIR/);
  });
});
