/** A function image's entry, /func/runtime/func-runtime.mjs: the runtime, from the files beside it (loader.ts). */
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runImageEntry } from './loader.js';

await runImageEntry(dirname(fileURLToPath(import.meta.url)));
