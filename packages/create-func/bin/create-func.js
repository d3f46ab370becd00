#!/usr/bin/env node
// The create-func command (`npm create func`). Committed, not built, so that npm links it when it
// installs the workspace (before dist/ exists); it runs the built CLI, or says how to build it.
const cli = new URL('../dist/cli.js', import.meta.url);
await import(cli.href).catch((err) => {
  if (err?.code !== 'ERR_MODULE_NOT_FOUND' || !String(err.message).includes(cli.pathname)) throw err;
  process.stderr.write(`create-func: ${cli.pathname} is not built yet. Run \`npm run build\` at the repository root first.\n`);
  process.exitCode = 1;
});
