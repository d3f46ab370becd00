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
export function npmInstall(cwd: string, signal: AbortSignal, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const { command, args, shell } = npmCommand(['install', '--no-audit', '--no-fund']);
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'inherit', 'inherit'], shell });
    const onAbort = () => child.kill('SIGTERM');
    signal.addEventListener('abort', onAbort, { once: true });
    child.once('error', (err) => {
      signal.removeEventListener('abort', onAbort);
      reject(new CreateError(`could not run npm: ${err.message}`));
    });
    child.once('close', (code, killedBy) => {
      signal.removeEventListener('abort', onAbort);
      if (signal.aborted) reject(signal.reason);
      else if (code === 0) resolve();
      // Ctrl-C in a terminal reaches npm too (same process group) and npm may exit first.
      else if (killedBy === 'SIGINT' || code === 130) reject(new InterruptedError('SIGINT'));
      else reject(new CreateError(`npm install failed (${killedBy ?? `exit code ${code}`}); nothing was created`));
    });
  });
}
