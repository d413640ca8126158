// `npm test`: unit tests (test/) and property tests (property-tests/); slow suites have their own configs.
import { defineConfig } from 'vitest/config';
import { sharedTestSettings } from './vitest.shared.js';

export default defineConfig({
  test: {
    ...sharedTestSettings,
    include: ['test/**/*.test.ts', 'property-tests/**/*.test.ts'],
  },
});
