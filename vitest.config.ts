import { defineConfig } from 'vitest/config';

// One root config; each package is a project so `vitest run --project runtime` narrows a run.
export default defineConfig({
  test: {
    projects: ['packages/*', 'test'],
  },
});
