import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { parseCliArgs } from '../src/args.js';
import { InterruptedError } from '../src/errors.js';
import { resolvePlan } from '../src/plan.js';
import { createPrompter } from '../src/prompt.js';

const cwd = '/work/projects';

describe('resolvePlan without a prompter (no TTY, or --yes): never asks', () => {
  it.each([
    [['my-fn'], { name: 'my-fn', template: 'http', targetDir: '/work/projects/my-fn' }],
    [['--name', 'svc'], { name: 'svc', template: 'http', targetDir: '/work/projects/svc' }],
    [['out/Order_Events', '-t', 'cloudevents'], { name: 'order-events', template: 'cloudevents', targetDir: '/work/projects/out/Order_Events' }],
    [['/abs/dir', '-n', 'svc', '--no-install', '--force'], { name: 'svc', targetDir: '/abs/dir', install: false, force: true }],
  ])('%j', async (argv, expected) => {
    expect(await resolvePlan(parseCliArgs(argv), cwd)).toMatchObject(expected);
  });

  it.each([
    [[], /missing the function name/],
    [['--name', 'Bad_Name'], /not a valid function name/],
    [['--name', '../../etc'], /not a valid function name/],
    [['my-fn', '--template', 'grpc'], /unknown template "grpc": choose one of http, cloudevents/],
    [['my-fn', '--template', '../../../etc'], /unknown template/],
    [['%%%'], /missing the function name/],
  ])('refuses %j', async (argv, message) => {
    await expect(resolvePlan(parseCliArgs(argv), cwd)).rejects.toThrow(message);
  });
});

/** A real readline prompter over in-memory streams, answered line by line. */
function scriptedPrompter(answers: string[]) {
  const input = new PassThrough();
  const output = new PassThrough();
  let transcript = '';
  output.on('data', (chunk: Buffer) => {
    transcript += chunk.toString();
    // Answer each question as it appears (questions end with ": ").
    if (transcript.endsWith(': ')) {
      const next = answers.shift();
      if (next === undefined) input.end();
      else input.write(`${next}\n`);
    }
  });
  return { prompter: createPrompter(input, output), transcript: () => transcript };
}

describe('resolvePlan with a prompter (a TTY without --yes)', () => {
  it('asks for the name and the template when they are missing', async () => {
    const { prompter, transcript } = scriptedPrompter(['order-events', '2']);
    const plan = await resolvePlan(parseCliArgs([]), cwd, prompter);
    prompter.close();
    expect(plan).toMatchObject({ name: 'order-events', template: 'cloudevents', targetDir: '/work/projects/order-events' });
    expect(transcript()).toContain('Function name (my-function): ');
    expect(transcript()).toContain('2. cloudevents');
  });

  it('offers the directory name and the first template as defaults', async () => {
    const { prompter } = scriptedPrompter(['', '']);
    const plan = await resolvePlan(parseCliArgs(['Shop_Api']), cwd, prompter);
    prompter.close();
    expect(plan).toMatchObject({ name: 'shop-api', template: 'http', targetDir: '/work/projects/Shop_Api' });
  });

  it('asks again after an invalid answer, saying why', async () => {
    const { prompter, transcript } = scriptedPrompter(['Bad Name', 'good-name', 'grpc', 'http']);
    const plan = await resolvePlan(parseCliArgs([]), cwd, prompter);
    prompter.close();
    expect(plan).toMatchObject({ name: 'good-name', template: 'http' });
    expect(transcript()).toContain('"Bad Name" is not a valid function name');
    expect(transcript()).toContain('"grpc" is not one of the templates');
  });

  it('asks nothing that was given', async () => {
    const { prompter, transcript } = scriptedPrompter([]);
    const plan = await resolvePlan(parseCliArgs(['-n', 'svc', '-t', 'http']), cwd, prompter);
    prompter.close();
    expect(plan.name).toBe('svc');
    expect(transcript()).toBe('');
  });

  it('stops with an InterruptedError when the input ends (Ctrl-D)', async () => {
    const { prompter } = scriptedPrompter([]);
    await expect(resolvePlan(parseCliArgs([]), cwd, prompter)).rejects.toBeInstanceOf(InterruptedError);
    prompter.close();
  });

  it('stops with an InterruptedError when the run is aborted by a signal', async () => {
    const controller = new AbortController();
    const prompter = createPrompter(new PassThrough(), new PassThrough(), controller.signal);
    const pending = resolvePlan(parseCliArgs([]), cwd, prompter);
    controller.abort(new InterruptedError('SIGTERM'));
    await expect(pending).rejects.toMatchObject({ signal: 'SIGTERM', exitCode: 143 });
    prompter.close();
  });
});
