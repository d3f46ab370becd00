#!/usr/bin/env node
// The func-runtime command. This file is committed, not built, so that npm links the command when it
// installs the workspace (before dist/ exists); it runs the built CLI.
import { runBuilt } from './run-built.js';

await runBuilt('func-runtime', '../dist/cli.js');
