import { describe, expect, it } from 'vitest';
import { DefaultContextProjector, TypeAwareContextProjector } from '../../src/context/index.js';
import { approxChars, functionCall, functionCallOutput, systemMessage, userMessage } from '../../src/items/index.js';
import type { MemoryItem } from '../../src/items/index.js';

const projector = new DefaultContextProjector();
const session = (count: number): MemoryItem[] => [systemMessage('pinned'), ...Array.from({ length: count }, (_, k) => userMessage(`m${k}`))];
const keptIndices = (items: readonly MemoryItem[], budget: Parameters<DefaultContextProjector['project']>[1]): number[] =>
  projector
    .project(items, budget)
    .report.fates.filter((f) => f.fate !== 'dropped')
    .map((f) => f.index);

const isPrefix = (a: readonly unknown[], b: readonly unknown[]): boolean => a.length <= b.length && a.every((item, i) => item === b[i]);

describe('evictionStep', () => {
  it('rounds the oldest kept tail position up to a multiple of K counted from the first unpinned item', () => {
    const items = session(19); // indices 0..19, 0 pinned
    expect(keptIndices(items, { maxItems: 6, pinnedPrefixItems: 1 })).toEqual([0, 15, 16, 17, 18, 19]);
    // raw tail start 15 is position 14 after the pin; rounded up to 16 → index 17
    expect(keptIndices(items, { maxItems: 6, pinnedPrefixItems: 1, evictionStep: 4 })).toEqual([0, 17, 18, 19]);
    expect(keptIndices(items, { maxItems: 6, pinnedPrefixItems: 1, evictionStep: 7 })).toEqual([0, 15, 16, 17, 18, 19]);
  });

  it('keeps the prompt prefix byte-identical for up to K consecutive turns', () => {
    // 100 turns of a growing session; count the turns whose projection starts with the previous one.
    expect(stableTurns(1)).toBe(0);
    expect(stableTurns(10)).toBe(90);
    expect(stableTurns(20)).toBe(95);
  });

  it('keeps the tail contiguous under a character limit instead of filling gaps', () => {
    const items = [userMessage('a'), userMessage('b'), userMessage('x'.repeat(300)), userMessage('c'), userMessage('d')];
    const small = approxChars(items[0]);
    const budget = { maxApproxChars: 4 * small };
    expect(projector.project(items, budget).items).toEqual([items[0], items[1], items[3], items[4]]);
    const contiguous = projector.project(items, { ...budget, evictionStep: 3 });
    expect(contiguous.items).toEqual([items[3], items[4]]);
    expect(contiguous.report.fates.slice(0, 3).map((f) => f.rule)).toEqual(['maxApproxChars', 'maxApproxChars', 'maxApproxChars']);
    // With K = 2 the start (index 3) is rounded up to index 4: only the newest item is sent.
    expect(projector.project(items, { ...budget, evictionStep: 2 }).items).toEqual([items[4]]);
  });

  it('makes Tier-1 clear a multiple of K results, so between N and N+K-1 stay raw', () => {
    const items = Array.from({ length: 7 }, (_, k) => [functionCall(`c${k}`, 'read', '{}'), functionCallOutput(`c${k}`, `out ${k} `.repeat(20))]).flat();
    const cleared = (step: number): number =>
      new TypeAwareContextProjector().project(items, { maxRecentToolResults: 2, evictionStep: step }).report.fates.filter((f) => f.fate === 'cleared').length;
    expect(cleared(1)).toBe(5);
    expect(cleared(3)).toBe(3);
    expect(cleared(5)).toBe(5);
    expect(cleared(6)).toBe(0);
    expect(new TypeAwareContextProjector().project(items, { maxRecentToolResults: 2, evictionStep: 3 }).report.notes).toEqual([
      // Four results kept their text (the newest 2 and the 2 the step left raw).
      'tier1 microcompact: cleared 3 old tool result(s), kept recent 4',
    ]);
  });

  it('never drops the newest item to honour the step', () => {
    const items = session(10);
    expect(keptIndices(items, { maxItems: 2, pinnedPrefixItems: 1, evictionStep: 4 })).toContain(10);
  });
});

/** Counts turns whose projection starts with the previous turn's projection (fresh objects each turn: compared by content). */
const stableTurns = (step: number): number => {
  let stable = 0;
  let previous = projector.project(session(29), { maxItems: 21, pinnedPrefixItems: 1, evictionStep: step }).items.map((item) => JSON.stringify(item));
  for (let turn = 30; turn < 130; turn++) {
    const sent = projector.project(session(turn), { maxItems: 21, pinnedPrefixItems: 1, evictionStep: step }).items.map((item) => JSON.stringify(item));
    if (isPrefix(previous, sent)) stable++;
    expect(sent.length).toBeLessThanOrEqual(21);
    expect(sent.length).toBeGreaterThanOrEqual(Math.min(21, 21 - step + 1));
    previous = sent;
  }
  return stable;
};
