/** Public API of @func/runtime. */
export {};
