/**
 * The project's `.env` in dev, as `func run` passes a function's envs: variables already set in the
 * shell win (so `FOO=x func-runtime dev` overrides the file), and a key removed from the file is
 * removed from the environment on the next reload. Values are never logged: they are often secrets.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';

export class EnvFile {
  readonly file: string;
  /** Keys this file put into process.env (and may therefore change or remove). */
  #owned = new Set<string>();

  constructor(dir: string) {
    this.file = join(dir, '.env');
  }

  /** Re-reads the file into `env`; returns the names that changed. Throws with the reason if unreadable. */
  apply(env: NodeJS.ProcessEnv = process.env): string[] {
    let text = '';
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`Cannot read ${this.file}: ${(err as Error).message}`);
    }
    const next = parseEnv(text) as Record<string, string>;
    const changed: string[] = [];
    for (const key of this.#owned) {
      if (key in next) continue;
      delete env[key];
      this.#owned.delete(key);
      changed.push(key);
    }
    for (const [key, value] of Object.entries(next)) {
      if (env[key] !== undefined && !this.#owned.has(key)) continue;
      if (env[key] !== value) changed.push(key);
      env[key] = value;
      this.#owned.add(key);
    }
    return changed;
  }
}
