#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { parseCliArgs, usage } from './args.js';
import { createProject } from './create.js';
import { CreateError, InterruptedError } from './errors.js';
import { nextSteps } from './messages.js';
import { resolvePlan } from './plan.js';
import { createPrompter } from './prompt.js';

const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

async function main(argv: readonly string[]): Promise<number> {
  const args = parseCliArgs(argv);
  if (args.help) return print(usage);
  if (args.version) return print(`${version()}\n`);

  // A signal aborts whatever is running (a question, npm install); the run then removes what
  // it wrote and rejects with an InterruptedError, so the exit happens only after the clean-up.
  const controller = new AbortController();
  for (const signal of signals) process.on(signal, () => controller.abort(new InterruptedError(signal)));

  const interactive = !args.yes && process.stdin.isTTY === true && process.stdout.isTTY === true;
  const prompter = interactive ? createPrompter(process.stdin, process.stdout, controller.signal) : undefined;
  const plan = await resolvePlan(args, process.cwd(), prompter).finally(() => prompter?.close());
  await createProject(plan, { signal: controller.signal, log: (line) => process.stdout.write(`${line}\n`) });
  return print(nextSteps(plan));
}

function print(text: string): number {
  process.stdout.write(text);
  return 0;
}

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof CreateError) {
      process.stderr.write(`create-func: ${err.message}\n`);
      process.exit(err.exitCode);
    }
    process.stderr.write(`create-func: unexpected error\n${(err as Error)?.stack ?? String(err)}\n`);
    process.exit(1);
  },
);
