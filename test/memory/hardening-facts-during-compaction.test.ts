// Fault: facts recorded while an asynchronous compaction ran were cleared by its memory.compacted without reaching a policy.
import { describe, expect, it } from 'vitest';
import {
  decodeEvent,
  EVENT_VERSIONS,
  foldMemory,
  openMemoryLog,
  openSession,
  userMessage,
  type CompactPolicy,
  type CompactResult,
  type MemorySnapshot,
  type SessionEvent,
} from '../../src/index.js';
import { emptyCompactLists } from '../../src/events/index.js';

describe('a compaction clears only the facts its snapshot held', () => {
  it('a fact recorded while the policy runs survives the compaction and reaches the next policy', async () => {
    const log = await openMemoryLog();
    const session = await openSession(log, { id: 's1' });
    await session.memory.addUserInput('task');
    await session.record([{ type: 'test.result', status: 'failed', suite: 'before', failed: 1 }]);

    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const seen: MemorySnapshot[] = [];
    const slow: CompactPolicy = {
      shouldCompact: () => true,
      compact: async (snapshot): Promise<CompactResult> => {
        seen.push(snapshot);
        await gate;
        return { ...emptyCompactLists(), memory: { items: snapshot.items, summary: 'sum' } };
      },
    };
    const compaction = session.autoCompactIfNecessary(slow, { step: 1 });
    // While the policy runs, a tool records a fact.
    await session.record([{ type: 'test.result', status: 'passed', suite: 'during', passed: 3 }]);
    release();
    expect(await compaction).not.toBeNull();

    expect(seen[0]!.facts?.map((f) => f.type === 'test.result' && f.suite)).toEqual(['before']);
    expect(session.memory.state().facts.map((f) => f.type === 'test.result' && f.suite)).toEqual(['during']);
    await session.autoCompactIfNecessary(slow, { step: 2 });
    expect(seen[1]!.facts?.map((f) => f.type === 'test.result' && f.suite)).toEqual(['during']);
    expect(session.memory.state().facts).toEqual([]);

    // The fold of the log agrees with live memory.
    const events: SessionEvent[] = [];
    for await (const e of log.read('s1')) events.push(e);
    expect(foldMemory(events)).toEqual(session.memory.state());
    const compacted = events.filter((e) => e.type === 'memory.compacted');
    expect(compacted.map((e) => e.type === 'memory.compacted' && e.factsThroughSeq)).toEqual([3, 4]);
  });

  it('memory.compacted v1 (before factsThroughSeq) still clears every fact recorded before it', () => {
    expect(EVENT_VERSIONS['memory.compacted']).toBe(3);
    const base = { sessionId: 's', at: 'now', prevHash: '', hash: '' };
    const raw = [
      { ...base, seq: 1, v: 1, type: 'user.input', items: [userMessage('x')] },
      { ...base, seq: 2, v: 1, type: 'test.result', status: 'failed' },
      {
        ...base, seq: 3, v: 1, type: 'memory.compacted', trigger: 'manual', policy: { name: 'P', settings: {} },
        layout: [{ keep: '1:0' }], keptIds: ['1:0'], droppedIds: [], summary: null, result: {},
      },
      { ...base, seq: 4, v: 1, type: 'test.result', status: 'passed' },
    ];
    const events = raw.map((r) => {
      const decoded = decodeEvent(r);
      if (decoded._tag === 'Left') throw decoded.left;
      return decoded.right;
    });
    expect(events[2]).toMatchObject({ v: 3 });
    expect(events[2]).not.toHaveProperty('factsThroughSeq');
    expect(foldMemory(events).facts.map((f) => f.seq)).toEqual([4]);
  });
});
