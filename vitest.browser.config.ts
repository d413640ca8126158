// `npm run test:browser`: the visual report in a real (system) Chromium through playwright-core; not part of `npm test`.
import { defineConfig } from 'vitest/config';
import { sharedTestSettings } from './vitest.shared.js';

export default defineConfig({
  test: {
    ...sharedTestSettings,
    include: ['test-browser/**/*.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 900_000,
  },
});
