/**
 * Module hooks that let a function be TypeScript source with no build step: `.ts` / `.mts` files
 * are transformed by esbuild (types stripped, inline source map so stack traces name the .ts line),
 * and `./x.js` or `./x` imports find `./x.ts`, as tsc's NodeNext and bundler resolution expect.
 * Registered by loader.ts only when the entry is TypeScript, so esbuild never loads otherwise.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

interface ResolveContext { parentURL?: string; conditions: string[] }
type NextResolve = (specifier: string, context: ResolveContext) => Promise<{ url: string; format?: string | null }>;
type NextLoad = (url: string, context: { format?: string | null }) => Promise<{ format: string; source?: unknown }>;

const TS_FILE = /\.m?ts$/;
const RELATIVE = /^(\.{1,2}\/|\/|file:)/;

function tsAlternatives(specifier: string): string[] {
  if (/\.m?js$/.test(specifier)) return [specifier.replace(/js$/, 'ts')];
  if (/\.[a-z]+$/i.test(specifier.split('/').pop() ?? '')) return [];
  return [`${specifier}.ts`, `${specifier}/index.ts`];
}

export async function resolve(specifier: string, context: ResolveContext, next: NextResolve) {
  try {
    return await next(specifier, context);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const fromTs = context.parentURL !== undefined && TS_FILE.test(context.parentURL);
    if (!fromTs || !RELATIVE.test(specifier) || (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'ERR_UNSUPPORTED_DIR_IMPORT')) throw err;
    for (const alt of tsAlternatives(specifier)) {
      try {
        return await next(alt, context);
      } catch {
        // try the next spelling; the original error is the one worth reporting
      }
    }
    throw err;
  }
}

export async function load(url: string, context: { format?: string | null }, next: NextLoad) {
  if (!url.startsWith('file:') || !TS_FILE.test(new URL(url).pathname)) return next(url, context);
  const file = fileURLToPath(url);
  const { transform } = await import('esbuild');
  const source = await readFile(file, 'utf8');
  const out = await transform(source, {
    loader: 'ts',
    format: 'esm',
    sourcemap: 'inline',
    sourcefile: file,
    target: `node${process.versions.node.split('.')[0]}`,
  });
  return { format: 'module', source: out.code, shortCircuit: true };
}
