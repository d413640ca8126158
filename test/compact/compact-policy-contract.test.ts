// The published CompactPolicy contract run against the built-in policies, and shown to catch broken ones.
import { describe, expect, it } from 'vitest';
import { FactSummaryCompactPolicy, LlmCompactPolicy, ProviderCompactPolicy, StructuredSummaryCompactPolicy, type CompactPolicy, type ProviderCompactor } from '../../src/compact/index.js';
import { TypeAwareContextProjector } from '../../src/context/index.js';
import type { ModelClient } from '../../src/model/index.js';
import { describeCompactPolicyContract } from '../../src/testing/index.js';

// Answers every request: a chunked summarizer (summarizerMaxTokens: 300) makes one call per chunk, and six compactions
// of a generated session can ask for more than any fixed script holds.
const summarizer = (): ModelClient => ({
  create: async () => ({
    outputText: JSON.stringify({ goal: 'fix the parser', completed: ['read the code'], pending: ['run tests'], decisions: [], errors: [], testResults: [], openQuestions: [] }),
    items: [],
  }),
});

describeCompactPolicyContract({ describe, it }, 'StructuredSummaryCompactPolicy', {
  policy: () => new StructuredSummaryCompactPolicy({ maxItems: 6 }),
  maxSummaryChars: 4_500,
  numRuns: 40,
});
describeCompactPolicyContract({ describe, it }, 'StructuredSummaryCompactPolicy (TypeAware, tokens)', {
  policy: () => new StructuredSummaryCompactPolicy({ maxTokens: 300, maxRecentToolResults: 1 }, new TypeAwareContextProjector()),
  maxSummaryChars: 4_500,
  numRuns: 40,
});
describeCompactPolicyContract({ describe, it }, 'LlmCompactPolicy', { policy: () => new LlmCompactPolicy(summarizer(), 'summarizer', 4), numRuns: 40 });
describeCompactPolicyContract({ describe, it }, 'LlmCompactPolicy (tokens, retained user turns, chunked)', {
  policy: () => new LlmCompactPolicy(summarizer(), 'summarizer', 4, { compactAboveTokens: 200, keepTokens: 80, retainUserMessages: { maxChars: 200 }, summarizerMaxTokens: 300 }),
  numRuns: 30,
});
describeCompactPolicyContract({ describe, it }, 'FactSummaryCompactPolicy', { policy: () => new FactSummaryCompactPolicy({ maxItems: 4 }), maxSummaryChars: 4_000, numRuns: 40 });
describeCompactPolicyContract({ describe, it }, 'FactSummaryCompactPolicy (tokens, retained user turns)', {
  policy: () => new FactSummaryCompactPolicy({ maxItems: 6, keepTokens: 80, compactAboveTokens: 200, retainUserMessages: true }),
  maxSummaryChars: 4_000,
  numRuns: 40,
});

// A provider that compacts as OpenAI's responses.compact does: the user messages, then one opaque compaction item.
const providerCompactor = (): ProviderCompactor => ({
  provider: 'fake-responses',
  compact: async ({ items }) => ({
    items: [...items.filter((item) => item.type === 'message' && item['role'] === 'user'), { type: 'compaction', id: 'cmp', encrypted_content: 'opaque' }],
    usage: { inputTokens: 100, outputTokens: 10 },
  }),
});
describeCompactPolicyContract({ describe, it }, 'ProviderCompactPolicy', { policy: () => new ProviderCompactPolicy(providerCompactor(), { model: 'm', maxItems: 4, compactAbove: 8 }), numRuns: 40 });
describeCompactPolicyContract({ describe, it }, 'ProviderCompactPolicy (tokens)', {
  policy: () => new ProviderCompactPolicy(providerCompactor(), { model: 'm', compactAboveTokens: 200, keepTokens: 80 }),
  numRuns: 30,
});

describe('the CompactPolicy contract catches broken policies', () => {
  const failuresOf = async (policy: () => CompactPolicy): Promise<string[]> => {
    const tests: Array<{ name: string; body: () => Promise<void> | void }> = [];
    describeCompactPolicyContract({ describe: (_n, body) => body(), it: (name, body) => void tests.push({ name, body }) }, 'broken', {
      policy,
      numRuns: 60,
    });
    const failed: string[] = [];
    for (const test of tests) {
      try {
        await test.body();
      } catch {
        failed.push(test.name);
      }
    }
    return failed;
  };
  const lists = { completed: [], pending: [], decisions: [], changedArtifacts: [], failedCommands: [], testResults: [], userConfirmations: [], sandboxState: [], openQuestions: [], readFiles: [], modifiedFiles: [] };

  it('a policy that keeps every other item (splits pairs) and concatenates summaries forever', async () => {
    const failed = await failuresOf(() => ({
      compact: (snapshot) => {
        const summary = `${snapshot.summary ?? ''}\n${'x'.repeat(5_000)}`;
        return { ...lists, summary, memory: { items: snapshot.items.filter((_, i) => i % 2 === 0), summary } };
      },
    }));
    expect(failed).toEqual([
      'compacts without mutating the snapshot, keeps order and pairs, and fills every result list',
      'keeps the summary within 16000 characters however often it compacts',
    ]);
  });

  it('a policy that reverses what it keeps, or mutates the snapshot', async () => {
    const reversed = await failuresOf(() => ({ compact: (s) => ({ ...lists, memory: { items: [...s.items].reverse() } }) }));
    expect(reversed).toContain('compacts without mutating the snapshot, keeps order and pairs, and fills every result list');
    const mutating = await failuresOf(() => ({
      compact: (s) => {
        (s.items as unknown[]).length = 0;
        return { ...lists };
      },
    }));
    expect(mutating).toContain('compacts without mutating the snapshot, keeps order and pairs, and fills every result list');
  });
});
