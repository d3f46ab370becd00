import { basename, resolve } from 'node:path';
import { isTemplateName, templateDescriptions, templateNames, type TemplateName } from '@func/templates';
import type { CliArgs } from './args.js';
import { checkoutRoot, type DependencySource } from './checkout.js';
import { CreateError } from './errors.js';
import { nameProblem, suggestName } from './name.js';
import type { Prompter } from './prompt.js';

/** Everything needed to create a project, settled before anything is written. */
export interface Plan {
  name: string;
  template: TemplateName;
  /** Absolute path of the project directory. */
  targetDir: string;
  install: boolean;
  force: boolean;
  /** Where @func/runtime comes from: the checkout create-func runs from (packed into vendor/), or the registry. */
  deps: DependencySource;
  /** The checkout's root, with deps 'checkout'. */
  checkout?: string;
}

/**
 * Settles the plan from the arguments, asking for what is missing when a prompter is given
 * (a TTY without --yes); without one, defaults are used or the gap is refused — never asked.
 */
export async function resolvePlan(args: CliArgs, cwd: string, prompter?: Prompter): Promise<Plan> {
  const name = await resolveName(args, cwd, prompter);
  const template = await resolveTemplate(args.template, prompter);
  const checkout = checkoutRoot();
  const deps = args.deps ?? (checkout ? 'checkout' : 'registry');
  if (deps === 'checkout' && !checkout) throw new CreateError('--deps checkout: this create-func is not running from a checkout of the func repository (run it as node <checkout>/packages/create-func/dist/cli.js)', 2);
  return {
    deps,
    ...(deps === 'checkout' && { checkout }),
    name,
    template,
    targetDir: resolve(cwd, args.dir ?? name),
    install: args.install,
    force: args.force,
  };
}

async function resolveName(args: CliArgs, cwd: string, prompter?: Prompter): Promise<string> {
  if (args.name !== undefined) return checkedName(args.name);
  const suggestion = args.dir === undefined ? undefined : suggestName(basename(resolve(cwd, args.dir)));
  if (!prompter) {
    if (suggestion === undefined) {
      throw new CreateError('missing the function name: pass a directory or --name <name>', 2);
    }
    return checkedName(suggestion);
  }
  for (;;) {
    const answer = await prompter.ask('Function name', suggestion ?? 'my-function');
    const problem = nameProblem(answer);
    if (problem === undefined) return answer;
    prompter.warn(problem);
  }
}

async function resolveTemplate(given: string | undefined, prompter?: Prompter): Promise<TemplateName> {
  if (given !== undefined) {
    if (isTemplateName(given)) return given;
    throw new CreateError(`unknown template "${given}": choose one of ${templateNames.join(', ')}`, 2);
  }
  if (!prompter) return templateNames[0];
  const menu = templateNames.map((t, i) => `  ${i + 1}. ${t} — ${templateDescriptions[t]}`).join('\n');
  for (;;) {
    const answer = await prompter.ask(`Template:\n${menu}\nChoose a number or a name`, templateNames[0]);
    const chosen = templateNames[Number(answer) - 1] ?? answer;
    if (isTemplateName(chosen)) return chosen;
    prompter.warn(`"${answer}" is not one of the templates`);
  }
}

function checkedName(name: string): string {
  const problem = nameProblem(name);
  if (problem !== undefined) throw new CreateError(problem, 2);
  return name;
}
