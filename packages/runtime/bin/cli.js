#!/usr/bin/env node
// The faas-js-runtime command (faas-js-runtime 4's flags, served in its compatibility mode), at the
// path faas-js-runtime keeps it (projects' scripts name ./node_modules/faas-js-runtime/bin/cli.js).
// Committed, not built, so that npm links it at install time; it runs the built dist/faas-cli.js.
import { runBuilt } from './run-built.js';

await runBuilt('faas-js-runtime', '../dist/faas-cli.js');
