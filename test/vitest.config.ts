import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: 'e2e',
    include: ['**/*.test.ts'],
    exclude: ['**/node_modules/**'],
    testTimeout: 300_000,
    // The suites observe the process runtime (pod IPs on loopback, function processes); the oci runtime has its own tests.
    env: { CLUSTER_API_CONTAINER_RUNTIME: 'process' },
    hookTimeout: 300_000,
  },
});
