/** Public API of @func/cluster-api. */
export type * from './api/meta.js';
export type * from './registry/definition.js';
export type * from './storage/interface.js';
