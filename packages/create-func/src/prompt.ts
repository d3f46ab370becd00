import { createInterface } from 'node:readline/promises';
import { InterruptedError } from './errors.js';

/** Asks one question at a time; `ask` resolves to the trimmed answer, or `fallback` for an empty one. */
export interface Prompter {
  ask(question: string, fallback?: string): Promise<string>;
  /** Says why an answer was not accepted, before the question is asked again. */
  warn(message: string): void;
  close(): void;
}

/**
 * A prompter over readline. Ctrl-C and Ctrl-D reject the pending question with an
 * InterruptedError: without a 'SIGINT' listener readline would only pause, and the question
 * would wait forever.
 */
export function createPrompter(
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
  signal?: AbortSignal,
): Prompter {
  const rl = createInterface({ input, output, terminal: (input as { isTTY?: boolean }).isTTY === true });
  const controller = new AbortController();
  signal?.addEventListener('abort', () => controller.abort(signal.reason), { once: true });
  rl.on('SIGINT', () => controller.abort(new InterruptedError('SIGINT')));
  rl.on('close', () => controller.abort(new InterruptedError('SIGINT')));
  return {
    async ask(question, fallback) {
      const hint = fallback === undefined ? '' : ` (${fallback})`;
      try {
        const answer = (await rl.question(`${question}${hint}: `, { signal: controller.signal })).trim();
        return answer === '' && fallback !== undefined ? fallback : answer;
      } catch (err) {
        throw controller.signal.aborted ? controller.signal.reason : err;
      }
    },
    warn(message) {
      output.write(`  ${message}\n`);
    },
    close() {
      rl.removeAllListeners('close');
      rl.close();
    },
  };
}
