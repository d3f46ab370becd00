#!/usr/bin/env node
/**
 * The func-runtime command's entry point: it loads command-line.ts and runs it.
 *
 * It loads it with require() (Node ≥ 20.19 loads an ES module graph that way, synchronously), not
 * with import. On Node 20, import reads every module file through a `fs/promises` FileHandle, which
 * is an EventEmitter; after a few dozen of them V8 has seen two FileHandle shapes in
 * EventEmitter.init, and with the server's Server, Socket, IncomingMessage and ServerResponse that
 * makes its property stores megamorphic. Every request's IncomingMessage and ServerResponse is then
 * built through V8's generic store code: measured, 3–6 % more CPU per hello request
 * (bench/README.md). require() reads the files without a FileHandle. Where require(esm) is off
 * (`--no-experimental-require-module`), import it is.
 */
import { createRequire } from 'node:module';

const requireSync = createRequire(import.meta.url);
const { runCommandLine } = (process.features as { require_module?: boolean }).require_module
  ? (requireSync('./command-line.js') as typeof import('./command-line.js'))
  : await import('./command-line.js');

await runCommandLine(process.argv.slice(2));
