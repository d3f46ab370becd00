import { defineConfig } from 'vitest/config';

// The test files keep the names Knative Functions' templates use (test/unit.ts,
// test/integration.ts) rather than vitest's default *.test.ts pattern.
export default defineConfig({
  test: {
    include: ['test/unit.ts', 'test/integration.ts'],
  },
});
