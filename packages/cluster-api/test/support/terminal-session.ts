/**
 * A shell through @kubernetes/client-node's Exec with a tty, on a terminal as client-node sees one:
 * an output stream with rows, columns and 'resize' events (its sizes go on the resize channel).
 */
import { PassThrough } from 'node:stream';
import { Exec, type KubeConfig, type V1Status } from '@kubernetes/client-node';

export interface TerminalSession {
  /** What the terminal showed so far. */
  output(): string;
  type(text: string): void;
  /** The terminal takes a new size (a 'resize' event, as a real one emits). */
  resize(rows: number, columns: number): void;
  /** The Status once the command has ended. */
  status(): V1Status | undefined;
  close(): void;
}

export async function terminalSession(kc: KubeConfig, pod: string, container: string, command: string[], size: { rows: number; columns: number }): Promise<TerminalSession> {
  const stdout = Object.assign(new PassThrough(), size);
  let out = '';
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  const stdin = new PassThrough();
  let status: V1Status | undefined;
  const ws = await new Exec(kc).exec('default', pod, container, command, stdout, null, stdin, true, (s) => (status = s));
  return {
    output: () => out,
    type: (text) => void stdin.write(text),
    resize: (rows, columns) => {
      Object.assign(stdout, { rows, columns });
      stdout.emit('resize');
    },
    status: () => status,
    close: () => ws.close(),
  };
}
