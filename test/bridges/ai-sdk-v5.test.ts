// The AI SDK bridge against ai 5 (installed as `ai-v5`) and its MockLanguageModelV2: the bridge's `ai` import is ai 5 here.
import { describe, vi } from 'vitest';
import * as ai from 'ai-v5';
import { MockLanguageModelV2 } from 'ai-v5/test';
import { aiSdkSuite, type MockContent } from './ai-sdk-suite.js';

vi.mock('ai', async () => await import('ai-v5'));

describe('ai-sdk bridge (ai 5)', () => {
  aiSdkSuite({
    major: 5,
    ai: ai as never,
    mockModel: (answers: readonly MockContent[][], prompts: unknown[][], received: unknown[] = [], modelId = 'mock-model-id') => {
      let i = 0;
      return new MockLanguageModelV2({
        modelId,
        doGenerate: async (options) => {
          prompts.push(options.prompt as unknown[]);
          received.push(options);
          const content = answers[Math.min(i++, answers.length - 1)]!;
          const calls = content.some((c) => c.type === 'tool-call');
          return { content, finishReason: calls ? 'tool-calls' : 'stop', usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 }, warnings: [], response: { id: `resp-${i}` } };
        },
      });
    },
  });
});
