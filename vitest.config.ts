import { defineConfig } from 'vitest/config';

/**
 * With `TEST_DATABASE_URL` the suite runs on that PostgreSQL server (a fresh database per run) and
 * test files run in parallel. Without it, on the embedded PGlite, whose socket serialises one
 * session, so files run one at a time.
 */
const embedded = !process.env.TEST_DATABASE_URL;

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    fileParallelism: !embedded,
    pool: 'forks',
    reporters: ['default', './test/reporters/summary-reporter.ts'],
  },
});
