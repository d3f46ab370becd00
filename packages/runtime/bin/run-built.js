// Imports a built entry point; before the first build, says how to make it instead of a stack trace.
export async function runBuilt(command, entry) {
  const url = new URL(entry, import.meta.url);
  try {
    await import(url.href);
  } catch (err) {
    if (err?.code !== 'ERR_MODULE_NOT_FOUND' || !String(err.message).includes(url.pathname)) throw err;
    process.stderr.write(`${command}: ${url.pathname} is not built yet. Run \`npm run build\` at the repository root, then run ${command} again.\n`);
    process.exitCode = 1;
  }
}
