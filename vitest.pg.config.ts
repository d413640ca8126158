// The PostgreSQL suites (test-pg/): run with a server, `scripts/with-postgres.sh npm run test:pg`.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test-pg/**/*.test.ts'],
    setupFiles: ['./test/support/fast-check-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    // The multi-process suites start their own writers; one file at a time keeps the 2-core machine usable.
    fileParallelism: false,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
