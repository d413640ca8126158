// Settings every vitest suite shares: the fast-check setup and the reporter whose last line CI sums.
import type { ViteUserConfig } from 'vitest/config';

export const sharedTestSettings = {
  setupFiles: ['./test/support/fast-check-setup.ts'],
  testTimeout: 60_000,
  hookTimeout: 60_000,
  reporters: ['default', './test/support/summary-reporter.ts'],
} satisfies NonNullable<ViteUserConfig['test']>;
