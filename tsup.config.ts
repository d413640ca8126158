import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'testing/index': 'src/testing/index.ts',
    'cli/index': 'src/cli/index.ts',
    'adapters/index': 'src/runtime/adapters/index.ts',
    'bridges/ai-sdk/index': 'src/bridges/ai-sdk/index.ts',
    'bridges/openai-agents/index': 'src/bridges/openai-agents/index.ts',
    'bridges/langchain/index': 'src/bridges/langchain/index.ts',
  },
  format: ['esm'],
  target: 'node20',
  dts: true,
  sourcemap: true,
  clean: true,
  splitting: true,
  treeshake: true,
});
