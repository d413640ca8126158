// `npm run test:pack`: build, pack, install into a fresh project, type-check and import (minutes, not in `npm test`).
import { defineConfig } from 'vitest/config';
import { sharedTestSettings } from './vitest.shared.js';

export default defineConfig({
  test: {
    ...sharedTestSettings,
    include: ['test-pack/**/*.test.ts'],
    testTimeout: 600_000,
  },
});
