// The PostgreSQL suites (test-pg/): run with a server, `scripts/with-postgres.sh npm run test:pg`.
import { defineConfig } from 'vitest/config';
import { sharedTestSettings } from './vitest.shared.js';

export default defineConfig({
  test: {
    ...sharedTestSettings,
    include: ['test-pg/**/*.test.ts'],
    testTimeout: 120_000,
    // The multi-process suites start their own writers; one file at a time keeps the 2-core machine usable.
    fileParallelism: false,
  },
});
