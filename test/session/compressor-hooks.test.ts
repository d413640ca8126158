// A compressor's compaction goes through the session's one compaction pipeline like a policy's: onCompact runs (trigger
// auto), tokens are recorded, failures are recorded where they happen, and compactions run one at a time.
import { describe, expect, it } from 'vitest';
import {
  CompactPolicyMemoryCompressor,
  InMemoryAgentMemory,
  StructuredSummaryCompactPolicy,
  foldMemory,
  openAgentMemory,
  openMemoryLog,
  openSession,
  userMessage,
  type CompactedHookContext,
  type MemoryCompressor,
  type SessionEvent,
  type SessionEventLog,
} from '../../src/index.js';

const readAll = async (log: SessionEventLog, id: string): Promise<SessionEvent[]> => {
  const out: SessionEvent[] = [];
  for await (const e of log.read(id)) out.push(e);
  return out;
};

/** Keeps the newest two items under a summary; waits a tick first, as a compressor calling a model would. */
const keepLastTwo: MemoryCompressor = {
  describe: () => ({ name: 'keep-last-two', settings: { keep: 2 } }),
  compress: async (snapshot) => {
    await new Promise((resolve) => setTimeout(resolve, 1));
    return snapshot.items.length > 2 ? { items: snapshot.items.slice(-2), summary: 'compressed' } : snapshot;
  },
};

describe('compressor compactions and onCompact', () => {
  it('runs onCompact after the compressor compacts, with the recorded event and the policy result', async () => {
    const log = await openMemoryLog();
    const seen: CompactedHookContext[] = [];
    const compressor = new CompactPolicyMemoryCompressor(new StructuredSummaryCompactPolicy({ maxItems: 2 }));
    const session = await openSession(log, { compressor, hooks: { onCompact: (c) => void seen.push(c) } });
    for (const text of ['a', 'b', 'c']) await session.memory.addUserInput(text);
    expect(seen.length).toBeGreaterThan(0);
    const first = seen[0]!;
    expect(first.trigger).toBe('auto');
    expect(first.event.type).toBe('memory.compacted');
    expect(first.policy.name).toBe('StructuredSummaryCompactPolicy'); // the compressor describes itself as its policy
    expect(first.result).toEqual(compressor.getLastResult() ?? first.result);
    expect(first.result.summary).toContain('AI4J_COMPACT_SUMMARY');
    expect(first.snapshot.items.length).toBe(3);
    const events = [];
    for await (const e of log.read(session.id)) events.push(e);
    expect(events.filter((e) => e.type === 'memory.compacted')).toHaveLength(seen.length);
    await log.close();
  });

  it('a throwing onCompact is recorded as hook.failed and the compaction stands', async () => {
    const log = await openMemoryLog();
    const compressor = new CompactPolicyMemoryCompressor(new StructuredSummaryCompactPolicy({ maxItems: 2 }));
    const session = await openSession(log, { compressor, hooks: { onCompact: () => { throw new Error('hook broke'); } } });
    for (const text of ['a', 'b', 'c']) await session.memory.addUserInput(text);
    const events = [];
    for await (const e of log.read(session.id)) events.push(e);
    expect(events.some((e) => e.type === 'memory.compacted')).toBe(true);
    expect(events.find((e) => e.type === 'hook.failed')).toMatchObject({ hook: 'onCompact', error: 'hook broke' });
    await log.close();
  });

  it('records the tokens before and after, as a policy compaction does', async () => {
    const log = await openMemoryLog();
    const session = await openSession(log, { compressor: keepLastTwo });
    for (const text of ['alpha', 'beta', 'gamma']) await session.memory.addUserInput(text);
    const compacted = (await readAll(log, session.id)).filter((e) => e.type === 'memory.compacted');
    expect(compacted).toHaveLength(1);
    expect(compacted[0]).toMatchObject({ trigger: 'auto', policy: { name: 'keep-last-two' }, tokens: { tokenizer: 'approx' } });
    const tokens = (compacted[0] as { tokens: { before: number; after: number } }).tokens;
    expect(tokens.before).toBeGreaterThan(0);
    expect(tokens.after).toBeGreaterThan(0);
    expect(tokens.after).not.toBe(tokens.before);
    await log.close();
  });

  it('a compressor whose describe() throws: recorded as compaction.failed (stage compact), the write stands and resolves', async () => {
    const undescribable: MemoryCompressor = {
      describe: () => {
        throw new Error('no name');
      },
      compress: (snapshot) => ({ items: snapshot.items.slice(-1), summary: null }),
    };
    const memory = new InMemoryAgentMemory({ sessionId: 'nd', compressor: undescribable });
    await memory.addUserInput('kept');
    expect(memory.getItems()).toEqual([userMessage('kept')]);
    const events = await readAll(memory.log, 'nd');
    expect(events.map((e) => e.type)).toEqual(['user.input', 'compaction.failed']);
    expect(events[1]).toMatchObject({ trigger: 'auto', stage: 'compact', error: 'no name', policy: { name: 'MemoryCompressor', settings: {} } });
  });

  it('concurrent writes: one compaction at a time, no conflict, memory equals the fold of the log', async () => {
    const memory = new InMemoryAgentMemory({ sessionId: 'cc', compressor: keepLastTwo });
    await Promise.all(['a', 'b', 'c', 'd', 'e', 'f'].map((text) => memory.addUserInput(text)));
    const events = await readAll(memory.log, 'cc');
    expect(events.filter((e) => e.type === 'user.input')).toHaveLength(6);
    expect(events.filter((e) => e.type === 'compaction.failed')).toEqual([]);
    expect(memory.getItems()).toEqual([{ type: 'message', role: 'system', content: 'compressed' }, userMessage('e'), userMessage('f')]);
    expect(foldMemory(events)).toEqual(memory.state());
  });

  it('openAgentMemory runs its compressor through the same pipeline (tokens recorded, nothing when memory is unchanged)', async () => {
    const log = await openMemoryLog();
    const memory = await openAgentMemory(log, 'oam', { compressor: keepLastTwo });
    await memory.addUserInput('one');
    await memory.addUserInput('two');
    expect((await readAll(log, 'oam')).map((e) => e.type)).toEqual(['user.input', 'user.input']);
    await memory.addUserInput('three');
    const last = (await readAll(log, 'oam')).at(-1);
    expect(last).toMatchObject({ type: 'memory.compacted', keptIds: ['2:0', '3:0'], droppedIds: ['1:0'], tokens: { tokenizer: 'approx' } });
    await log.close();
  });
});
