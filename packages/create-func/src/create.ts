import { relative } from 'node:path';
import { templateDir } from '@func/templates';
import { vendorCheckout } from './checkout.js';
import { npmInstall } from './install.js';
import type { Plan } from './plan.js';
import { renderTemplate } from './scaffold.js';
import { commitStaging, createStaging, discardStaging, inspectTarget } from './target.js';

export interface CreateOptions {
  /** Aborting stops the run (npm install included) and removes everything it wrote. */
  signal?: AbortSignal;
  /** Progress lines for the user. */
  log?: (line: string) => void;
  /** Creation time written to func.yaml; now by default. */
  now?: Date;
  /** Environment of npm install (npm_config_* settings); this process's by default. */
  env?: NodeJS.ProcessEnv;
}

/**
 * Creates the project the plan describes. Either the whole project (installed, unless
 * plan.install is false) appears at plan.targetDir, or — on any error or abort — nothing does:
 * the project is assembled in a staging directory that is moved into place last.
 */
export async function createProject(plan: Plan, options: CreateOptions = {}): Promise<void> {
  const signal = options.signal ?? new AbortController().signal;
  const log = options.log ?? (() => {});
  const state = await inspectTarget(plan.targetDir, plan.force);
  signal.throwIfAborted();
  const { staging, createdParent } = await createStaging(plan.targetDir);
  try {
    log(`Creating ${plan.template} function "${plan.name}" in ${display(plan.targetDir)}`);
    const created = (options.now ?? new Date()).toISOString();
    await renderTemplate(templateDir(plan.template), staging, { name: plan.name, created });
    signal.throwIfAborted();
    if (plan.deps === 'checkout') {
      log(`Packing @func/runtime from the checkout at ${display(plan.checkout!)} into vendor/…`);
      await vendorCheckout(plan.checkout!, staging, signal, options.env);
    }
    signal.throwIfAborted();
    if (plan.install) {
      log('Installing dependencies with npm install…');
      await npmInstall(staging, signal, options.env);
    }
    signal.throwIfAborted();
    await commitStaging(staging, plan.targetDir, state);
  } catch (err) {
    await discardStaging(staging, createdParent);
    throw err;
  }
}

/** A path as the user would type it from here. */
export function display(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel === '' ? '.' : rel.startsWith('..') ? path : `./${rel}`;
}
