// Fault: a model that reuses one call id every turn (`call_0`) made pairing join the whole history into one group.
import { describe, expect, it } from 'vitest';
import {
  DefaultContextProjector,
  LlmCompactPolicy,
  ScriptedModelClient,
  functionCall,
  functionCallOutput,
  toolPairGroups,
  userMessage,
  type MemoryItem,
} from '../../src/index.js';
import { findStepBoundaryCut } from '../../src/compact/turn-boundary.js';
import { assertProjectorLaws } from '../../src/testing/index.js';

/** A request, then 30 turns that all use `call_0`, each with a long output. */
const history = (): MemoryItem[] => {
  const items: MemoryItem[] = [userMessage('Fix the failing date parser test.')];
  for (let turn = 0; turn < 30; turn++) {
    items.push(functionCall('call_0', 'bash', { command: `cat src/file-${turn}.ts` }));
    items.push(functionCallOutput('call_0', `// file ${turn}\n${'export const value = 1;\n'.repeat(40)}`));
  }
  return items.map((i) => Object.freeze(i));
};

describe('a model that reuses one call id every turn', () => {
  it('pairs each output with the nearest earlier unanswered call of that id', () => {
    const items = history();
    const groups = toolPairGroups(items);
    expect(groups.membersOf(1)).toEqual([1, 2]);
    expect(groups.membersOf(60)).toEqual([59, 60]);
    expect(groups.sizeOf(0)).toBe(1);
  });

  it('maxTokens: 1000 sends at most 1000 tokens, the newest turns', () => {
    const projection = new DefaultContextProjector().project(history(), { maxTokens: 1000 });
    expect(projection.report.projectedTokens).toBeLessThanOrEqual(1000);
    expect(projection.items.length).toBeGreaterThanOrEqual(2);
    expect(projection.items.at(-1)).toMatchObject({ type: 'function_call_output', output: expect.stringContaining('file 29') });
    assertProjectorLaws(new DefaultContextProjector(), history(), { maxTokens: 1000 });
  });

  it('maxItems: 10 sends the newest 10 items, not only the first message', () => {
    const items = history();
    const projection = new DefaultContextProjector().project(items, { maxItems: 10 });
    expect(projection.items).toEqual(items.slice(-10));
    assertProjectorLaws(new DefaultContextProjector(), items, { maxItems: 10, pinnedPrefixItems: 1 });
  });

  it('compaction cuts between turns instead of summarising nothing', async () => {
    const items = history();
    expect(findStepBoundaryCut(items, 41)).toBe(41);
    const client = new ScriptedModelClient([{ outputText: '{"goal": "fix the parser", "completed": ["read 20 files"]}', items: [] }]);
    const result = await new LlmCompactPolicy(client, 'm', 10).compact({ items });
    expect(result.memory?.items.length).toBeLessThanOrEqual(11);
    expect(client.requests).toHaveLength(1);
  });
});
