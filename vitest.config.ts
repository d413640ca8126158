// `npm test`: unit tests (test/) and property tests (property-tests/); slow suites have their own configs.
//
// Most files share their worker's modules (`isolate: false`): importing the library afresh for each of ~140 files
// was most of npm test's CPU (decision 0037). The files below need a module graph of their own: they replace modules
// (vi.mock), or read state a module keeps for the whole process.
import { defineConfig } from 'vitest/config';
import { sharedTestSettings } from './vitest.shared.js';

const ALL = ['test/**/*.test.ts', 'property-tests/**/*.test.ts'];

/** Files that need their own modules: each names why. */
export const ISOLATED = [
  'test/base/errors.test.ts', // vi.mock: errors of a second installed copy of the package
  'test/bridges/ai-sdk-v5.test.ts', // vi.mock: the `ai` package at major 5
  'test/context/tokenizer-optional.test.ts', // vi.mock: gpt-tokenizer not installed
  'test/log/unserialisable-event.test.ts', // vi.mock: a serialiser that throws
  'test/base/digest.test.ts', // reads the largest digest piece the process has hashed
];

export default defineConfig({
  test: {
    ...sharedTestSettings,
    projects: [
      { extends: true, test: { name: 'isolated', include: ISOLATED } },
      { extends: true, test: { name: 'shared', include: ALL, exclude: ISOLATED, isolate: false } },
    ],
  },
});
