/**
 * Questions on a terminal, for the commands that ask when a flag is missing (`config … add|remove`),
 * as Knative's func does. Only when stdin is a terminal: anywhere else (a script, CI) a missing
 * flag is an error that names it (config.ts), so nothing ever waits for an answer that cannot come.
 */
import { createRequire } from 'node:module';
import type { Interface } from 'node:readline';
import { CommandError } from '../command-error.js';

// Loaded when a question is first asked: a function pod starting never pays for node:readline.
const requireLazy = createRequire(import.meta.url);

export interface Prompter {
  /** Free text; `fallback` is taken on an empty answer. */
  text(question: string, fallback?: string): Promise<string>;
  /** One of `choices`, by number or by name. */
  choose(question: string, choices: readonly string[]): Promise<string>;
  close(): void;
}

export const interactive = (): boolean => process.stdin.isTTY === true;

export function terminalPrompter(input: NodeJS.ReadableStream = process.stdin, output: NodeJS.WritableStream = process.stderr): Prompter {
  let rl: Interface | undefined;
  let lines: AsyncIterator<string> | undefined;
  // Lines are read through one iterator, which buffers: answers typed (or pasted) ahead are kept.
  const line = async (question: string) => {
    if (!rl) {
      const { createInterface } = requireLazy('node:readline') as typeof import('node:readline');
      rl = createInterface({ input, output, terminal: true });
      rl.on('SIGINT', () => rl!.close());
      lines = rl[Symbol.asyncIterator]();
    }
    rl.setPrompt(question);
    rl.prompt();
    const next = await lines!.next();
    if (next.done) throw new CommandError('cancelled: no answer (the input ended or Ctrl-C); func.yaml is unchanged.');
    return next.value.trim();
  };
  return {
    async text(question, fallback) {
      for (;;) {
        const answer = await line(`? ${question}${fallback ? ` (${fallback})` : ''}: `);
        if (answer || fallback !== undefined) return answer || fallback!;
      }
    },
    async choose(question, choices) {
      output.write(`? ${question}\n${choices.map((c, i) => `  ${i + 1}) ${c}`).join('\n')}\n`);
      for (;;) {
        const answer = await line(`  number or name (1-${choices.length}): `);
        const picked = /^\d+$/.test(answer) ? choices[Number(answer) - 1] : choices.find((c) => c === answer);
        if (picked !== undefined) return picked;
      }
    },
    close: () => rl?.close(),
  };
}
