/**
 * `func-runtime completion bash|zsh|fish`: a completion script for the shell, generated from the
 * command tree (command-tree.ts), so every verb, subcommand and flag is in it and nothing calls
 * back into node on Tab. Where no word matches, bash and zsh complete file names (the path
 * arguments). Install: `source <(func-runtime completion bash)` in ~/.bashrc, the same with zsh in
 * ~/.zshrc, `func-runtime completion fish > ~/.config/fish/completions/func-runtime.fish` (the directory must exist).
 */
import type { Argv, CommandModule } from 'yargs';
import type { Exit } from '../lifecycle.js';
import { paths, type CommandNode } from './command-tree.js';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
type Shell = (typeof SHELLS)[number];

const fnName = (bin: string) => `_${bin.replace(/[^A-Za-z0-9]/g, '_')}`;
const words = (node: CommandNode) => [...node.children.flatMap((c) => c.names), ...node.values, ...node.flags].join(' ');

export function bashScript(bin: string, root: CommandNode): string {
  const all = paths(root);
  const known = all.filter((p) => p.words.length).map((p) => `/${p.words.join('/')}`);
  return [
    `# ${bin} completion for bash (and zsh through bashcompinit): source <(${bin} completion bash)`,
    `${fnName(bin)}() {`,
    '  local cur="${COMP_WORDS[COMP_CWORD]}" at="" w i',
    '  for ((i = 1; i < COMP_CWORD; i++)); do',
    '    w="${COMP_WORDS[i]}"',
    '    [[ "$w" == -* ]] && continue',
    '    case "$at/$w" in',
    `      ${known.map((k) => `'${k}'`).join('|')}) at="$at/$w" ;;`,
    '    esac',
    '  done',
    '  local candidates=""',
    '  case "$at" in',
    ...all.map((p) => `    '${p.words.length ? `/${p.words.join('/')}` : ''}') candidates='${words(p.node)}' ;;`),
    '  esac',
    '  COMPREPLY=($(compgen -W "$candidates" -- "$cur"))',
    '}',
    `complete -o default -F ${fnName(bin)} ${bin}`,
    '',
  ].join('\n');
}

export function zshScript(bin: string, root: CommandNode): string {
  return [`# ${bin} completion for zsh: source <(${bin} completion zsh)`, 'autoload -U +X compinit && compinit', 'autoload -U +X bashcompinit && bashcompinit', bashScript(bin, root)].join('\n');
}

export function fishScript(bin: string, root: CommandNode): string {
  const key = (words: string[]) => `/${words.map((w) => `${w}/`).join('')}`;
  const lines = [
    `# ${bin} completion for fish: ${bin} completion fish > ~/.config/fish/completions/${bin}.fish`,
    `function __${fnName(bin)}_path`,
    '  set -l path /',
    '  for w in (commandline -opc)[2..-1]',
    '    string match -q -- "-*" $w; and continue',
    `    contains -- "$path$w/" ${paths(root).filter((p) => p.words.length).map((p) => `'${key(p.words)}'`).join(' ')}; and set path "$path$w/"`,
    '  end',
    '  echo $path',
    'end',
  ];
  for (const { words: at, node } of paths(root)) {
    const cond = `-n 'test (__${fnName(bin)}_path) = ${key(at)}'`;
    const subs = [...node.children.flatMap((c) => c.names), ...node.values];
    if (subs.length) lines.push(`complete -c ${bin} -f ${cond} -a '${subs.join(' ')}'`);
    for (const flag of node.flags) lines.push(`complete -c ${bin} ${cond} ${flag.startsWith('--') ? `-l ${flag.slice(2)}` : `-s ${flag.slice(1)}`}`);
  }
  return `${lines.join('\n')}\n`;
}

export function completionScript(shell: Shell, bin: string, root: CommandNode): string {
  return shell === 'bash' ? bashScript(bin, root) : shell === 'zsh' ? zshScript(bin, root) : fishScript(bin, root);
}

export function completionCommand(exit: Exit, onError: (err: unknown) => void, tree: () => CommandNode): CommandModule<object, { shell: Shell }> {
  return {
    command: 'completion <shell>',
    describe: 'Print a shell completion script for verbs and flags: source <(func-runtime completion bash)',
    builder: (y) => y.positional('shell', { choices: SHELLS, describe: 'bash, zsh or fish' }) as unknown as Argv<{ shell: Shell }>,
    handler: (argv) => {
      try {
        process.stdout.write(completionScript(argv.shell, 'func-runtime', tree()));
        exit(0);
      } catch (err) {
        onError(err);
      }
    },
  };
}
