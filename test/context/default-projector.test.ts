import { describe, expect, it } from 'vitest';
import { DefaultContextProjector, approxTokenizer, itemTokenCount } from '../../src/context/index.js';
import { approxChars, assistantMessage, systemMessage, userMessage } from '../../src/items/index.js';
import type { MemoryItem } from '../../src/items/index.js';
import { deepFreeze } from '../../src/testing/index.js';

const projector = new DefaultContextProjector();
const turns = (count: number): MemoryItem[] => Array.from({ length: count }, (_, i) => userMessage(`m${i}`));
const texts = (items: readonly MemoryItem[]): unknown[] => items.map((item) => (item as { content?: unknown }).content);

describe('DefaultContextProjector', () => {
  it('keeps the pinned prefix plus the most recent tail under maxItems', () => {
    const items = [systemMessage('summary'), ...turns(9)];
    const { items: sent, report } = projector.project(items, { maxItems: 4, pinnedPrefixItems: 1 });
    expect(texts(sent)).toEqual(['summary', 'm6', 'm7', 'm8']);
    expect(sent[0]).toBe(items[0]);
    expect(report.notes).toEqual(['maxItems applied: 4']);
    expect(report.itemLimitApplied).toBe(true);
    expect(report.characterLimitApplied).toBe(false);
    expect(report.tokenLimitApplied).toBe(false);
    expect(report.fates).toEqual([
      { index: 0, fate: 'kept', rule: 'pinned' },
      ...[1, 2, 3, 4, 5, 6].map((index) => ({ index, fate: 'dropped', rule: 'maxItems' })),
      { index: 7, fate: 'kept', rule: 'tail' },
      { index: 8, fate: 'kept', rule: 'tail' },
      { index: 9, fate: 'kept', rule: 'tail' },
    ]);
  });

  it('keeps the first maxItems items when the pinned prefix is at least maxItems', () => {
    const items = turns(8);
    const { items: sent, report } = projector.project(items, { maxItems: 3, pinnedPrefixItems: 5 });
    expect(texts(sent)).toEqual(['m0', 'm1', 'm2']);
    expect(report.fates.slice(0, 4)).toEqual([
      { index: 0, fate: 'kept', rule: 'pinned' },
      { index: 1, fate: 'kept', rule: 'pinned' },
      { index: 2, fate: 'kept', rule: 'pinned' },
      { index: 3, fate: 'dropped', rule: 'maxItems' },
    ]);
    expect(texts(projector.project(items, { maxItems: 3, pinnedPrefixItems: 3 }).items)).toEqual(['m0', 'm1', 'm2']);
  });

  it('sends nothing under maxItems 0, and says so', () => {
    const { items: sent, report } = projector.project(turns(3), { maxItems: 0, pinnedPrefixItems: 1 });
    expect(sent).toEqual([]);
    expect(report).toMatchObject({ sourceItemCount: 3, projectedItemCount: 0, droppedItemCount: 3, projectedApproxChars: 0 });
    expect(report.notes).toEqual(['maxItems applied: 0']);
    expect(report.fates.every((f) => f.fate === 'dropped' && f.rule === 'maxItems')).toBe(true);
    expect(projector.project([], { maxItems: 0 }).report.notes).toEqual([]);
  });

  it('sends nothing under a character or token limit of 0', () => {
    expect(projector.project(turns(3), { maxApproxChars: 0 }).items).toEqual([]);
    expect(projector.project(turns(3), { maxApproxChars: 0 }).report.notes).toEqual(['maxApproxChars applied: 0']);
    expect(projector.project(turns(3), { maxTokens: 0 }).report.notes).toEqual(['maxTokens applied: 0']);
  });

  it('treats absent and negative limits as unlimited', () => {
    const items = turns(5);
    for (const budget of [undefined, {}, { maxItems: -1, maxApproxChars: -1, maxTokens: -5 }]) {
      const { items: sent, report } = projector.project(items, budget);
      expect(sent).toEqual(items);
      expect(report.notes).toEqual([]);
      expect(report.fates.every((f) => f.fate === 'kept' && f.rule === 'tail')).toBe(true);
    }
  });

  it('writes no note for a limit that removed nothing', () => {
    const items = turns(3);
    expect(projector.project(items, { maxItems: 3, maxApproxChars: 10_000, maxTokens: 10_000 }).report.notes).toEqual([]);
  });

  it('keeps the newest item under a character limit even when it alone is over the limit', () => {
    const items = [userMessage('old'), userMessage('x'.repeat(1_000))];
    const { items: sent, report } = projector.project(items, { maxApproxChars: 100 });
    expect(sent).toEqual([items[1]]);
    expect(report.notes).toEqual(['maxApproxChars applied: 100']);
    expect(report.characterLimitApplied).toBe(true);
    expect(report.projectedApproxChars).toBeGreaterThan(100);
    expect(report.fates[0]).toEqual({ index: 0, fate: 'dropped', rule: 'maxApproxChars' });
  });

  it('always keeps the first pinned item under a character limit', () => {
    const items = [systemMessage('s'.repeat(500)), ...turns(3)];
    const { items: sent } = projector.project(items, { maxApproxChars: 50, pinnedPrefixItems: 1 });
    expect(sent).toEqual([items[0], items[3]]);
  });

  it('skips a large item and still fits an older smaller one', () => {
    const small = (t: string): MemoryItem => userMessage(t);
    const items = [small('a'), small('b'), assistantMessage('x'.repeat(400)), small('c')];
    const limit = approxChars(items[0]) + approxChars(items[1]) + approxChars(items[3]);
    const { items: sent, report } = projector.project(items, { maxApproxChars: limit });
    expect(texts(sent)).toEqual(['a', 'b', 'c']);
    expect(report.fates[2]).toEqual({ index: 2, fate: 'dropped', rule: 'maxApproxChars' });
    expect(report.projectedApproxChars).toBe(limit);
  });

  it('gives pinned items priority over the tail under a character limit', () => {
    const items = [systemMessage('s0'), systemMessage('s1'), ...turns(5)];
    const each = approxChars(items[2]);
    const { items: sent } = projector.project(items, { pinnedPrefixItems: 2, maxApproxChars: approxChars(items[0]) + approxChars(items[1]) + 2 * each });
    expect(texts(sent)).toEqual(['s0', 's1', 'm3', 'm4']);
  });

  it('applies maxTokens greedily from the newest, like the character limit', () => {
    const items = [userMessage('a'.repeat(40)), userMessage('b'.repeat(400)), userMessage('c'.repeat(40))];
    const perSmall = itemTokenCount(items[0] as MemoryItem, approxTokenizer);
    expect(perSmall).toBe(4 + 10);
    const { items: sent, report } = projector.project(items, { maxTokens: 2 * perSmall });
    expect(sent).toEqual([items[0], items[2]]);
    expect(report.notes).toEqual(['maxTokens applied: 28']);
    expect(report.tokenLimitApplied).toBe(true);
    expect(report.projectedTokens).toBe(28);
    expect(report.fates[1]).toEqual({ index: 1, fate: 'dropped', rule: 'maxTokens' });
  });

  it('writes the notes in order: maxItems, maxApproxChars, maxTokens', () => {
    const items = [...turns(10), userMessage('z'.repeat(300)), userMessage('y'.repeat(300))];
    const { report } = projector.project(items, { maxItems: 6, maxApproxChars: 700, maxTokens: 120 });
    expect(report.notes).toEqual(['maxItems applied: 6', 'maxApproxChars applied: 700', 'maxTokens applied: 120']);
    expect(report.fates.map((f) => f.rule)).toEqual(expect.arrayContaining(['maxItems', 'maxApproxChars', 'maxTokens']));
  });

  it('reports counts that add up', () => {
    const items = [systemMessage('pinned'), ...turns(20)];
    const { items: sent, report } = projector.project(items, { maxItems: 8, pinnedPrefixItems: 1 });
    expect(report.sourceItemCount).toBe(21);
    expect(report.projectedItemCount).toBe(8);
    expect(report.droppedItemCount).toBe(13);
    expect(report.sourceItemCount).toBe(report.projectedItemCount + report.droppedItemCount);
    expect(report.sourceApproxChars).toBe(approxChars(items));
    expect(report.projectedApproxChars).toBe(approxChars(sent));
    expect(report.sourceTokens).toBe(items.reduce((sum, item) => sum + itemTokenCount(item, approxTokenizer), 0));
    expect(report.projectedTokens).toBe(sent.reduce((sum, item) => sum + itemTokenCount(item, approxTokenizer), 0));
    expect(report.fates).toHaveLength(21);
    expect(report.fates.filter((f) => f.fate === 'dropped')).toHaveLength(13);
  });

  it('never mutates its input and is deterministic (deep-frozen input)', () => {
    const items = deepFreeze([systemMessage('s'), ...turns(30), assistantMessage('done', [{ id: 'c1', name: 'bash' }])]);
    const before = structuredClone(items);
    const budget = deepFreeze({ maxItems: 10, maxApproxChars: 300, pinnedPrefixItems: 1 });
    const first = projector.project(items, budget);
    const second = projector.project(items, budget);
    expect(items).toEqual(before);
    expect(second).toEqual(first);
  });

  it('describes itself with its tokenizer', () => {
    expect(projector.describe()).toEqual({ name: 'DefaultContextProjector', settings: { tokenizer: 'approx' } });
  });
});
