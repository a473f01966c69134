import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // The CDK construct aliases this to a team's tools module; tests use the empty default.
    alias: {
      'countersign-team-tools': new URL('./lambdas/tools/no-team-tools.ts', import.meta.url).pathname,
    },
  },
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // CDK synth and the browser test are heavy: two cores, two workers.
    maxWorkers: 2,
  },
});
