/**
 * Type-checking a TypeScript function, beside the bundle: esbuild strips types without checking
 * them, so `build` and `deploy` run the project's own TypeScript (`tsc --noEmit`, incremental, its
 * tsconfig.json) in a child process while the bundle is made, and refuse to ship a type error;
 * `dev` reports them as warnings after each reload without blocking it. A project without a
 * tsconfig.json is not a TypeScript project; one without TypeScript installed is not checked, and
 * the commands say so.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const requireLazy = createRequire(import.meta.url);

export type TypeCheck =
  | { status: 'passed' }
  /** Not a TypeScript project (no tsconfig.json): nothing to check. */
  | { status: 'none' }
  | { status: 'skipped'; reason: string }
  | { status: 'failed'; count: number; diagnostics: string[] };

/** How many diagnostics a refusal or a warning shows; the count says how many more there are. */
export const ShownDiagnostics = 20;

/** The project's own `tsc` (its TypeScript version, its rules), or undefined. */
function projectTsc(dir: string): string | undefined {
  try {
    return createRequire(join(dir, 'package.json')).resolve('typescript/bin/tsc');
  } catch {
    return undefined;
  }
}

/** `file(line,col): error TS…` lines and their continuation lines, one string per diagnostic. */
export function parseDiagnostics(output: string): string[] {
  const diagnostics: string[] = [];
  for (const line of output.split(/\r?\n/)) {
    if (!line.trim()) continue;
    if (/^\S.*(: )?error TS\d+:/.test(line) || diagnostics.length === 0) diagnostics.push(line);
    else diagnostics[diagnostics.length - 1] += `\n${line}`;
  }
  return diagnostics;
}

export async function typeCheck(projectDir: string, options: { signal?: AbortSignal } = {}): Promise<TypeCheck> {
  if (!existsSync(join(projectDir, 'tsconfig.json'))) return { status: 'none' };
  const tsc = projectTsc(projectDir);
  if (!tsc) return { status: 'skipped', reason: 'typescript is not installed in the project (npm install --save-dev typescript)' };
  const cache = join(projectDir, '.func');
  mkdirSync(cache, { recursive: true });
  const args = [tsc, '--noEmit', '--pretty', 'false', '--incremental', '--tsBuildInfoFile', join(cache, 'typecheck.tsbuildinfo'), '-p', projectDir];
  // Loaded here: a function pod starting never pays for node:child_process (with dgram and net's handles).
  const { spawn } = requireLazy('node:child_process') as typeof import('node:child_process');
  const child = spawn(process.execPath, args, { cwd: projectDir, stdio: ['ignore', 'pipe', 'pipe'], signal: options.signal });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  if (code === 0) return { status: 'passed' };
  const diagnostics = parseDiagnostics(output);
  return { status: 'failed', count: diagnostics.length, diagnostics };
}

/** The diagnostics as shown to a person: the first ShownDiagnostics, then how many more. */
export function formatDiagnostics(check: Extract<TypeCheck, { status: 'failed' }>): string {
  const shown = check.diagnostics.slice(0, ShownDiagnostics).join('\n');
  const more = check.count > ShownDiagnostics ? `\n… and ${check.count - ShownDiagnostics} more` : '';
  return shown + more;
}

/**
 * dev's checks: one at a time, after each reload; a reload during a check makes one more check when
 * it ends. `report` hears each outcome that differs from the last (errors each time they change).
 */
export class BackgroundTypeCheck {
  #running = false;
  #again = false;
  #last = '';
  readonly #abort = new AbortController();

  constructor(
    private readonly projectDir: string,
    private readonly report: (check: TypeCheck) => void,
  ) {}

  request(): void {
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = true;
    void typeCheck(this.projectDir, { signal: this.#abort.signal })
      .then((check) => {
        const key = check.status === 'failed' ? check.diagnostics.join('\n') : check.status;
        // A first check that passes says nothing; errors, and their fixing, are news.
        if (key !== this.#last && !(this.#last === '' && check.status === 'passed')) this.report(check);
        this.#last = key;
      }, () => undefined)
      .finally(() => {
        this.#running = false;
        if (this.#again && !this.#abort.signal.aborted) {
          this.#again = false;
          this.request();
        }
      });
  }

  stop(): void {
    this.#abort.abort();
  }
}
