// The AI SDK bridge against ai 6 and its MockLanguageModelV3.
import { describe } from 'vitest';
import * as ai from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { aiSdkSuite, type MockContent } from './ai-sdk-suite.js';

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 5, text: 5, reasoning: undefined } };

describe('ai-sdk bridge (ai 6)', () => {
  aiSdkSuite({
    major: 6,
    ai: ai as never,
    mockModel: (answers: readonly MockContent[][], prompts: unknown[][], received: unknown[] = [], modelId = 'mock-model-id') => {
      let i = 0;
      return new MockLanguageModelV3({
        modelId,
        doGenerate: async (options) => {
          prompts.push(options.prompt as unknown[]);
          received.push(options);
          const content = answers[Math.min(i++, answers.length - 1)]!;
          const calls = content.some((c) => c.type === 'tool-call');
          return { content, finishReason: { unified: calls ? 'tool-calls' : 'stop', raw: undefined }, usage, warnings: [], response: { id: `resp-${i}` } };
        },
      });
    },
  });
});
