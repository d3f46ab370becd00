/**
 * esbuild plugins shared by the dev bundler and the production build.
 */
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Loader, Plugin } from 'esbuild';

/** A specifier that names a package or a builtin, not a file. */
const BARE = /^[^./]/;
const RESOLVING = Symbol('resolving');

/**
 * Dev: packages stay outside the bundle (so a reload re-evaluates only the user's code) and are
 * imported by absolute URL, because the dev bundle lives in a temp directory from which a bare
 * specifier would not find the project's node_modules. `require()` keeps the bare name: the bundle
 * banner binds `require` to the entry's directory.
 */
export function externalPackagesByUrl(): Plugin {
  return {
    name: 'func-external-packages',
    setup(build) {
      build.onResolve({ filter: BARE }, async (args) => {
        if (args.pluginData === RESOLVING) return undefined;
        if (isBuiltin(args.path)) return { path: args.path, external: true };
        if (args.kind === 'require-call' || args.kind === 'require-resolve') return { path: args.path, external: true };
        const r = await build.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: RESOLVING });
        if (r.errors.length > 0) return { errors: r.errors };
        return { path: pathToFileURL(r.path).href, external: true };
      });
    },
  };
}

const LOADERS: Record<string, Loader> = { '.ts': 'ts', '.mts': 'ts', '.cts': 'ts', '.tsx': 'tsx', '.jsx': 'jsx' };

/**
 * Dev: `import.meta.url` (and dirname/filename) keep naming the source file, not the temp bundle,
 * so code that reads files next to itself works the same in dev as when served from source.
 */
export function keepImportMetaOfSource(): Plugin {
  return {
    name: 'func-import-meta',
    setup(build) {
      build.onLoad({ filter: /\.(?:[cm]?[jt]s|[jt]sx)$/ }, async (args) => {
        if (args.path.includes('/node_modules/')) return undefined;
        const source = await readFile(args.path, 'utf8');
        if (!source.includes('import.meta.')) return undefined;
        const contents = source
          .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href))
          .replaceAll('import.meta.filename', JSON.stringify(args.path))
          .replaceAll('import.meta.dirname', JSON.stringify(dirname(args.path)));
        const ext = /\.[^.]+$/.exec(args.path)![0];
        return { contents, loader: LOADERS[ext] ?? 'js', resolveDir: dirname(args.path) };
      });
    },
  };
}

/** Packages that load a compiled `.node` addon through one of these helpers. */
const ADDON_LOADERS = ['bindings', 'node-gyp-build', 'prebuild-install', '@mapbox/node-pre-gyp', 'node-pre-gyp', 'nan', 'node-addon-api'];

function packageRoot(file: string): string | undefined {
  for (let dir = dirname(file); dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && dir.includes('/node_modules/')) return dir;
  }
  return undefined;
}

function isNativePackage(root: string): boolean {
  if (existsSync(join(root, 'binding.gyp'))) return true;
  try {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { gypfile?: boolean; dependencies?: Record<string, string> };
    return pkg.gypfile === true || ADDON_LOADERS.some((d) => pkg.dependencies?.[d] !== undefined);
  } catch {
    return false;
  }
}

const packageName = (specifier: string): string => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');

/**
 * Production: a native addon cannot be inlined into JavaScript, so its package stays an external
 * import and must be present in node_modules at run time; `found` collects their names for the report.
 */
export function externalNativeAddons(found: Set<string>): Plugin {
  const verdicts = new Map<string, boolean>();
  return {
    name: 'func-native-addons',
    setup(build) {
      build.onResolve({ filter: /\.node$/ }, (args) => ({ path: args.path, external: true }));
      build.onResolve({ filter: BARE }, async (args) => {
        if (args.pluginData === RESOLVING || isBuiltin(args.path)) return undefined;
        const r = await build.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: RESOLVING });
        const root = r.errors.length === 0 ? packageRoot(r.path) : undefined;
        if (!root) return undefined;
        let native = verdicts.get(root);
        if (native === undefined) verdicts.set(root, (native = isNativePackage(root)));
        if (!native) return undefined;
        found.add(packageName(args.path));
        return { path: args.path, external: true };
      });
    },
  };
}
