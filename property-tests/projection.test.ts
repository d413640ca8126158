// Projection laws 2-7 for both built-in projectors (approximate and exact tokens), TypeAware ≡ Default without tiers, and the law check catching broken projectors.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DefaultContextProjector,
  TypeAwareContextProjector,
  approxTokenizer,
  itemTokenCount,
  openAiTokenizer,
  reportFateRuns,
  reportFatesInSourceOrder,
  withReportFields,
} from '../src/context/index.js';
import type { ContextBudget, ContextProjection, ContextProjector } from '../src/context/index.js';
import { encodeReportFates, type FateRule } from '../src/events/index.js';
import { approxChars, callIdsOf, outputCallIdOf, userMessage } from '../src/items/index.js';
import type { MemoryItem } from '../src/items/index.js';
import { arbitraryBudget, arbitraryItems, checkProjectorLaws, deepFreeze } from '../src/testing/index.js';

describe('projection laws 2-7', () => {
  it('hold for DefaultContextProjector', () => {
    checkProjectorLaws(new DefaultContextProjector());
  });

  it('hold for TypeAwareContextProjector', () => {
    checkProjectorLaws(new TypeAwareContextProjector());
  });

  it('hold with exact o200k token counts', () => {
    const tokenizer = openAiTokenizer('o200k_base');
    checkProjectorLaws(new DefaultContextProjector({ tokenizer }), { numRuns: 15 });
    checkProjectorLaws(new TypeAwareContextProjector({ tokenizer }), { numRuns: 15 });
  });

  it('hold for long sessions with cache-stable eviction', () => {
    checkProjectorLaws(new TypeAwareContextProjector(), {
      numRuns: 20,
      items: arbitraryItems({ minTurns: 10, maxTurns: 30 }),
      budget: arbitraryBudget({ maxItems: 60, maxApproxChars: 20_000, maxTokens: 5_000, maxEvictionStep: 20 }),
    });
  });
});

describe('TypeAwareContextProjector', () => {
  it('is DefaultContextProjector (items, report and notes) when no tier is configured', () => {
    const plain = new DefaultContextProjector();
    const typeAware = new TypeAwareContextProjector();
    const tiersOff = fc.record(
      { maxRecentToolResults: fc.integer({ min: -10, max: -1 }), trimOldReasoning: fc.constant(false) },
      { requiredKeys: [], noNullPrototype: true },
    );
    fc.assert(
      fc.property(arbitraryItems(), arbitraryBudget({ tiers: false }), tiersOff, (items, limits, off) => {
        const budget: ContextBudget = { ...limits, ...off };
        expect(typeAware.project(items, budget)).toEqual(plain.project(items, budget));
      }),
    );
  });

  it('never writes to deep-frozen input, and leaves it deep-equal to what it was', () => {
    const projector = new TypeAwareContextProjector();
    fc.assert(
      fc.property(arbitraryItems(), arbitraryBudget(), (items, budget) => {
        const before = structuredClone(items);
        const frozen = deepFreeze(items);
        projector.project(frozen, { ...budget, maxRecentToolResults: 0, trimOldReasoning: true });
        projector.project(frozen, budget);
        expect(frozen).toEqual(before);
      }),
    );
  });
});

const NOTE_ORDER = [
  /^tier1 microcompact: skipped, /,
  /^tier1 microcompact: cleared \d+ old/,
  /^tier1 microcompact: cleared the inputs of /,
  /^tier1 microcompact: kept \d+ tool result\(s\) shorter/,
  /^tier1 microcompact: kept \d+ tool result\(s\) of /,
  /^tier2 reasoning-trim: /, /^maxItems applied: /, /^maxApproxChars applied: /, /^maxTokens applied: /, /^pairing: /];
const NOTE_FOR_RULE: Partial<Record<FateRule, RegExp>> = {
  tier1: /^tier1 microcompact: cleared \d+ old tool result\(s\), kept recent \d+$/,
  'tier1-short': /^tier1 microcompact: kept \d+ tool result\(s\) shorter than their placeholder$/,
  tier2: /^tier2 reasoning-trim: cleared \d+ reasoning item\(s\)$/,
  maxItems: /^maxItems applied: \d+$/,
  maxApproxChars: /^maxApproxChars applied: \d+$/,
  maxTokens: /^maxTokens applied: \d+$/,
  pairing: /^pairing: dropped \d+ item\(s\) to keep tool calls with their results$/,
};

describe('notes', () => {
  it('come in the documented order, one per rule that decided a fate, with exact counts', () => {
    const projector = new TypeAwareContextProjector();
    fc.assert(
      fc.property(arbitraryItems(), arbitraryBudget(), (items, budget) => {
        const { report } = projector.project(items, budget);
        const positions = report.notes.map((note) => NOTE_ORDER.findIndex((pattern) => pattern.test(note)));
        expect(positions.every((p) => p >= 0)).toBe(true);
        expect([...positions].sort((a, b) => a - b)).toEqual(positions);
        expect(new Set(positions).size).toBe(positions.length);
        const rules = new Set(report.fates.map((f) => f.rule));
        for (const [rule, pattern] of Object.entries(NOTE_FOR_RULE)) {
          // Every rule that decided a fate has its note (a limit's note may also stand for drops it caused only through pairing).
          if (rules.has(rule as FateRule)) expect(report.notes.some((note) => pattern.test(note))).toBe(true);
        }
        const pairing = report.fates.filter((f) => f.rule === 'pairing').length;
        const pairingNote = report.notes.find((note) => note.startsWith('pairing: '));
        expect(pairingNote).toBe(pairing > 0 ? `pairing: dropped ${pairing} item(s) to keep tool calls with their results` : undefined);
        expect(report.itemLimitApplied).toBe(report.notes.some((note) => note.startsWith('maxItems applied: ')));
        expect(report.characterLimitApplied).toBe(report.notes.some((note) => note.startsWith('maxApproxChars applied: ')));
        expect(report.tokenLimitApplied).toBe(report.notes.some((note) => note.startsWith('maxTokens applied: ')));
      }),
    );
  });
});

/** A projection of `items` keeping exactly `kept` (ascending source indices), with a report consistent with it. */
const projectionKeeping = (items: readonly MemoryItem[], kept: readonly number[], base: ContextProjection): ContextProjection => {
  const keep = new Set(kept);
  const sent = kept.map((i) => items[i] as MemoryItem);
  return {
    items: sent,
    report: {
      ...base.report,
      projectedItemCount: sent.length,
      droppedItemCount: items.length - sent.length,
      projectedApproxChars: approxChars(sent),
      projectedTokens: sent.reduce((sum, item) => sum + itemTokenCount(item, approxTokenizer), 0),
      fates: items.map((_, index) =>
        keep.has(index) ? { index, fate: 'kept' as const, rule: 'tail' as const } : { index, fate: 'dropped' as const, rule: 'maxItems' as const },
      ),
    },
  };
};

const brokenProjector = (name: string, project: (items: readonly MemoryItem[], budget: ContextBudget | undefined) => ContextProjection): ContextProjector => ({
  project,
  describe: () => ({ name, settings: { tokenizer: 'approx' } }),
});

const inner = new DefaultContextProjector();
const keptIndicesOf = (projection: ContextProjection): number[] => projection.report.fates.filter((f) => f.fate !== 'dropped').map((f) => f.index);

describe('checkProjectorLaws catches broken projectors', () => {
  const options = { numRuns: 300, seed: 20_260_101 };

  it('one that drops the output of a pair it sends the call of (law 7)', () => {
    const dropsAnOutput = brokenProjector('DropsAnOutput', (items, budget) => {
      const projection = inner.project(items, budget);
      const kept = keptIndicesOf(projection);
      const issued = new Set(kept.flatMap((i) => callIdsOf(items[i] as MemoryItem)));
      const victim = kept.find((i) => {
        const id = outputCallIdOf(items[i] as MemoryItem);
        return id !== undefined && issued.has(id);
      });
      return victim === undefined ? projection : projectionKeeping(items, kept.filter((i) => i !== victim), projection);
    });
    expect(() => checkProjectorLaws(dropsAnOutput, options)).toThrow(/DropsAnOutput breaks law 7 \(tool pairing\)/);
  });

  it('a naive "last N items" window, as trim_messages does (law 7)', () => {
    const lastN = brokenProjector('LastN', (items, budget) => {
      const base = inner.project(items, {});
      const n = budget?.maxItems !== undefined && budget.maxItems >= 0 ? budget.maxItems : items.length;
      const kept = items.map((_, i) => i).slice(Math.max(0, items.length - n));
      return projectionKeeping(items, n === 0 ? [] : kept, base);
    });
    expect(() => checkProjectorLaws(lastN, { ...options, budget: arbitraryBudget({ tiers: false }).map((b) => ({ maxItems: b.maxItems ?? 5 })) })).toThrow(
      /LastN breaks law 7 \(tool pairing\)/,
    );
  });

  it('one that sends one item more than maxItems (law 6)', () => {
    const overBudget = brokenProjector('OverBudget', (items, budget) =>
      inner.project(items, budget?.maxItems !== undefined && budget.maxItems >= 0 ? { ...budget, maxItems: budget.maxItems + 1 } : budget),
    );
    expect(() => checkProjectorLaws(overBudget, options)).toThrow(/OverBudget breaks law (6|5)/);
  });

  it('one that drops the newest item (law 4)', () => {
    const dropsNewest = brokenProjector('DropsNewest', (items, budget) => {
      const projection = inner.project(items, budget);
      const kept = keptIndicesOf(projection);
      const newest = items.length - 1;
      if (!kept.includes(newest) || items.some((item) => item.type.startsWith('function_call')) || callIdsOf(items[newest] as MemoryItem).length > 0) {
        return projection;
      }
      return projectionKeeping(items, kept.slice(0, -1), projection);
    });
    expect(() => checkProjectorLaws(dropsNewest, options)).toThrow(/DropsNewest breaks law 4 \(survivors\)/);
  });

  it('one that writes to its input (law 2)', () => {
    const mutates = brokenProjector('Mutates', (items, budget) => {
      const first = items[0] as Record<string, unknown> | undefined;
      if (first && !Object.isFrozen(first)) first['seen'] = true;
      return inner.project(items, budget);
    });
    expect(() => checkProjectorLaws(mutates, options)).toThrow(/Mutates breaks law 2 \(purity\)/);
  });

  it('one whose report does not add up (law 5)', () => {
    const miscounts = brokenProjector('Miscounts', (items, budget) => {
      const projection = inner.project(items, budget);
      return { ...projection, report: { ...projection.report, droppedItemCount: projection.report.droppedItemCount + 1 } };
    });
    expect(() => checkProjectorLaws(miscounts, options)).toThrow(/Miscounts breaks law 5/);
  });

  it('prints the shrunk counterexample and the seed to replay it', () => {
    const overBudget = brokenProjector('OverBudget', (items, budget) =>
      inner.project(items, budget?.maxItems !== undefined && budget.maxItems >= 0 ? { ...budget, maxItems: budget.maxItems + 1 } : budget),
    );
    let message = '';
    try {
      checkProjectorLaws(overBudget, options);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/Counterexample: /);
    expect(message).toMatch(/seed: 20260101/);
    expect(message).toMatch(/Shrunk \d+ time/);
  });
});

describe('Tier-1 never adds tokens', () => {
  it('no item it rewrites is larger than its source, so without limits the projection is never larger (approx and o200k)', () => {
    const o200k = openAiTokenizer('o200k_base');
    const tierBudget = arbitraryBudget().map(({ maxItems: _i, maxApproxChars: _c, maxTokens: _t, ...tiers }) => tiers);
    for (const tokenizer of [approxTokenizer, o200k]) {
      const projector = new TypeAwareContextProjector({ tokenizer });
      fc.assert(
        fc.property(arbitraryItems(), tierBudget, (items, budget) => {
          const { items: sent, report } = projector.project(items, budget);
          const plain = projector.project(items, { ...budget, maxRecentToolResults: -1 });
          expect(report.projectedApproxChars).toBeLessThanOrEqual(plain.report.projectedApproxChars);
          expect(report.projectedTokens ?? 0).toBeLessThanOrEqual(plain.report.projectedTokens ?? 0);
          // No limits: every item is sent, each no larger than the source.
          sent.forEach((item, i) => {
            expect(approxChars(item)).toBeLessThanOrEqual(approxChars(plain.items[i] as MemoryItem));
            expect(itemTokenCount(item, tokenizer)).toBeLessThanOrEqual(itemTokenCount(plain.items[i] as MemoryItem, tokenizer));
          });
          for (const fate of report.fates) if (fate.rule === 'tier1-short') expect(sent[fate.index]).toBe(items[fate.index]);
        }),
        { numRuns: tokenizer === o200k ? 20 : 100 },
      );
    }
  });
});

describe('fate runs without fates', () => {
  it("a projection's own runs, and those carried over by withReportFields, equal encodeReportFates of its fates", () => {
    const projectors = [new DefaultContextProjector(), new TypeAwareContextProjector()];
    fc.assert(
      fc.property(arbitraryItems(), arbitraryBudget(), fc.boolean(), (items, budget, typeAware) => {
        const projection = (typeAware ? projectors[1]! : projectors[0]!).project(deepFreeze(items), budget);
        const n = items.length;
        // Asked first, before the fates exist: the runs come from the selection's codes.
        const runs = reportFateRuns(projection.report, n);
        expect(runs).toBe(encodeReportFates(projection.report.fates, n));
        expect(reportFatesInSourceOrder(projection.report)).toBe(true);
        expect(projection.report.fates.every((fate, i) => fate.index === i)).toBe(true);
        // A derived report keeps them (and its lazy fields), unless it replaces the fates or the item count.
        const derived = withReportFields(projection.report, { notes: [...projection.report.notes, 'more'], overheadTokens: 3 });
        expect(reportFateRuns(derived, n)).toBe(runs);
        expect({ ...derived }).toEqual({ ...projection.report, notes: [...projection.report.notes, 'more'], overheadTokens: 3 });
        const reordered = withReportFields(projection.report, { fates: [...projection.report.fates].reverse() });
        expect(reportFateRuns(reordered, n)).toBe(runs);
        expect(reportFatesInSourceOrder(reordered)).toBe(n < 2);
        // Asked with another item count: as encodeReportFates would, it refuses.
        if (n > 0) expect(() => reportFateRuns(projection.report, n - 1)).toThrow();
      }),
    );
  });

  it('withReportFields keeps the fates and the source characters computed on first read', () => {
    const projection = new DefaultContextProjector().project(deepFreeze([userMessage('a'), userMessage('b')]), { maxItems: 1 });
    const derived = withReportFields(projection.report, { notes: [] });
    expect(typeof Object.getOwnPropertyDescriptor(derived, 'fates')?.get).toBe('function');
    expect(typeof Object.getOwnPropertyDescriptor(derived, 'sourceApproxChars')?.get).toBe('function');
    expect(derived.fates).toEqual([
      { index: 0, fate: 'dropped', rule: 'maxItems' },
      { index: 1, fate: 'kept', rule: 'tail' },
    ]);
    expect(reportFateRuns(derived, 2)).toBe('dropped:maxItems kept:tail');
  });
});
