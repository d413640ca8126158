import { describe, expect, it } from 'vitest';
import {
  ContextBudgetSchema,
  DefaultContextProjector,
  InvalidBudgetError,
  TypeAwareContextProjector,
  budgetLimit,
  isInvalidBudgetError,
  parseContextBudget,
} from '../../src/context/index.js';
import { normalizeBudget } from '../../src/context/budget.js';
import { StructuredSummaryCompactPolicy } from '../../src/compact/index.js';
import { userMessage } from '../../src/items/index.js';

describe('parseContextBudget', () => {
  it('accepts every documented option and the empty budget', () => {
    const budget = {
      maxItems: 40,
      maxApproxChars: 10_000,
      maxTokens: 4_000,
      pinnedPrefixItems: 1,
      maxRecentToolResults: 5,
      trimOldReasoning: true,
      evictionStep: 20,
    };
    expect(parseContextBudget(budget)).toEqual(budget);
    expect(parseContextBudget(undefined)).toEqual({});
    expect(parseContextBudget({})).toEqual({});
    expect(parseContextBudget({ maxItems: -1, maxRecentToolResults: -1 })).toEqual({ maxItems: -1, maxRecentToolResults: -1 });
  });

  it('names the path of a wrongly typed field', () => {
    expect(() => parseContextBudget({ maxItems: '10' })).toThrow(InvalidBudgetError);
    expect(() => parseContextBudget({ maxItems: '10' })).toThrow('maxItems: expected number');
    try {
      parseContextBudget({ maxItems: 'ten', trimOldReasoning: 'yes' });
      expect.unreachable();
    } catch (error) {
      expect(isInvalidBudgetError(error)).toBe(true);
      expect((error as InvalidBudgetError).issues.map((i) => i.path)).toEqual(['maxItems', 'trimOldReasoning']);
      expect((error as Error).message).toBe(
        'invalid context budget: maxItems: expected number, received string; trimOldReasoning: expected boolean, received string',
      );
    }
  });

  it('rejects unknown options, fractions, a negative pin and a zero eviction step', () => {
    expect(() => parseContextBudget({ maxItem: 10 })).toThrow('maxItem: unknown budget option');
    expect(() => parseContextBudget({ maxItems: 2.5 })).toThrow(/maxItems: /);
    expect(() => parseContextBudget({ pinnedPrefixItems: -1 })).toThrow(/pinnedPrefixItems: /);
    expect(() => parseContextBudget({ evictionStep: 0 })).toThrow(/evictionStep: /);
    expect(() => parseContextBudget('40')).toThrow(/\(root\): expected object/);
    expect(ContextBudgetSchema.safeParse({ maxTokens: 1 }).success).toBe(true);
  });

  it('refuses a negative reserveOutputTokens and one at or above a non-negative maxTokens, naming the field', () => {
    for (const [budget, message] of [
      [{ reserveOutputTokens: -5, maxTokens: 100 }, /reserveOutputTokens: Too small: expected number to be >=0/],
      [{ reserveOutputTokens: -1 }, /reserveOutputTokens: /],
      [{ reserveOutputTokens: 200, maxTokens: 100 }, /reserveOutputTokens: must be below maxTokens \(100\), got 200/],
      [{ reserveOutputTokens: 100, maxTokens: 100 }, /reserveOutputTokens: must be below maxTokens \(100\), got 100/],
      [{ reserveOutputTokens: 1, maxTokens: 0 }, /reserveOutputTokens: must be below maxTokens \(0\)/],
    ] as const) {
      const error = (() => {
        try {
          parseContextBudget(budget);
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(isInvalidBudgetError(error)).toBe(true);
      expect((error as InvalidBudgetError).issues.map((i) => i.path)).toEqual(['reserveOutputTokens']);
      expect((error as Error).message).toMatch(message);
      expect(ContextBudgetSchema.safeParse(budget).success).toBe(false);
    }
    // A reserve below maxTokens, with maxTokens unlimited (absent or negative), or of 0 is a budget.
    for (const budget of [{ reserveOutputTokens: 99, maxTokens: 100 }, { reserveOutputTokens: 200, maxTokens: -1 }, { reserveOutputTokens: 200 }, { reserveOutputTokens: 0, maxTokens: 0 }]) {
      expect(parseContextBudget(budget)).toEqual(budget);
    }
    // Where a budget is given: the agent, the projectors, StructuredSummaryCompactPolicy.
    expect(() => new DefaultContextProjector().project([userMessage('a')], { reserveOutputTokens: 200, maxTokens: 100 })).toThrow(InvalidBudgetError);
    expect(() => new StructuredSummaryCompactPolicy({ reserveOutputTokens: -5, maxTokens: 100 })).toThrow(/reserveOutputTokens/);
  });

  it('StructuredSummaryCompactPolicy with keepTokens at or below the reserve keeps the newest keepTokens (its own budget is no request)', () => {
    const items = Array.from({ length: 30 }, (_, i) => userMessage(`message ${i} ${'x'.repeat(80)}`));
    const policy = new StructuredSummaryCompactPolicy({ maxTokens: 10_000, reserveOutputTokens: 2_000 }, undefined, { keepTokens: 500 });
    const result = policy.compact({ items, summary: null });
    const kept = result.memory!.items;
    expect(kept.length).toBeGreaterThan(5);
    expect(kept.at(-1)).toEqual(items.at(-1));
    // Below the reserve's reach it is taken off keepTokens, as before.
    const smaller = new StructuredSummaryCompactPolicy({ maxTokens: 10_000, reserveOutputTokens: 200 }, undefined, { keepTokens: 500 }).compact({ items, summary: null });
    expect(smaller.memory!.items.length).toBeLessThan(kept.length);
  });

  it('is applied by the projectors', () => {
    const items = [userMessage('a')];
    expect(() => new DefaultContextProjector().project(items, { maxItems: 'x' } as never)).toThrow(InvalidBudgetError);
    expect(() => new TypeAwareContextProjector().project(items, { evictionStep: 0 })).toThrow(InvalidBudgetError);
  });
});

describe('the "absent or negative means unlimited" rule', () => {
  it('budgetLimit: absent or negative sets no limit, 0 and up is the limit', () => {
    expect(budgetLimit(undefined)).toBeUndefined();
    expect(budgetLimit(-1)).toBeUndefined();
    expect(budgetLimit(-1000)).toBeUndefined();
    expect(budgetLimit(0)).toBe(0);
    expect(budgetLimit(7)).toBe(7);
  });

  it('normalizeBudget and StructuredSummaryCompactPolicy read it alike', () => {
    expect(normalizeBudget({ maxItems: -1, maxApproxChars: 0, maxRecentToolResults: -3 })).toMatchObject({
      maxItems: Infinity,
      maxApproxChars: 0,
      maxTokens: Infinity,
      maxRecentToolResults: undefined,
    });
    expect(normalizeBudget({ maxRecentToolResults: 0 }).maxRecentToolResults).toBe(0);
    expect(new StructuredSummaryCompactPolicy({ maxItems: -1 }).compactAbove).toBeUndefined();
    expect(new StructuredSummaryCompactPolicy({ maxItems: 5 }, undefined, { compactAbove: -2 }).compactAbove).toBe(5);
    expect(new StructuredSummaryCompactPolicy({ maxItems: 0 }).compactAbove).toBe(0);
  });
});
