import { parseArgs } from 'node:util';
import { CreateError } from './errors.js';

/** What the command line said; anything left out is asked for, defaulted, or refused later. */
export interface CliArgs {
  dir?: string;
  name?: string;
  template?: string;
  yes: boolean;
  install: boolean;
  force: boolean;
  /** `--deps checkout|registry`. */
  deps?: 'checkout' | 'registry';
  help: boolean;
  version: boolean;
}

export const usage = `Usage: npm create func@latest [dir] -- [options]
       create-func [dir] [options]

Creates a TypeScript function project in dir (default: ./<name>).

Options:
  -t, --template <http|cloudevents>  the project template (default: http)
  -n, --name <name>                  the function's name, a DNS-1123 label (default: the directory's name)
  -y, --yes                          never ask: use the defaults for anything not given
      --no-install                   do not run npm install
  -f, --force                        write into a non-empty directory (template files replace same-named files)
      --deps <checkout|registry>     where @func/runtime comes from: the checkout this create-func runs
                                     from, packed into vendor/ (the default there), or the npm registry
                                     (the default for an installed create-func)
  -h, --help                         show this help
  -v, --version                      show the version
`;

/** Parses argv (without node and the script); throws a CreateError (exit code 2) on bad usage. */
export function parseCliArgs(argv: readonly string[]): CliArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      allowNegative: true,
      strict: true,
      options: {
        template: { type: 'string', short: 't' },
        name: { type: 'string', short: 'n' },
        yes: { type: 'boolean', short: 'y', default: false },
        install: { type: 'boolean', default: true },
        force: { type: 'boolean', short: 'f', default: false },
        deps: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
        version: { type: 'boolean', short: 'v', default: false },
      },
    });
  } catch (err) {
    throw new CreateError(`${(err as Error).message}\n\n${usage}`, 2);
  }
  const { values, positionals } = parsed;
  if (positionals.length > 1) {
    throw new CreateError(`expected at most one directory, got ${positionals.map((p) => `"${p}"`).join(', ')}\n\n${usage}`, 2);
  }
  if (values.deps !== undefined && values.deps !== 'checkout' && values.deps !== 'registry') {
    throw new CreateError(`--deps must be checkout or registry, got "${values.deps}"\n\n${usage}`, 2);
  }
  return {
    ...(values.deps !== undefined && { deps: values.deps as 'checkout' | 'registry' }),
    dir: positionals[0],
    name: values.name,
    template: values.template,
    yes: values.yes,
    install: values.install,
    force: values.force,
    help: values.help,
    version: values.version,
  };
}
