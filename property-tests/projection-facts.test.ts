// Projection facts saved with a checkpoint and attached by position to the restored items: every attached fact
// equals the one computed afresh, and the restored items (grown or not) project exactly as fresh ones do.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DefaultContextProjector,
  TypeAwareContextProjector,
  approxTokenizer,
  attachProjectionFacts,
  itemTokenCount,
  openAiTokenizer,
  projectionFactsOf,
  toolPairGroups,
} from '../src/context/index.js';
import type { ContextBudget, ContextProjection, Tokenizer } from '../src/context/index.js';
import { itemTokenLowerBound, itemTokenMemo, knownApproxChars, knownTokenLowerBound } from '../src/context/measure/items.js';
import { approxChars, callIdsOf } from '../src/items/index.js';
import type { MemoryItem } from '../src/items/index.js';
import { arbitraryBudget, arbitraryItems, deepFreeze } from '../src/testing/index.js';

const words: Tokenizer = { name: 'words', count: (text) => text.split(/\s+/).filter(Boolean).length };
const tokenizers: readonly Tokenizer[] = [approxTokenizer, openAiTokenizer('o200k_base'), words];

/** The items as a resume rebuilds them: the same JSON, new objects, deep-frozen as the fold leaves them. */
const restored = (items: readonly MemoryItem[]): MemoryItem[] => deepFreeze(JSON.parse(JSON.stringify(items)) as MemoryItem[]);
/** New objects that are not frozen: never cached, so every fact of them is computed afresh. */
const fresh = (items: readonly MemoryItem[]): MemoryItem[] => JSON.parse(JSON.stringify(items)) as MemoryItem[];

const plain = (projection: ContextProjection): unknown => ({ items: projection.items, report: { ...projection.report, fates: [...projection.report.fates] } });

const scenario = fc.record({
  items: arbitraryItems({ maxTurns: 6 }),
  budgets: fc.array(arbitraryBudget(), { minLength: 1, maxLength: 3 }),
  /** A budget first used after the resume (what was saved must hold for questions not asked before it). */
  later: arbitraryBudget(),
  tokenizer: fc.constantFrom(...tokenizers),
  /** Where the checkpoint was taken (items after it are appended after the resume): anywhere, or right after a call. */
  cut: fc.double({ min: 0, max: 1, noNaN: true }),
  afterCall: fc.boolean(),
});

/** The checkpoint position: half the time right after an item that issues a call, so its output comes after the resume. */
const cutAt = (items: readonly MemoryItem[], cut: number, afterCall: boolean): number => {
  const calls = items.flatMap((item, i) => (callIdsOf(item).length > 0 ? [i + 1] : []));
  return afterCall && calls.length > 0 ? (calls[Math.floor(cut * (calls.length - 1))] as number) : Math.round(cut * items.length);
};

describe('projection facts', () => {
  it('attached to restored items equal the facts computed afresh, and the items project as fresh ones do', () => {
    fc.assert(
      fc.property(scenario, ({ items, budgets, later, tokenizer, cut, afterCall }) => {
        const at = cutAt(items, cut, afterCall);
        const saved = deepFreeze(items.slice(0, at));
        const projectors = [new DefaultContextProjector({ tokenizer }), new TypeAwareContextProjector({ tokenizer })];
        // What a live session knows at the checkpoint: whatever its projections counted.
        for (const budget of budgets) for (const projector of projectors) projector.project(saved, budget);
        const facts = JSON.parse(JSON.stringify(projectionFactsOf(saved, tokenizer))) as unknown;

        const back = restored(saved);
        const attached = attachProjectionFacts(back, facts, tokenizer);
        expect(attached.ignored).toBeUndefined();
        expect(attached.items).toBe(back.length);
        const memo = itemTokenMemo(tokenizer);
        let counts = 0;
        const unfrozen = fresh(saved);
        const freshGroups = toolPairGroups(unfrozen);
        const groups = toolPairGroups(back);
        for (const [i, item] of back.entries()) {
          expect(knownApproxChars(item)).toBe(approxChars(unfrozen[i] as MemoryItem));
          const count = memo.known(item);
          if (count !== undefined) {
            counts += 1;
            expect(count).toBe(itemTokenCount(unfrozen[i] as MemoryItem, tokenizer));
          }
          const bound = knownTokenLowerBound(item);
          if (bound !== undefined) expect(bound).toBe(itemTokenLowerBound(unfrozen[i] as MemoryItem));
          expect(groups.membersOf(i)).toEqual(freshGroups.membersOf(i));
        }
        expect(attached.tokenCounts).toBe(counts);

        // The session goes on: the items after the checkpoint are appended to the restored ones.
        const grown = [...back, ...deepFreeze(fresh(items.slice(at)))];
        const reference = fresh(items);
        const grownGroups = toolPairGroups(grown);
        const referenceGroups = toolPairGroups(reference);
        for (let i = 0; i < grown.length; i++) expect(grownGroups.membersOf(i)).toEqual(referenceGroups.membersOf(i));
        for (const budget of [later, ...budgets]) {
          for (const projector of projectors) {
            expect(plain(projector.project(back, budget))).toEqual(plain(projector.project(fresh(saved), budget)));
            expect(plain(projector.project(grown, budget))).toEqual(plain(projector.project(reference, budget)));
          }
        }
      }),
      { numRuns: 40 },
    );
  });

  it('are attached by name only: another tokenizer gets the characters and pairing, not the counts', () => {
    fc.assert(
      fc.property(arbitraryItems({ maxTurns: 4 }), arbitraryBudget(), (items, budget) => {
        const saved = deepFreeze(fresh(items));
        new DefaultContextProjector({ tokenizer: words }).project(saved, budget as ContextBudget);
        const facts = JSON.parse(JSON.stringify(projectionFactsOf(saved, words))) as unknown;
        const back = restored(saved);
        const attached = attachProjectionFacts(back, facts, approxTokenizer);
        expect(attached).toMatchObject({ items: back.length, tokenCounts: 0 });
        expect(attached.ignored).toBe('token counts were made with "words", not "approx"');
        const projector = new DefaultContextProjector();
        expect(plain(projector.project(back, budget))).toEqual(plain(projector.project(fresh(saved), budget)));
      }),
      { numRuns: 30 },
    );
  });
});
