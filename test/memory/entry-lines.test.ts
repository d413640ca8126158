// entriesAppendedFrom: a reader of memory learns in O(1) whether the entries only grew since it last looked, and never
// gets a wrong "yes" (after a compaction, a restore, or two folds that extend one list differently).
import { describe, expect, it } from 'vitest';
import { functionCall, functionCallOutput, userMessage } from '../../src/items/index.js';
import { openMemoryLog } from '../../src/log/index.js';
import { createMemoryFold, entriesAppendedFrom, foldMemory, initialMemoryState, memoryReducer, type MemoryState } from '../../src/memory/index.js';
import { openAgentMemory } from '../../src/session/index.js';
import type { SessionEvent } from '../../src/events/index.js';

let seq = 0;
const stored = (event: Record<string, unknown>): SessionEvent =>
  ({ sessionId: 's', seq: ++seq, at: '2026-01-01T00:00:00.000Z', v: 1, prevHash: '', hash: '', ...event }) as unknown as SessionEvent;
const input = (text: string): SessionEvent => stored({ type: 'user.input', items: [userMessage(text)] });
const result = (id: string): SessionEvent => stored({ type: 'tool.result', callId: id, output: 'ok', isError: false });

describe('entriesAppendedFrom', () => {
  it('says where the new entries start when the live memory only appended, and -1 after a compaction replaced them', async () => {
    const log = await openMemoryLog();
    const memory = await openAgentMemory(log, 'm');
    await memory.addUserInput('one');
    const first = memory.state().entries;
    await memory.addOutputItems([functionCall('c1', 'ls', {})]);
    await memory.addToolOutput('c1', 'a.ts');
    const second = memory.state().entries;
    expect(entriesAppendedFrom(first, second)).toBe(1);
    expect(entriesAppendedFrom(second, second)).toBe(3);
    expect(second.slice(0, 1)).toEqual(first);
    // A summary-only change keeps the same list.
    await memory.setSummary('so far: listed files');
    expect(entriesAppendedFrom(second, memory.state().entries)).toBe(3);
    await memory.restore({ items: [userMessage('fresh')], summary: null });
    expect(entriesAppendedFrom(second, memory.state().entries)).toBe(-1);
    const restored = memory.state().entries;
    await memory.addUserInput('after');
    expect(entriesAppendedFrom(restored, memory.state().entries)).toBe(1);
    // Not the other way round: an older list does not extend a newer one.
    expect(entriesAppendedFrom(memory.state().entries, restored)).toBe(-1);
    await log.close();
  });

  it('two folds that extend one list differently never pass for extensions of each other', () => {
    const base = foldMemory([input('start')]);
    const extend = (state: MemoryState, events: SessionEvent[]): MemoryState => {
      const fold = createMemoryFold(state);
      for (const event of events) fold.add(event);
      return fold.result();
    };
    const left = extend(base, [input('left')]);
    const right = extend(base, [input('right'), result('r')]);
    expect(entriesAppendedFrom(base.entries, left.entries)).toBe(1);
    // right was built from base after left: base is no longer the newest of its line, so right starts another
    expect(entriesAppendedFrom(base.entries, right.entries)).toBe(-1);
    expect(entriesAppendedFrom(left.entries, right.entries)).toBe(-1);
    expect(entriesAppendedFrom(right.entries, left.entries)).toBe(-1);
    const further = extend(left, [result('x')]);
    expect(entriesAppendedFrom(base.entries, further.entries)).toBe(1);
    expect(entriesAppendedFrom(left.entries, further.entries)).toBe(2);
  });

  it('lists the reducer or a checkpoint built are unknown (-1) until a fold appends to them', () => {
    const reduced = [input('a'), input('b')].reduce(memoryReducer, initialMemoryState);
    const copy: MemoryState = JSON.parse(JSON.stringify(reduced)) as MemoryState;
    expect(entriesAppendedFrom(reduced.entries, copy.entries)).toBe(-1);
    const fold = createMemoryFold(copy);
    fold.add(input('c'));
    expect(entriesAppendedFrom(copy.entries, fold.result().entries)).toBe(2);
  });
});
