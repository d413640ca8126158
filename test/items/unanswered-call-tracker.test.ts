// The incremental open-call tracker gives, after every item, what a scan of all items so far gives (issue 28 item 3:
// the step finds unanswered calls from the entries appended since its last look, not by rescanning memory).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UnansweredCallTracker, callIdsOf, outputCallIdOf, toolCallsOf, unansweredCalls, type MemoryItem, type ToolCallInfo } from '../../src/items/index.js';

/** The scan as it was written before the tracker: every item, every time (kept here as the reference). */
const referenceScan = (items: readonly MemoryItem[]): ToolCallInfo[] => {
  const open = new Map<string, { call: ToolCallInfo; answered: boolean }[]>();
  const all: { call: ToolCallInfo; answered: boolean }[] = [];
  for (const item of items) {
    const answers = outputCallIdOf(item);
    if (answers !== undefined) {
      const slot = open.get(answers)?.pop();
      if (slot) slot.answered = true;
    }
    const described = toolCallsOf([item]);
    for (const id of callIdsOf(item)) if (!described.some((c) => c.callId === id)) described.push({ callId: id, name: '', arguments: '' });
    for (const call of described) {
      const slot = { call, answered: false };
      all.push(slot);
      const stack = open.get(call.callId);
      if (stack) stack.push(slot);
      else open.set(call.callId, [slot]);
    }
  }
  return all.filter((slot) => !slot.answered).map((slot) => slot.call);
};

// A few ids, so calls reuse them (a model that sends the same id every turn) and outputs answer, or miss, them.
const callId = fc.constantFrom('a', 'b', 'c', '');
const item: fc.Arbitrary<MemoryItem> = fc.oneof(
  callId.map((id) => ({ type: 'function_call', call_id: id, name: `t_${id}`, arguments: '{}' }) as MemoryItem),
  callId.map((id) => ({ type: 'function_call_output', call_id: id, output: 'ok' }) as MemoryItem),
  fc.array(fc.tuple(callId, fc.boolean()), { minLength: 1, maxLength: 3 }).map(
    (calls) =>
      ({
        type: 'message',
        role: 'assistant',
        content: '',
        tool_calls: calls.map(([id, nested]) => (nested ? { id, type: 'function', function: { name: `n_${id}`, arguments: '{}' } } : { id, name: `f_${id}`, arguments: '{}' })),
      }) as MemoryItem,
  ),
  callId.map((id) => ({ type: 'message', role: 'assistant', content: [{ type: 'tool_use', id, name: `u_${id}`, input: {} }] }) as MemoryItem),
  fc.constant({ type: 'message', role: 'user', content: 'go on' } as MemoryItem),
);

describe('UnansweredCallTracker', () => {
  it('after each item it gives what scanning every item so far gives (names, order, reused ids, every call shape)', () => {
    fc.assert(
      fc.property(fc.array(item, { maxLength: 40 }), (items) => {
        const tracker = new UnansweredCallTracker();
        for (let i = 0; i < items.length; i++) {
          tracker.add(items[i]!);
          expect(tracker.unanswered()).toEqual(referenceScan(items.slice(0, i + 1)));
        }
        expect(tracker.size).toBe(items.length);
        expect(unansweredCalls(items)).toEqual(referenceScan(items));
      }),
      { numRuns: 300 },
    );
  });

  it('an output answers the newest open call of its id; the older one stays open, in call order', () => {
    const tracker = new UnansweredCallTracker();
    for (const i of [
      { type: 'function_call', call_id: 'x', name: 'first', arguments: '{}' },
      { type: 'function_call', call_id: 'y', name: 'other', arguments: '{}' },
      { type: 'function_call', call_id: 'x', name: 'second', arguments: '{}' },
      { type: 'function_call_output', call_id: 'x', output: 'done' },
    ] as MemoryItem[])
      tracker.add(i);
    expect(tracker.unanswered().map((c) => c.name)).toEqual(['first', 'other']);
  });
});
