import { describe, expect, it } from 'vitest';
import { parseCliArgs } from '../src/args.js';
import { CreateError } from '../src/errors.js';

const defaults = { yes: false, install: true, force: false, help: false, version: false };

describe('parseCliArgs', () => {
  it.each([
    [[], {}],
    [['my-fn'], { dir: 'my-fn' }],
    [['my-fn', '--template', 'cloudevents'], { dir: 'my-fn', template: 'cloudevents' }],
    [['-t', 'http', '-n', 'svc', 'out/dir'], { dir: 'out/dir', template: 'http', name: 'svc' }],
    [['--name=svc', '--template=http'], { name: 'svc', template: 'http' }],
    [['--yes', '--no-install', '--force'], { yes: true, install: false, force: true }],
    [['-y', '-f'], { yes: true, force: true }],
    [['--help'], { help: true }],
    [['-v'], { version: true }],
    [['--', '--odd-dir'], { dir: '--odd-dir' }],
  ])('%j', (argv, expected) => {
    expect(parseCliArgs(argv)).toEqual({ ...defaults, ...expected });
  });

  it.each([
    [['--bogus'], /Unknown option '--bogus'/],
    [['--template'], /argument missing/],
    [['a', 'b'], /at most one directory, got "a", "b"/],
    [['--install=yes'], /does not take an argument/],
  ])('refuses %j with the usage', (argv, message) => {
    let error: unknown;
    try {
      parseCliArgs(argv);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(CreateError);
    expect((error as CreateError).exitCode).toBe(2);
    expect((error as CreateError).message).toMatch(message);
    expect((error as CreateError).message).toContain('Usage: npm create func@latest');
  });
});
