// Law 7 with several results per call: every result of a call, in every shape and however many, travels with its call.
import { describe, expect, it } from 'vitest';
import {
  DefaultContextProjector,
  TypeAwareContextProjector,
  approxChars,
  approxTokenizer,
  functionCall,
  functionCallOutput,
  toolPairGroups,
  userMessage,
  type ContextBudget,
  type ContextProjector,
  type MemoryItem,
} from '../../src/index.js';
import { dropOrphans, projectForModel } from '../../src/context/orphans.js';
import { itemTokenCount } from '../../src/context/measure/items.js';
import { findTurnBoundaryCut } from '../../src/compact/index.js';
import { arbitraryItems, assertProjectorLaws, checkProjectorLaws } from '../../src/testing/index.js';

const call = functionCall('d', 'read_file', { path: 'a.ts' });
const userResult = (text: string): MemoryItem => ({ type: 'message', role: 'user', content: [{ type: 'tool_result', tool_use_id: 'd', content: text }] });
const assistantResult = (text: string): MemoryItem => ({ type: 'message', role: 'assistant', content: [{ type: 'tool_result', tool_use_id: 'd', content: text }] });
const chatResult = (text: string): MemoryItem => ({ type: 'message', role: 'tool', tool_call_id: 'd', content: text });

/** Whether `item` answers call d, in any shape. */
const answersD = (item: MemoryItem): boolean => {
  const i = item as { type: string; call_id?: string; role?: string; tool_call_id?: string; content?: unknown };
  if (i.type === 'function_call_output') return i.call_id === 'd';
  if (i.role === 'tool' && i.tool_call_id === 'd') return true;
  return Array.isArray(i.content) && (i.content as { type?: string; tool_use_id?: string }[]).some((p) => p.type === 'tool_result' && p.tool_use_id === 'd');
};

const projectors: [string, ContextProjector][] = [
  ['DefaultContextProjector', new DefaultContextProjector()],
  ['TypeAwareContextProjector', new TypeAwareContextProjector()],
];

const cases: [string, MemoryItem[], ContextBudget][] = [
  ['two outputs, maxItems 2', [call, functionCallOutput('d', 'one'), functionCallOutput('d', 'two')], { maxItems: 2 }],
  ['two outputs, maxTokens 1', [call, functionCallOutput('d', 'one'), functionCallOutput('d', 'two')], { maxTokens: 1 }],
  ['a user tool_result then an output, maxApproxChars 300', [call, userResult('partial'), functionCallOutput('d', 'x'.repeat(300))], { maxApproxChars: 300 }],
  ['an assistant message carrying a tool_result', [userMessage('go'), call, functionCallOutput('d', 'one'), assistantResult('again')], { maxItems: 2 }],
  ['a Chat role:tool result', [userMessage('go'), call, chatResult('x'.repeat(500))], { maxItems: 1 }],
  ['three results in three shapes', [call, chatResult('a'), userResult('b'), functionCallOutput('d', 'c')], { maxApproxChars: 10 }],
];

describe('every result of a call is in its pairing group', () => {
  it('the groups join every shape and every repeat to the call', () => {
    const items = [call, functionCallOutput('d', 'one'), userResult('b'), assistantResult('c'), chatResult('e'), functionCallOutput('d', 'two')];
    expect(toolPairGroups(items).membersOf(5)).toEqual([0, 1, 2, 3, 4, 5]);
    // A reused id still pairs each output with its own turn's call; a later repeat joins the latest call.
    const reused = [call, functionCallOutput('d', 'turn 1'), call, functionCallOutput('d', 'turn 2'), functionCallOutput('d', 'turn 2 again')];
    expect(toolPairGroups(reused).membersOf(0)).toEqual([0, 1]);
    expect(toolPairGroups(reused).membersOf(4)).toEqual([2, 3, 4]);
  });

  for (const [name, projector] of projectors) {
    for (const [what, items, budget] of cases) {
      it(`${name}: ${what}: no result is sent without its call`, () => {
        const { items: sent } = projector.project(items, budget);
        if (sent.some(answersD)) expect(sent).toContainEqual(call);
        assertProjectorLaws(projector, items, budget);
        // The runtime's guard then finds nothing to drop.
        expect(projectForModel(projector, items, budget).items).toEqual(sent);
      });
    }
  }

  it('a compaction cut never separates a later result from its call', () => {
    const items = [userMessage('one'), call, functionCallOutput('d', 'first'), userMessage('two'), chatResult('second'), userMessage('three')];
    const cut = findTurnBoundaryCut(items, 3);
    expect(cut <= 1 || cut > 4).toBe(true);
  });

  it('dropOrphans keeps a second result of a call that is sent', () => {
    const items = [call, functionCallOutput('d', 'one'), functionCallOutput('d', 'two'), chatResult('three')];
    const projection = new DefaultContextProjector().project(items);
    expect(dropOrphans(projection)).toBe(projection);
    const alone = new DefaultContextProjector().project(items.slice(1));
    expect(dropOrphans(alone).items).toEqual([]);
  });

  it('the law check catches a projector that sends a second result without its call', () => {
    // Sends only the newest item: a second result of call d, without the call.
    const keepsNewest: ContextProjector = {
      project: (items) => {
        const projection = new DefaultContextProjector().project(items);
        const last = items.length - 1;
        return {
          items: [items[last]!],
          report: {
            ...projection.report,
            projectedItemCount: 1,
            droppedItemCount: items.length - 1,
            projectedApproxChars: approxChars(items[last]!),
            projectedTokens: itemTokenCount(items[last]!, approxTokenizer),
            fates: projection.report.fates.map((f) => (f.index === last ? f : { ...f, fate: 'dropped', rule: 'maxItems' })),
          },
        };
      },
      describe: () => ({ name: 'KeepsNewest', settings: {} }),
    };
    expect(() => assertProjectorLaws(keepsNewest, [call, functionCallOutput('d', 'one'), chatResult('two')], {})).toThrow(/law 7/);
  });

  for (const [name, projector] of projectors) {
    it(`checkProjectorLaws(${name}) holds on sessions with several results per call, in every shape`, () => {
      checkProjectorLaws(projector, { items: arbitraryItems({ maxTurns: 4 }), numRuns: 150 });
    });
  }
});
