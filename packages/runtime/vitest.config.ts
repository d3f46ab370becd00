import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: 'runtime',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    // The suites observe the process runtime (pod IPs on loopback, function processes); the oci runtime has its own tests.
    env: { CLUSTER_API_CONTAINER_RUNTIME: 'process' },
    hookTimeout: 60_000,
  },
});
