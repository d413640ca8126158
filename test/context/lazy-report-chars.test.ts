// Without a character limit, a projection does not measure every item's characters (a JSON text each) up front: the
// report's sourceApproxChars is computed on first read, exactly, and projectedApproxChars from the items sent.
import { describe, expect, it } from 'vitest';
import { DefaultContextProjector, openAiTokenizer } from '../../src/context/index.js';
import { knownApproxChars } from '../../src/context/measure/items.js';
import { approxChars, functionCall, functionCallOutput, systemMessage, userMessage } from '../../src/items/index.js';
import type { MemoryItem } from '../../src/items/index.js';
import { deepFreeze } from '../../src/testing/index.js';

const history = (turns: number, tag: string): MemoryItem[] => {
  const items: MemoryItem[] = [systemMessage(`system ${tag}`)];
  for (let t = 0; t < turns; t++) {
    items.push(userMessage(`question ${t} ${tag} ${'word '.repeat(20)}`));
    items.push(functionCall(`c${t}`, 'grep', { pattern: `p${t}` }));
    items.push(functionCallOutput(`c${t}`, `result ${t} ${'line\n'.repeat(30)}`));
  }
  return deepFreeze(items);
};

describe('report character totals without a character limit', () => {
  it('measures no dropped item until sourceApproxChars is read, then gives the exact total', () => {
    const items = history(200, 'a');
    const projection = new DefaultContextProjector({ tokenizer: openAiTokenizer() }).project(items, { maxTokens: 500, pinnedPrefixItems: 1 });
    const dropped = projection.report.fates.filter((fate) => fate.fate === 'dropped').map((fate) => items[fate.index] as MemoryItem);
    expect(dropped.length).toBeGreaterThan(100);
    expect(dropped.every((item) => knownApproxChars(item) === undefined)).toBe(true);
    expect(projection.report.projectedApproxChars).toBe(approxChars(projection.items));
    expect(projection.report.sourceApproxChars).toBe(approxChars(items));
    expect(dropped.every((item) => knownApproxChars(item) !== undefined)).toBe(true);
  });

  it('is a plain enumerable value to JSON, spreads and structured clones, in the report key order', () => {
    const items = history(30, 'b');
    const { report } = new DefaultContextProjector().project(items, { maxTokens: 300, pinnedPrefixItems: 1 });
    const total = approxChars(items);
    expect(Object.keys(report).slice(0, 5)).toEqual(['sourceItemCount', 'projectedItemCount', 'droppedItemCount', 'sourceApproxChars', 'projectedApproxChars']);
    expect((JSON.parse(JSON.stringify(report)) as { sourceApproxChars: number }).sourceApproxChars).toBe(total);
    expect({ ...report }.sourceApproxChars).toBe(total);
    expect(structuredClone(report).sourceApproxChars).toBe(total);
    expect(Object.isFrozen(Object.freeze(report)) && report.sourceApproxChars).toBe(total);
  });

  it('counts only the items of its own projection when the history has grown before it is read', () => {
    const items = history(50, 'c');
    const projector = new DefaultContextProjector({ tokenizer: openAiTokenizer() });
    const first = projector.project(items, { maxTokens: 400, pinnedPrefixItems: 1 });
    const grown = deepFreeze([...items, userMessage('one more'), functionCall('x', 'ls', {}), functionCallOutput('x', 'a b c')]);
    const second = projector.project(grown, { maxTokens: 400, pinnedPrefixItems: 1 });
    expect(second.report.sourceApproxChars).toBe(approxChars(grown));
    expect(first.report.sourceApproxChars).toBe(approxChars(items));
  });

  it('still measures every item when a character limit is set (the limit needs them), with the same totals', () => {
    const items = history(40, 'd');
    const projection = new DefaultContextProjector().project(items, { maxApproxChars: 2_000, pinnedPrefixItems: 1 });
    expect(items.every((item) => knownApproxChars(item) !== undefined)).toBe(true);
    expect(projection.report.sourceApproxChars).toBe(approxChars(items));
    expect(projection.report.projectedApproxChars).toBe(approxChars(projection.items));
  });
});
