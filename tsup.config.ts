import { defineConfig } from 'tsup';

// JavaScript only: declarations come from `tsc -p tsconfig.build.json` (dist/types), one file per module,
// which takes seconds where bundling them with tsup's dts step took minutes on a busy machine.
export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'context/index': 'src/context/entry.ts',
    'testing/index': 'src/testing/index.ts',
    'cli/index': 'src/cli/index.ts',
    'adapters/index': 'src/adapters/index.ts',
    'postgres/index': 'src/postgres/index.ts',
    'adapters/openai': 'src/adapters/openai.ts',
    'adapters/anthropic': 'src/adapters/anthropic.ts',
    'bridges/ai-sdk/index': 'src/bridges/ai-sdk/index.ts',
    'bridges/openai-agents/index': 'src/bridges/openai-agents/index.ts',
    'bridges/langchain/index': 'src/bridges/langchain/index.ts',
    'otel/index': 'src/otel/index.ts',
  },
  format: ['esm'],
  target: 'node20',
  dts: false,
  // No source maps in the package: a map without the sources it points at helps nobody, and with them it doubles the size.
  sourcemap: false,
  clean: true,
  splitting: true,
  treeshake: true,
});
