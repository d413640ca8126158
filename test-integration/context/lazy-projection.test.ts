// Lazy token counting changes nothing but the work: the projectors give the same items, fates, notes and token
// totals as the old eager algorithm (test/support/reference-projection.ts) on generated sessions, a synthetic
// agent session and the 14 real runs, cold (fresh items) and warm (counts left by earlier projections), with
// sourceTokens present only when every count is known and then equal to the old total.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadTrajectories, syntheticConversation } from '../../bench/corpus.js';
import {
  DefaultContextProjector,
  TypeAwareContextProjector,
  approxTokenizer,
  itemTokenCount,
  openAiTokenizer,
  projectContext,
} from '../../src/context/index.js';
import type { ContextBudget, ContextProjection, Tokenizer } from '../../src/context/index.js';
import type { MemoryItem } from '../../src/items/index.js';
import { userMessage } from '../../src/items/index.js';
import { fromChatCompletions } from '../../src/providers/index.js';
import { arbitraryBudget, arbitraryItems } from '../../src/testing/index.js';
import { referenceProjectContext } from '../../test/support/reference-projection.js';

const o200k = openAiTokenizer('o200k_base');
const cl100k = openAiTokenizer('cl100k_base');
/** Counts words: a custom tokenizer, counted lazily with no lower bound but the per-item overhead. */
const words: Tokenizer = { name: 'words', count: (text) => text.split(/\s+/).filter(Boolean).length };

/** The same counts under another identity, so the reference never fills the memo the projector under test reads. */
const twin = (tokenizer: Tokenizer): Tokenizer => ({ name: `${tokenizer.name} (reference)`, count: (text) => tokenizer.count(text) });
const twins = new Map<Tokenizer, Tokenizer>([o200k, cl100k, approxTokenizer, words].map((t) => [t, twin(t)]));

/** `npm run test:deep` (FC_NUM_RUNS above 100) widens every sweep below. */
const deep = Number(process.env['FC_NUM_RUNS'] ?? '100') > 100;

const fresh = (items: readonly MemoryItem[]): MemoryItem[] => items.map((item) => Object.freeze(structuredClone(item)));

/** Fails with the first difference between a projection and the old algorithm's. */
const expectSameAsReference = (
  actual: ContextProjection,
  items: readonly MemoryItem[],
  budget: ContextBudget,
  tokenizer: Tokenizer,
  tiers: boolean,
): void => {
  const expected = referenceProjectContext(items, budget, { tokenizer: twins.get(tokenizer) as Tokenizer, tiers });
  const context = { budget, tokenizer: tokenizer.name, tiers, n: items.length };
  expect({ context, items: actual.items }).toEqual({ context, items: expected.items });
  const { sourceTokens, ...report } = actual.report;
  const { sourceTokens: expectedSourceTokens, ...expectedReport } = expected.report;
  expect({ context, report: { ...report, fates: [...report.fates] } }).toEqual({ context, report: expectedReport });
  if (sourceTokens !== undefined) expect({ context, sourceTokens }).toEqual({ context, sourceTokens: expectedSourceTokens });
  if (tokenizer === approxTokenizer) expect(sourceTokens).toBe(expectedSourceTokens);
};

const project = (items: readonly MemoryItem[], budget: ContextBudget, tokenizer: Tokenizer, tiers: boolean): ContextProjection =>
  projectContext(items, budget, { tokenizer, tiers });

describe('lazy token counting gives the old projections', () => {
  it('on generated sessions and budgets, cold and warm, with every kind of tokenizer', () => {
    const tokenizers = fc.constantFrom(o200k, cl100k, approxTokenizer, words);
    fc.assert(
      fc.property(arbitraryItems(), fc.array(arbitraryBudget(), { minLength: 1, maxLength: 4 }), tokenizers, fc.boolean(), (items, budgets, tokenizer, tiers) => {
        const warm = fresh(items);
        // The reference predates keepUserMessages.
        for (const { keepUserMessages: _users, ...budget } of budgets) {
          expectSameAsReference(project(fresh(items), budget, tokenizer, tiers), items, budget, tokenizer, tiers);
          const warmProjection = project(warm, budget, tokenizer, tiers);
          expectSameAsReference(warmProjection, items, budget, tokenizer, tiers);
          // Whether sourceTokens is known depends on the input, never on what earlier projections counted.
          expect(warmProjection.report.sourceTokens).toBe(project(fresh(items), budget, tokenizer, tiers).report.sourceTokens);
        }
      }),
      { numRuns: deep ? 600 : 40 },
    );
  });

  it('on tight token budgets over long generated sessions (exact o200k)', () => {
    const budget = fc.record(
      {
        maxTokens: fc.integer({ min: 0, max: 3_000 }),
        maxItems: fc.integer({ min: -1, max: 80 }),
        pinnedPrefixItems: fc.integer({ min: 0, max: 4 }),
        evictionStep: fc.constantFrom(1, 1, 3, 7, 20),
        maxRecentToolResults: fc.integer({ min: -1, max: 10 }),
        trimOldReasoning: fc.boolean(),
      },
      { requiredKeys: ['maxTokens'] },
    );
    fc.assert(
      fc.property(arbitraryItems({ minTurns: 5, maxTurns: 25, maxOutputChars: 2_000 }), budget, fc.boolean(), (items, b, tiers) => {
        expectSameAsReference(project(fresh(items), b, o200k, tiers), items, b, o200k, tiers);
      }),
      { numRuns: deep ? 400 : 30 },
    );
  });

  const budgetsFor = (tokens: readonly number[]): ContextBudget[] =>
    tokens.flatMap((maxTokens) =>
      [
        { maxTokens },
        { maxTokens, pinnedPrefixItems: 1 },
        { maxTokens, pinnedPrefixItems: 2, evictionStep: 7 },
        { maxTokens, pinnedPrefixItems: 1, evictionStep: 20, maxRecentToolResults: 5 },
        { maxTokens, maxItems: 60, maxApproxChars: 40_000, pinnedPrefixItems: 1, trimOldReasoning: true },
      ] satisfies ContextBudget[],
    );

  it('on a synthetic agent session, for budgets from 0 to everything', () => {
    const items = fromChatCompletions(syntheticConversation(deep ? 2_000 : 300, 20_260_101));
    const budgets = budgetsFor(deep ? [0, 1, 3, 4, 5, 9, 40, 300, 2_000, 8_000, 16_000, 60_000, 10_000_000] : [0, 4, 9, 300, 4_000, 10_000_000]);
    for (const tokenizer of [o200k, approxTokenizer, words]) {
      const warm = fresh(items);
      for (const budget of budgets) {
        for (const tiers of [false, true]) {
          if (tokenizer !== approxTokenizer) expectSameAsReference(project(fresh(items), budget, tokenizer, tiers), items, budget, tokenizer, tiers);
          expectSameAsReference(project(warm, budget, tokenizer, tiers), items, budget, tokenizer, tiers);
        }
      }
    }
  });

  const runs = loadTrajectories();
  it.skipIf(runs === undefined)('on the 14 real runs and their prefixes, cold and as an agent grows them (exact o200k)', () => {
    const budgets = budgetsFor(deep ? [0, 1, 4, 5, 100, 300, 1_000, 2_000, 4_000, 8_000, 32_000, 10_000_000] : [0, 4, 300, 2_000, 8_000, 10_000_000]);
    for (const [r, run] of (runs ?? []).entries()) {
      const items = fromChatCompletions(run.chat);
      const ends = deep ? [1, 2, 3].map((k) => Math.ceil((k * items.length) / 3)) : [Math.ceil((((r % 3) + 1) * items.length) / 3)];
      for (const end of ends) {
        const prefix = items.slice(0, end);
        for (const [b, budget] of budgets.entries()) {
          for (const tiers of deep ? [false, true] : [(b + r) % 2 === 0]) {
            expectSameAsReference(project(fresh(prefix), budget, o200k, tiers), prefix, budget, o200k, tiers);
          }
        }
      }
      // Turn by turn, the same objects growing (the warm path of an agent loop).
      const grown = fresh(items);
      const budget: ContextBudget = { maxTokens: 8_000, pinnedPrefixItems: 2 };
      for (let end = 1; end <= grown.length; end += deep ? 1 : 7) {
        expectSameAsReference(project(grown.slice(0, end), budget, o200k, false), items.slice(0, end), budget, o200k, false);
      }
    }
  });
});

describe('sourceTokens with a counted-lazily tokenizer', () => {
  const history = (n: number): MemoryItem[] => Array.from({ length: n }, (_, k) => Object.freeze(userMessage(`message ${k} says a few words`)));

  it('is present, and exact, when every item had to be counted', () => {
    const items = history(30);
    const { report } = new DefaultContextProjector({ tokenizer: o200k }).project(items, { maxTokens: 100_000 });
    expect(report.sourceTokens).toBe(items.reduce((sum, item) => sum + itemTokenCount(item, o200k), 0));
    expect(report.tokenLimitApplied).toBe(false);
    expect(new DefaultContextProjector({ tokenizer: o200k }).project(fresh(items)).report.sourceTokens).toBe(report.sourceTokens);
  });

  it('is absent (never estimated) when a limit dropped items whose counts the decision did not need', () => {
    const items = history(500);
    const projector = new DefaultContextProjector({ tokenizer: o200k });
    const { report } = projector.project(items, { maxTokens: 200 });
    expect(report.tokenLimitApplied).toBe(true);
    expect(report.sourceTokens).toBeUndefined();
    expect(report.projectedTokens).toBe(report.fates.filter((f) => f.fate === 'kept').reduce((sum, f) => sum + itemTokenCount(items[f.index] as MemoryItem, o200k), 0));
    // Counting every item elsewhere does not make it appear: the report depends on the input alone.
    for (const item of items) itemTokenCount(item, o200k);
    expect(projector.project(items, { maxTokens: 200 }).report.sourceTokens).toBeUndefined();
    expect(projector.project(items, { maxItems: 10 }).report.sourceTokens).toBeUndefined();
    expect(new TypeAwareContextProjector({ tokenizer: o200k }).project(items, {}).report.sourceTokens).toBeDefined();
  });

  it('is always present with approxTokenizer (its counts are free)', () => {
    const items = history(500);
    const { report } = new DefaultContextProjector().project(items, { maxTokens: 200, maxItems: 5 });
    expect(report.sourceTokens).toBe(items.reduce((sum, item) => sum + itemTokenCount(item, approxTokenizer), 0));
  });
});

describe('lazy counting counts less', () => {
  it('counts only the newest texts of a long history under a small budget, each at most once', () => {
    const seen: string[] = [];
    const spy: Tokenizer = { name: 'spy', count: (text) => (seen.push(text), text.split(' ').length) };
    const items = Array.from({ length: 2_000 }, (_, k) => Object.freeze(userMessage(`turn ${k} of a long and wordy conversation`)));
    const projector = new DefaultContextProjector({ tokenizer: spy });
    const { report } = projector.project(items, { maxTokens: 120, pinnedPrefixItems: 1 });
    expect(report.projectedItemCount).toBe(10);
    expect(seen.length).toBeLessThan(20);
    projector.project([...items, Object.freeze(userMessage('one more'))], { maxTokens: 120, pinnedPrefixItems: 1 });
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('rejects a tokenizer count that is not a non-negative integer, naming the tokenizer', () => {
    const items = [userMessage('a b c')];
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      const tokenizer: Tokenizer = { name: `bad ${bad}`, count: () => bad };
      expect(() => new DefaultContextProjector({ tokenizer }).project(fresh(items), { maxTokens: 10 })).toThrow(
        `tokenizer "bad ${bad}" counted ${bad} tokens for a text of 5 characters: a count must be a non-negative integer`,
      );
    }
  });
});
