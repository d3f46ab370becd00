/**
 * How the command line ends the process: the only place that calls process.exit, so library code
 * can be embedded and tested, and a start-up failure reported as one paragraph.
 */
export function exit(code: number): never {
  process.exit(code);
}

/** Known start-up failures carry a complete message; anything else is a bug worth its stack. */
export function reportStartError(err: unknown): void {
  const e = err as Error;
  const known = ['LoadError', 'FuncYamlError', 'OptionError', 'StartError', 'CommandError'].includes(e?.name);
  process.stderr.write(`func-runtime: ${known ? e.message : e?.stack ?? String(err)}\n`);
  exit(1);
}
