/** Public API of create-func: the same steps as the `create-func` command, for programs and tests. */
export { parseCliArgs, usage, type CliArgs } from './args.js';
export { createProject, type CreateOptions } from './create.js';
export { CreateError, InterruptedError } from './errors.js';
export { nextSteps } from './messages.js';
export { maxNameLength, nameProblem, suggestName } from './name.js';
export { resolvePlan, type Plan } from './plan.js';
export { createPrompter, type Prompter } from './prompt.js';
export { isInside, renderTemplate } from './scaffold.js';
