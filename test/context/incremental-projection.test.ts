// The per-history memo (tool pairing, costs, interned fates) is exact: growing, shrinking and shared-first-item
// histories project exactly as a fresh copy of the same items, and the pairing matches a from-scratch reference.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DefaultContextProjector, TypeAwareContextProjector, approxTokenizer, openAiTokenizer, toolPairGroups, type Tokenizer } from '../../src/context/index.js';
import { greedyBlockSkipCount, greedyLookCount } from '../../src/context/select.js';
import { historyOf } from '../../src/context/history.js';
import type { ContextBudget, ContextProjector } from '../../src/context/index.js';
import { assistantMessage, callIdsOf, functionCall, functionCallOutput, isMessage, outputCallIdOf, reasoning, userMessage } from '../../src/items/index.js';
import type { MemoryItem } from '../../src/items/index.js';
import { arbitraryBudget, arbitraryItems } from '../../src/testing/index.js';

/** Items naming a few call ids in every way: duplicates, answers before calls, orphans, Anthropic parts. */
const id = fc.constantFrom('c0', 'c1', 'c2', 'c3', 'c4', 'c5');
const linkedItem: fc.Arbitrary<MemoryItem> = fc.oneof(
  fc.string({ maxLength: 20 }).map((text) => userMessage(text)),
  id.map((c) => functionCall(c, 'ls', { path: c })),
  fc.tuple(id, fc.string({ maxLength: 40 })).map(([c, out]) => functionCallOutput(c, out)),
  fc.array(id, { minLength: 1, maxLength: 3 }).map((ids) =>
    assistantMessage('calling', ids.map((c) => ({ id: c, type: 'function' as const, function: { name: 'read', arguments: '{}' } }))),
  ),
  fc.array(id, { minLength: 1, maxLength: 2 }).map(
    (ids): MemoryItem => ({ type: 'message', role: 'assistant', content: ids.map((c) => ({ type: 'tool_use', id: c, name: 'grep', input: {} })) }),
  ),
  fc.array(id, { minLength: 1, maxLength: 2 }).map(
    (ids): MemoryItem => ({ type: 'message', role: 'user', content: ids.map((c) => ({ type: 'tool_result', tool_use_id: c, content: 'ok' })) }),
  ),
  fc.string({ maxLength: 30 }).map((text) => reasoning('r', text)),
  id.map((c): MemoryItem => ({ type: 'message', role: 'tool', tool_call_id: c, content: 'ok' })),
  id.map((c): MemoryItem => ({ type: 'message', role: 'assistant', content: [{ type: 'tool_result', tool_use_id: c, content: 'again' }] })),
);
const linkedItems = fc.array(linkedItem, { minLength: 1, maxLength: 40 }).map((items) => items.map((item) => Object.freeze(item)));
const items = fc.oneof(linkedItems, arbitraryItems());

/**
 * The grouping rule, from scratch: each answer (an output, a Chat role:'tool' message, a tool_result part) joins the
 * nearest earlier call of its id that is not answered yet, or, when all are answered, the latest call of its id.
 */
const referenceRoots = (list: readonly MemoryItem[]): number[] => {
  const answersOf = (item: MemoryItem): string[] => {
    const out = outputCallIdOf(item);
    if (out !== undefined) return [out];
    if (!isMessage(item)) return [];
    const chat = item.role === 'tool' && typeof item['tool_call_id'] === 'string' ? [item['tool_call_id']] : [];
    if (!Array.isArray(item.content)) return chat;
    return [...chat, ...item.content.flatMap((part) => (part && part.type === 'tool_result' && typeof part['tool_use_id'] === 'string' ? [part['tool_use_id']] : []))];
  };
  const root = list.map((_, i) => i);
  const find = (i: number): number => (root[i] === i ? i : find(root[i] as number));
  const open: { at: number; id: string; answered: boolean }[] = [];
  list.forEach((item, i) => {
    for (const c of answersOf(item)) {
      const call = open.findLast((o) => o.id === c && !o.answered) ?? open.findLast((o) => o.id === c);
      if (!call) continue;
      call.answered = true;
      const [a, b] = [find(call.at), find(i)];
      root[Math.max(a, b)] = Math.min(a, b);
    }
    for (const c of callIdsOf(item)) open.push({ at: i, id: c, answered: false });
  });
  return list.map((_, i) => find(i));
};

const clone = (list: readonly MemoryItem[]): MemoryItem[] => list.map((item) => Object.freeze(structuredClone(item)));

const projectors: ContextProjector[] = [new DefaultContextProjector(), new TypeAwareContextProjector()];
const budgets = fc.oneof(arbitraryBudget(), fc.record({ maxTokens: fc.integer({ min: 0, max: 400 }), pinnedPrefixItems: fc.integer({ min: 0, max: 3 }) }));

const expectSameProjection = (projector: ContextProjector, list: readonly MemoryItem[], budget: ContextBudget): void => {
  const got = projector.project(list, budget);
  const fresh = projector.project(clone(list), budget);
  expect(got.report).toEqual(fresh.report);
  expect(got.items).toEqual(fresh.items);
};

describe('per-history memo', () => {
  it('groups every prefix of a growing history as the from-scratch rule does', () => {
    fc.assert(
      fc.property(linkedItems, (list) => {
        for (let k = 1; k <= list.length; k++) {
          const prefix = list.slice(0, k);
          const groups = toolPairGroups(prefix);
          const roots = referenceRoots(prefix);
          for (let i = 0; i < k; i++) {
            expect(groups.groupOf(i)).toBe(roots[i]);
            const members = roots.flatMap((r, j) => (r === roots[i] ? [j] : []));
            expect(groups.membersOf(i)).toEqual(members);
            expect(groups.sizeOf(i)).toBe(members.length);
          }
        }
        // The projection's own view (the pairing's arrays, extended item by item, chains rebuilt after a merge).
        for (let k = 1; k <= list.length; k++) {
          const prefix = list.slice(0, k);
          const live = historyOf(prefix).groups();
          const roots = referenceRoots(prefix);
          for (let i = 0; i < k; i++) {
            const members = roots.flatMap((r, j) => (r === roots[i] ? [j] : []));
            expect(live.groupOf(i)).toBe(roots[i]);
            expect(live.roots === undefined ? i : live.roots[i]).toBe(roots[i]);
            expect(live.sizes === undefined ? 1 : live.sizes[roots[i] as number]).toBe(members.length);
            const chain: number[] = [];
            for (let m = live.firstOf(i); m !== -1; m = live.nexts === undefined ? -1 : (live.nexts[m] as number)) chain.push(m);
            expect(chain).toEqual(members);
          }
        }
        // A snapshot taken before the history grows does not change with it.
        const half = list.slice(0, Math.ceil(list.length / 2));
        const before = toolPairGroups(half);
        const halfRoots = referenceRoots(half);
        historyOf(list).groups();
        expect(half.map((_, i) => before.membersOf(i))).toEqual(half.map((_, i) => halfRoots.flatMap((r, j) => (r === halfRoots[i] ? [j] : []))));
        // Shrinking back to a shorter prefix, then a different list with the same first item.
        const short = list.slice(0, Math.ceil(list.length / 2));
        expect(short.map((_, i) => toolPairGroups(short).groupOf(i))).toEqual(referenceRoots(short));
        const other = [list[0] as MemoryItem, ...clone(list.slice(1)).reverse()];
        expect(other.map((_, i) => toolPairGroups(other).groupOf(i))).toEqual(referenceRoots(other));
      }),
    );
  });

  it('projects growing, shrinking and diverging histories exactly as a fresh copy', () => {
    fc.assert(
      fc.property(items, budgets, fc.integer({ min: 1, max: 5 }), (list, budget, stride) => {
        expectSameProjection(projectors[0] as ContextProjector, [], budget);
        if (list.length === 0) return;
        for (const projector of projectors) {
          for (let k = 1; k <= list.length; k += stride) expectSameProjection(projector, list.slice(0, k), budget);
          expectSameProjection(projector, list, budget);
          expectSameProjection(projector, list.slice(0, Math.ceil(list.length / 3)), budget);
          expectSameProjection(projector, [list[0] as MemoryItem, ...list.slice(1).reverse()], budget);
          expectSameProjection(projector, list, budget);
        }
      }),
      { numRuns: 60 },
    );
  });
});

describe('block floors: a warm greedy skips whole blocks of items that cannot fit the room left', () => {
  const o200k = openAiTokenizer('o200k_base');
  const words: Tokenizer = { name: 'words', count: (text) => text.split(/\s+/).filter(Boolean).length };
  const longItems = fc.oneof(
    fc.array(linkedItem, { minLength: 70, maxLength: 260 }).map((list) => list.map((item) => Object.freeze(item))),
    arbitraryItems({ minTurns: 20, maxTurns: 60 }),
  );
  const tightBudgets = fc.array(
    fc.record(
      {
        maxTokens: fc.integer({ min: 0, max: 700 }),
        pinnedPrefixItems: fc.integer({ min: 0, max: 3 }),
        maxItems: fc.constantFrom(undefined, 40, 200),
        maxApproxChars: fc.constantFrom(undefined, undefined, 300, 2_500),
      },
      { requiredKeys: ['maxTokens'] },
    ),
    { minLength: 2, maxLength: 4 },
  );

  it('projects a growing long history under changing budgets exactly as a fresh copy (every kind of tokenizer, token and character limits)', () => {
    const skipsBefore = greedyBlockSkipCount();
    fc.assert(
      fc.property(longItems, tightBudgets, fc.constantFrom(o200k, words, approxTokenizer), fc.integer({ min: 7, max: 40 }), (list, budgets, tokenizer, stride) => {
        const projector = new DefaultContextProjector({ tokenizer });
        for (let k = Math.min(list.length, 64); k <= list.length; k += stride) {
          for (const budget of budgets) expectSameProjection(projector, list.slice(0, k), budget);
        }
      }),
      { numRuns: Number(process.env['FC_NUM_RUNS'] ?? 25) },
    );
    // The runs above did skip blocks (else they would check nothing of them).
    expect(greedyBlockSkipCount() - skipsBefore).toBeGreaterThan(0);
  });

  it('looks at the newest items and the few that could fit once the floors are known (work count)', () => {
    const list: MemoryItem[] = [Object.freeze(userMessage('Read the files.'))];
    const step = (k: number): void => {
      list.push(Object.freeze(functionCall(`c${k}`, 'read_file', { path: `f${k}` })));
      list.push(Object.freeze(functionCallOutput(`c${k}`, `// f${k}\n${'export const value = compute(input, options);\n'.repeat(8)}`)));
    };
    let k = 0;
    while (list.length < 5_000) step(k++);
    const projector = new DefaultContextProjector({ tokenizer: o200k });
    const budget: ContextBudget = { maxTokens: 4_000, pinnedPrefixItems: 1 };
    const looks: number[] = [];
    for (let s = 0; s < 5; s++) {
      step(k++);
      const before = greedyLookCount();
      const warm = projector.project(list.slice(), budget);
      looks.push(greedyLookCount() - before);
      const fresh = projector.project(clone(list), budget);
      expect(warm.items).toEqual(fresh.items);
    }
    // The first two selections over these items look at all of them (the second learns the block floors); then only
    // the newest blocks, whose groups the budget sends, and the block just below them.
    expect(looks[0]).toBeGreaterThan(4_900);
    expect(looks.slice(2).every((n) => n < 200)).toBe(true);
  });
});
