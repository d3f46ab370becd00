/**
 * The commands and flags of the command line as a tree, read from the same command modules yargs
 * runs: each builder is called on a recorder that notes `command(…)`, `option(…)` and
 * `positional(…)` and accepts any other builder call. Shell completion (completion.ts) is generated
 * from it, and a mistyped subcommand or flag is matched against it ("did you mean").
 */
import type { CommandModule } from 'yargs';

export interface CommandNode {
  /** The words that select it (a name and its aliases); empty for the root. */
  names: string[];
  /** Long flags with their dashes (`--image`), aliases included (`-i`). */
  flags: string[];
  /** The values a positional argument takes, when it names them (`completion bash|zsh|fish`). */
  values: string[];
  children: CommandNode[];
}

const GLOBAL_FLAGS = ['--help'];

function record(node: CommandNode, builder: CommandModule['builder']): void {
  if (typeof builder !== 'function') {
    for (const [name, opt] of Object.entries(builder ?? {})) addFlag(node, name, (opt as { alias?: string | string[] }).alias);
    return;
  }
  const recorder: unknown = new Proxy(
    {},
    {
      get: (_target, method) => (...args: unknown[]) => {
        if (method === 'option' || method === 'options') {
          if (typeof args[0] === 'string') addFlag(node, args[0], (args[1] as { alias?: string | string[] } | undefined)?.alias);
          else for (const [name, opt] of Object.entries((args[0] as object) ?? {})) addFlag(node, name, (opt as { alias?: string | string[] }).alias);
        } else if (method === 'positional') {
          node.values.push(...(((args[1] as { choices?: unknown[] } | undefined)?.choices ?? []).map(String)));
        } else if (method === 'command' && typeof args[0] === 'object' && args[0] !== null) {
          const module = args[0] as CommandModule;
          const child = commandNode(module);
          node.children.push(child);
          // A default subcommand (`config envs` lists) takes its flags at its parent's words too.
          if ([module.command ?? []].flat().some((c) => String(c).startsWith('$0'))) for (const f of child.flags) if (!node.flags.includes(f)) node.flags.push(f);
        }
        return recorder;
      },
    },
  );
  builder(recorder as never);
}

function addFlag(node: CommandNode, name: string, alias: string | string[] | undefined): void {
  for (const n of [name, ...(alias === undefined ? [] : [alias].flat())]) {
    const flag = n.length === 1 ? `-${n}` : `--${n}`;
    if (!node.flags.includes(flag)) node.flags.push(flag);
  }
}

export function commandNode(command: CommandModule): CommandNode {
  const words = [command.command ?? []].flat().map((c) => String(c).split(' ')[0]!).filter((w) => w !== '$0');
  const node: CommandNode = { names: [...words, ...[command.aliases ?? []].flat().map((a) => String(a).split(' ')[0]!)], flags: [...GLOBAL_FLAGS], values: [], children: [] };
  record(node, command.builder);
  return node;
}

/** The root: the default command's flags, every subcommand, and --version. */
export function commandTree(commands: CommandModule[]): CommandNode {
  const root: CommandNode = { names: [], flags: [...GLOBAL_FLAGS, '--version'], values: [], children: [] };
  for (const c of commands) {
    const node = commandNode(c);
    if (node.names.length === 0) root.flags.push(...node.flags.filter((f) => !root.flags.includes(f)));
    else root.children.push(node);
  }
  return root;
}

/** The deepest node the words select, and how many of them it took. */
export function walk(root: CommandNode, words: readonly string[]): { node: CommandNode; used: number } {
  let node = root;
  let used = 0;
  for (const w of words) {
    if (w.startsWith('-')) continue;
    const child = node.children.find((c) => c.names.includes(w));
    if (!child) break;
    node = child;
    used++;
  }
  return { node, used };
}

/** Every path of words to a node, root first: [[], ['deploy'], ['config'], ['config', 'envs'], …]. */
export function paths(root: CommandNode): { words: string[]; node: CommandNode }[] {
  const out: { words: string[]; node: CommandNode }[] = [];
  const visit = (node: CommandNode, words: string[]) => {
    out.push({ words, node });
    for (const c of node.children) for (const name of c.names) visit(c, [...words, name]);
  };
  visit(root, []);
  return out;
}
