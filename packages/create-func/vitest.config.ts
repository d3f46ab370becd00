import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: 'create-func',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
