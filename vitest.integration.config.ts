// `npm run test:integration`: the long, process-spawning and whole-corpus suites (test-integration/), kept out of
// `npm test` so that stays within about 2 minutes of CPU: a 221-step LevelDB runtime session checked at every step,
// the 14 real runs driven through the runtime, SIGKILL crash safety, the token lower bound proven over every
// vocabulary, lazy projection compared with the eager reference on many budgets, and every CLI command in a child process.
import { defineConfig } from 'vitest/config';
import { sharedTestSettings } from './vitest.shared.js';

export default defineConfig({
  test: {
    ...sharedTestSettings,
    include: ['test-integration/**/*.test.ts'],
    testTimeout: 300_000,
  },
});
