// The projection's caches never serve a mutated caller item: a changed text gives a changed budget, frozen items still hit.
import { describe, expect, it } from 'vitest';
import {
  DefaultContextProjector,
  TypeAwareContextProjector,
  approxTokenizer,
  clearProjectionCaches,
  functionCall,
  functionCallOutput,
  itemTokenCount,
  userMessage,
  type MemoryItem,
} from '../../src/index.js';
import { projectionCacheNames } from '../../src/context/caches.js';

describe('projection caches', () => {
  it('a caller item mutated after a projection is measured again by a new projector', () => {
    const items: MemoryItem[] = [userMessage('short'), userMessage('also short')];
    const first = new DefaultContextProjector().project(items, { maxApproxChars: 10_000 });
    (items[1] as { content: string }).content = 'x'.repeat(5_000);
    const second = new DefaultContextProjector().project(items, { maxApproxChars: 10_000 });
    expect(second.report.sourceApproxChars).toBeGreaterThan(first.report.sourceApproxChars + 4_900);
    expect(Object.isFrozen(items[1])).toBe(false); // the library never freezes a caller's objects
  });

  it('a mutation changes which items fit a token budget', () => {
    const items: MemoryItem[] = [userMessage('a'), userMessage('b'), userMessage('c')];
    const budget = { maxTokens: 60 };
    expect(new DefaultContextProjector({ tokenizer: approxTokenizer }).project(items, budget).items).toHaveLength(3);
    (items[1] as { content: string }).content = 'word '.repeat(400);
    const again = new DefaultContextProjector({ tokenizer: approxTokenizer }).project(items, budget);
    expect(again.items.length).toBeLessThan(3);
    expect(itemTokenCount(items[1]!, approxTokenizer)).toBeGreaterThan(300);
  });

  it('a mutated tool output is cleared by Tier-1 with its new call name, not a cached copy', () => {
    const items: MemoryItem[] = [userMessage('go'), functionCall('c1', 'ls', {}), functionCallOutput('c1', 'out '.repeat(20)), functionCall('c2', 'cat', {}), functionCallOutput('c2', 'x')];
    const projector = new TypeAwareContextProjector();
    expect(projector.project(items, { maxRecentToolResults: 1 }).items[2]).toMatchObject({ output: '[tool result cleared: ls(c1)]' });
    (items[1] as { name: string }).name = 'grep';
    expect(new TypeAwareContextProjector().project(items, { maxRecentToolResults: 1 }).items[2]).toMatchObject({ output: '[tool result cleared: grep(c1)]' });
  });

  it('frozen items are cached, and clearProjectionCaches empties every registered cache', () => {
    const items = [userMessage('hello'), userMessage('world')].map((i) => Object.freeze(i));
    const a = new DefaultContextProjector().project(items, { maxItems: 5 });
    clearProjectionCaches();
    const b = new DefaultContextProjector().project(items, { maxItems: 5 });
    expect(b.report).toEqual(a.report);
    expect(projectionCacheNames().length).toBeGreaterThanOrEqual(6);
  });
});
