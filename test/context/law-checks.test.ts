import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ContextBudgetSchema,
  DefaultContextProjector,
  TypeAwareContextProjector,
  approxTokenizer,
  itemTokenCount,
} from '../../src/context/index.js';
import type { ContextProjector } from '../../src/context/index.js';
import { MemoryItemSchema } from '../../src/events/index.js';
import { approxChars, callIdsOf, functionCall, functionCallOutput, userMessage } from '../../src/items/index.js';
import type { MemoryItem } from '../../src/items/index.js';
import { arbitraryBudget, arbitraryItems, assertProjectorLaws, deepFreeze, isTierRewriteOf } from '../../src/testing/index.js';

describe('arbitraryItems', () => {
  it('generates valid items with unique call ids and every shape of tool call', () => {
    const shapes = new Set<string>();
    for (const items of fc.sample(arbitraryItems({ minTurns: 2 }), 200)) {
      for (const item of items) {
        expect(MemoryItemSchema.safeParse(item).success).toBe(true);
        if (item.type === 'function_call') shapes.add('function_call');
        if (Array.isArray(item['tool_calls'])) shapes.add((item['tool_calls'] as { function?: unknown }[])[0]?.function ? 'nested' : 'flat');
        if (Array.isArray(item['content']) && (item['content'] as { type: string }[]).some((p) => p.type === 'tool_use')) shapes.add('tool_use');
        if (item.type === 'reasoning') shapes.add('reasoning');
      }
      const ids = items.flatMap(callIdsOf);
      expect(new Set(ids).size).toBe(ids.length);
    }
    expect([...shapes].sort()).toEqual(['flat', 'function_call', 'nested', 'reasoning', 'tool_use']);
  });

  it('can leave orphans out', () => {
    for (const items of fc.sample(arbitraryItems({ orphans: false }), 100)) {
      const issued = new Set(items.flatMap(callIdsOf));
      for (const item of items) if (item.type === 'function_call_output') expect(issued.has(item['call_id'] as string)).toBe(true);
    }
  });
});

describe('arbitraryBudget', () => {
  it('generates budgets that parse, with and without tiers', () => {
    for (const budget of fc.sample(arbitraryBudget(), 200)) expect(ContextBudgetSchema.safeParse(budget).success).toBe(true);
    for (const budget of fc.sample(arbitraryBudget({ tiers: false }), 100)) {
      expect(budget).not.toHaveProperty('maxRecentToolResults');
      expect(budget).not.toHaveProperty('trimOldReasoning');
    }
  });
});

describe('assertProjectorLaws', () => {
  const items = [userMessage('a'), functionCall('c1', 'ls', '{}'), functionCallOutput('c1', 'x'), userMessage('b')];

  it('passes the built-in projectors on examples', () => {
    for (const projector of [new DefaultContextProjector(), new TypeAwareContextProjector()]) {
      for (const budget of [{}, { maxItems: 2 }, { maxItems: 3, pinnedPrefixItems: 1 }, { maxApproxChars: 60, maxRecentToolResults: 0 }]) {
        expect(() => assertProjectorLaws(projector, items, budget)).not.toThrow();
      }
    }
  });

  it('names the law a projection breaks', () => {
    const orphaning: ContextProjector = {
      describe: () => ({ name: 'Orphaning', settings: {} }),
      project: (source, budget) => {
        const projection = new DefaultContextProjector().project(source, budget);
        return {
          items: projection.items.filter((item) => item.type !== 'function_call'),
          report: {
            ...projection.report,
            projectedItemCount: projection.report.projectedItemCount - 1,
            droppedItemCount: projection.report.droppedItemCount + 1,
            projectedApproxChars: projection.report.projectedApproxChars - approxChars(source[1]),
            projectedTokens: (projection.report.projectedTokens ?? 0) - itemTokenCount(source[1] as MemoryItem, approxTokenizer),
            fates: projection.report.fates.map((f) => (f.index === 1 ? { index: 1, fate: 'dropped' as const, rule: 'maxItems' as const } : f)),
          },
        };
      },
    };
    expect(() => assertProjectorLaws(orphaning, items, {})).toThrow('law 7 (tool pairing): call "c1" was sent as an output without its call');
  });

  it('accepts exactly the Tier-1 and Tier-2 rewrites by default', () => {
    expect(isTierRewriteOf({ type: 'function_call_output', call_id: 'c', output: '[tool result cleared: c]' }, functionCallOutput('c', 'x'))).toBe(true);
    expect(isTierRewriteOf({ type: 'function_call_output', call_id: 'd', output: '[tool result cleared: c]' }, functionCallOutput('c', 'x'))).toBe(false);
    expect(isTierRewriteOf({ type: 'reasoning', id: 'r', output: '[reasoning cleared]' }, { type: 'reasoning', id: 'r', summary: 's' })).toBe(true);
    expect(isTierRewriteOf(userMessage('changed'), userMessage('original'))).toBe(false);
  });

  it('deepFreeze freezes nested values', () => {
    const value = deepFreeze({ a: [{ b: 1 }] });
    expect(Object.isFrozen(value.a[0])).toBe(true);
  });
});
