#!/usr/bin/env node
/** The faas-js-runtime command's entry point: faas-command-line.ts, loaded as cli.ts explains. */
import { createRequire } from 'node:module';

const requireSync = createRequire(import.meta.url);
const { runFaasCommandLine } = (process.features as { require_module?: boolean }).require_module
  ? (requireSync('./faas-command-line.js') as typeof import('./faas-command-line.js'))
  : await import('./faas-command-line.js');

await runFaasCommandLine(process.argv.slice(2));
