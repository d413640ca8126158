// A compressor's compaction goes through the session's hooks like a policy's: onCompact runs, with trigger auto.
import { describe, expect, it } from 'vitest';
import {
  CompactPolicyMemoryCompressor,
  StructuredSummaryCompactPolicy,
  openMemoryLog,
  openSession,
  type CompactedHookContext,
} from '../../src/index.js';

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
});
