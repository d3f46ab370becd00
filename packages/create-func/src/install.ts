import { spawn } from 'node:child_process';
import { CreateError, InterruptedError } from './errors.js';

/**
 * The npm that runs us under `npm create` / `npm init` (npm_execpath), so the project is
 * installed by the same npm and Node.js; plain `npm` from PATH otherwise.
 */
function npmCommand(args: string[]): { command: string; args: string[]; shell: boolean } {
  const execPath = process.env.npm_execpath;
  if (execPath && /npm-cli\.[cm]?js$/.test(execPath)) return { command: process.execPath, args: [execPath, ...args], shell: false };
  return { command: 'npm', args, shell: process.platform === 'win32' };
}

/**
 * Runs `npm install` in `cwd` with the terminal attached, so npm's own progress is visible.
 * Resolves once npm has exited successfully. On abort npm is terminated and the promise
 * settles only after it has exited, so no npm process is still writing into `cwd` when the
 * caller removes it.
 */
export async function npmInstall(cwd: string, signal: AbortSignal, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  await runNpm(['install', '--no-audit', '--no-fund'], cwd, signal, env, 'inherit');
}

/** npm with its standard output kept (and returned), its errors on the terminal; the same abort rules. */
export const npmOutput = (args: string[], cwd: string, signal: AbortSignal, env: NodeJS.ProcessEnv = process.env): Promise<string> => runNpm(args, cwd, signal, env, 'pipe');

function runNpm(npmArgs: string[], cwd: string, signal: AbortSignal, env: NodeJS.ProcessEnv, stdout: 'inherit' | 'pipe'): Promise<string> {
  const { command, args, shell } = npmCommand(npmArgs);
  const what = `npm ${npmArgs[0]}`;
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', stdout, 'inherit'], shell });
    let out = '';
    child.stdout?.setEncoding('utf8').on('data', (d: string) => (out += d));
    const onAbort = () => child.kill('SIGTERM');
    signal.addEventListener('abort', onAbort, { once: true });
    child.once('error', (err) => {
      signal.removeEventListener('abort', onAbort);
      reject(new CreateError(`could not run npm: ${err.message}`));
    });
    child.once('close', (code, killedBy) => {
      signal.removeEventListener('abort', onAbort);
      if (signal.aborted) reject(signal.reason);
      else if (code === 0) resolve(out);
      // Ctrl-C in a terminal reaches npm too (same process group) and npm may exit first.
      else if (killedBy === 'SIGINT' || code === 130) reject(new InterruptedError('SIGINT'));
      else reject(new CreateError(`${what} failed (${killedBy ?? `exit code ${code}`}); nothing was created`));
    });
  });
}
