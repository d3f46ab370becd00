/**
 * Which better-sqlite3 serves the running Node.
 *
 * - Node 22 and later: better-sqlite3 13 (Node-API, prebuilt in the package: nothing to compile).
 *   Release 12 must not run on Node 24.19 or later: its objects are `node::ObjectWrap`s, whose
 *   destructor there asks for the current Node environment, and a statement collected by a
 *   background GC has none, so Node aborts the process (CHECK in RemoveEnvironmentCleanupHook).
 * - Node 20: release 12 (optional dependency `better-sqlite3-node20`, built from source at install);
 *   13 does not load on Node 20 (it crashes on first use).
 */
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

export type Driver = typeof BetterSqlite3;

const nodeMajor = Number(process.versions.node.split('.')[0]);

/** The package that serves this Node. */
export const driverPackage = nodeMajor >= 22 ? 'better-sqlite3' : 'better-sqlite3-node20';

let loaded: Driver | undefined;

/** Loaded on first use, so a server on another backend never needs SQLite at all. */
export function sqliteDriver(): Driver {
  return (loaded ??= loadDriver(driverPackage));
}

/** `name` for tests: the message a user sees when the package is missing. */
export function loadDriver(name: string): Driver {
  try {
    return createRequire(import.meta.url)(name) as Driver;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw err;
    throw new Error(
      `${name} is not installed (on Node ${process.versions.node} it is built from source when the package is installed; ` +
        'that build needs python3, make and a C++ compiler). Install them and run npm install again, or use Node 22 or later.',
    );
  }
}
