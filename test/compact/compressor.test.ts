// CompactPolicyMemoryCompressor (a policy behind the old MemoryCompressor entry point) and restore keeping the summary.
import { describe, expect, it } from 'vitest';
import { CompactPolicyMemoryCompressor, LlmCompactPolicy, StructuredSummaryCompactPolicy, type CompactPolicy } from '../../src/compact/index.js';
import { InvalidOptionsError } from '../../src/base/errors.js';
import type { SessionEvent, SessionEventOf } from '../../src/events/index.js';
import { assistantMessage, userMessage } from '../../src/items/index.js';
import { openMemoryLog, type SessionEventLog } from '../../src/log/index.js';
import { foldMemory } from '../../src/memory/index.js';
import { ScriptedModelClient } from '../../src/model/index.js';
import { InMemoryAgentMemory, openSession } from '../../src/session/index.js';

const readAll = async (log: SessionEventLog, id: string): Promise<SessionEvent[]> => {
  const out: SessionEvent[] = [];
  for await (const e of log.read(id)) out.push(e);
  return out;
};

describe('CompactPolicyMemoryCompressor', () => {
  it('refuses a null or missing policy', () => {
    expect(() => new CompactPolicyMemoryCompressor(null as unknown as CompactPolicy)).toThrow(InvalidOptionsError);
    expect(() => new CompactPolicyMemoryCompressor(undefined as unknown as CompactPolicy)).toThrow(/policy: .*required|policy.*is required/);
  });

  it('has no last result before it compacts, and leaves a snapshot under the threshold as it is', async () => {
    const compressor = new CompactPolicyMemoryCompressor(new StructuredSummaryCompactPolicy({ maxItems: 3 }));
    expect(compressor.getLastResult()).toBeNull();
    const snapshot = { items: [userMessage('a'), assistantMessage('b')], summary: null };
    expect(await compressor.compress(snapshot)).toBe(snapshot);
    expect(compressor.getLastResult()).toBeNull();
  });

  it('compacts above the threshold and keeps the last result', async () => {
    const compressor = new CompactPolicyMemoryCompressor(new StructuredSummaryCompactPolicy({ maxItems: 2 }));
    const items = [userMessage('a'), assistantMessage('b'), userMessage('c'), assistantMessage('d')];
    const compressed = await compressor.compress({ items });
    expect(compressed.items).toEqual(items.slice(2));
    const last = compressor.getLastResult();
    expect(last?.memory).toEqual(compressed);
    expect(last?.contextReport?.droppedItemCount).toBe(2);
    expect(compressor.describe()).toEqual(new StructuredSummaryCompactPolicy({ maxItems: 2 }).describe());
  });

  it('runs a policy without shouldCompact on every compress', async () => {
    let calls = 0;
    const inner = new StructuredSummaryCompactPolicy({ maxItems: 1 });
    const policy: CompactPolicy = {
      compact: (snapshot) => {
        calls += 1;
        return inner.compact(snapshot);
      },
    };
    const compressor = new CompactPolicyMemoryCompressor(policy);
    await compressor.compress({ items: [userMessage('a')] });
    await compressor.compress({ items: [userMessage('a')] });
    expect(calls).toBe(2);
    expect(compressor.describe()).toEqual({ name: 'CompactPolicy', settings: {} });
  });

  it('behind InMemoryAgentMemory: writes compact automatically, recorded as memory.compacted, last result kept', async () => {
    const compressor = new CompactPolicyMemoryCompressor(new StructuredSummaryCompactPolicy({ maxItems: 3 }));
    const memory = new InMemoryAgentMemory({ sessionId: 'm', compressor });
    await memory.addUserInput('one');
    await memory.addOutputItems([assistantMessage('two')]);
    await memory.addUserInput('three');
    expect(compressor.getLastResult()).toBeNull();
    await memory.addOutputItems([assistantMessage('four')]);
    expect(memory.snapshot().items).toEqual([assistantMessage('two'), userMessage('three'), assistantMessage('four')]);
    const last = compressor.getLastResult();
    expect(last?.summary).toContain('AI4J_COMPACT_SUMMARY');
    expect(memory.getSummary()).toBe(last?.summary);

    const events = await readAll(memory.log, 'm');
    const compacted = events.filter((e): e is SessionEventOf<'memory.compacted'> => e.type === 'memory.compacted');
    expect(compacted).toHaveLength(1);
    expect(compacted[0]).toMatchObject({ trigger: 'auto', policy: { name: 'StructuredSummaryCompactPolicy' }, droppedIds: ['1:0'] });
    expect(compacted[0]!.result.contextReport).toEqual(last?.contextReport);
    expect(compacted[0]!.result).not.toHaveProperty('memory');
    expect(foldMemory(events)).toEqual(memory.state());
  });

  it('behind InMemoryAgentMemory: a failing policy records compaction.failed and the write stands', async () => {
    const compressor = new CompactPolicyMemoryCompressor(new LlmCompactPolicy(new ScriptedModelClient([new Error('offline')]), 'm', 1));
    const memory = new InMemoryAgentMemory({ sessionId: 'f', compressor });
    await memory.addUserInput('one');
    await memory.addOutputItems([assistantMessage('two')]);
    expect(memory.snapshot().items).toEqual([userMessage('one'), assistantMessage('two')]);
    const events = await readAll(memory.log, 'f');
    expect(events.at(-1)).toMatchObject({ type: 'compaction.failed', trigger: 'auto', stage: 'compact', error: 'offline', policy: { name: 'LlmCompactPolicy' } });
    expect(compressor.getLastResult()).toBeNull();
  });
});

describe('restore keeps the summary', () => {
  it('restoring memory after a compaction keeps the compacted summary', async () => {
    const log = await openMemoryLog();
    const session = await openSession(log, { id: 'restore' });
    await session.memory.addUserInput('a');
    await session.memory.addOutputItems([assistantMessage('b'), assistantMessage('c')]);
    const result = await session.compact(new StructuredSummaryCompactPolicy({ maxItems: 1 }));
    const snapshot = session.memory.snapshot();
    expect(snapshot.summary).toBe(result.summary);

    await session.memory.addUserInput('more');
    await session.memory.restore(snapshot);
    expect(session.memory.getSummary()).toBe(result.summary);
    expect(session.memory.snapshot().items).toEqual(result.memory?.items);
    expect(session.memory.getItems()[0]).toEqual({ type: 'message', role: 'system', content: result.summary });

    // and so does a resume after it
    const resumed = await openSession(log, { id: 'restore' });
    expect(resumed.memory.getSummary()).toBe(result.summary);
    await log.close();
  });
});
