/**
 * A build or load failure as one line a developer can click: `file:line:column: message`. Editors
 * and terminals turn that shape into a link, and the dev loop prints nothing else for a bad save.
 */
import { relative, isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface SourceProblem {
  /** Absolute path of the file at fault, when known. */
  file?: string;
  line?: number;
  /** 1-based, as editors count. */
  column?: number;
  message: string;
}

interface EsbuildMessage {
  text: string;
  location?: { file: string; line: number; column: number } | null;
}

/** The first esbuild error of a failed build (esbuild's columns are 0-based). */
export function fromEsbuildFailure(err: unknown, cwd: string): SourceProblem {
  const first = (err as { errors?: EsbuildMessage[] }).errors?.[0];
  if (!first) return { message: (err as Error)?.message ?? String(err) };
  const loc = first.location;
  if (!loc) return { message: first.text };
  const file = isAbsolute(loc.file) ? loc.file : `${cwd}/${loc.file}`;
  return { file, line: loc.line, column: loc.column + 1, message: first.text };
}

const FRAME = /\(?((?:file:\/\/)?\/[^():]+):(\d+):(\d+)\)?$/;

/**
 * A module whose top-level code threw: its location is the first stack frame inside the project
 * (source maps on, so it names the .ts line), else the error alone.
 */
export function fromLoadError(err: unknown, projectDir: string): SourceProblem {
  const e = err as Error;
  const message = `${e?.name ?? 'Error'}: ${e?.message ?? String(err)}`;
  for (const line of (e?.stack ?? '').split('\n').slice(1)) {
    const m = FRAME.exec(line.trim());
    if (!m) continue;
    const file = m[1]!.startsWith('file:') ? fileURLToPath(m[1]!) : m[1]!;
    if (!file.startsWith(projectDir) || file.includes('/node_modules/')) continue;
    return { file, line: Number(m[2]), column: Number(m[3]), message };
  }
  return { message };
}

/** `src/index.ts:3:7: Expected ";" but found "x"`, the path relative to the project. */
export function formatProblem(p: SourceProblem, projectDir: string): string {
  if (!p.file) return p.message;
  const shown = relative(projectDir, p.file) || p.file;
  const where = p.line === undefined ? shown : `${shown}:${p.line}:${p.column ?? 1}`;
  return `${where}: ${p.message}`;
}
