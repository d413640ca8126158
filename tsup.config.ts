import { defineConfig } from 'tsup';

// JavaScript only: declarations come from `tsc -p tsconfig.build.json` (dist/types), one file per module,
// which takes seconds where bundling them with tsup's dts step took minutes on a busy machine.
export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'testing/index': 'src/testing/index.ts',
    'cli/index': 'src/cli/index.ts',
    'adapters/index': 'src/runtime/adapters/index.ts',
    'bridges/ai-sdk/index': 'src/bridges/ai-sdk/index.ts',
    'bridges/openai-agents/index': 'src/bridges/openai-agents/index.ts',
  },
  format: ['esm'],
  target: 'node20',
  dts: false,
  sourcemap: true,
  clean: true,
  splitting: true,
  treeshake: true,
});
