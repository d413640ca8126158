// Memory checkpoints: resume folds only the tail after a matching one; one that does not match the log is ignored and rebuilt.
import { describe, expect, it } from 'vitest';
import { StructuredSummaryCompactPolicy } from '../../src/compact/index.js';
import type { SessionEvent } from '../../src/events/index.js';
import { assistantMessage, functionCall } from '../../src/items/index.js';
import { InvalidCheckpointError, openMemoryLog, type SessionEventLog } from '../../src/log/index.js';
import { foldMemory, initialMemoryState } from '../../src/memory/index.js';
import { openAgentMemory, openSession, rebuildState, writeCheckpoint, type AgentSession } from '../../src/session/index.js';

const readAll = async (log: SessionEventLog, id: string): Promise<SessionEvent[]> => {
  const out: SessionEvent[] = [];
  for await (const e of log.read(id)) out.push(e);
  return out;
};

const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** Appends `steps` tool steps (a call event and an output event each), compacting now and then. */
const work = async (session: AgentSession, steps: number, from = 0): Promise<void> => {
  for (let i = from; i < from + steps; i++) {
    await session.memory.addOutputItems([functionCall(`c${i}`, 'bash', { cmd: `step ${i}` })]);
    await session.memory.addToolOutput(`c${i}`, `out ${i}`);
    if (i % 7 === 6) await session.compact(new StructuredSummaryCompactPolicy({ maxItems: 4 }));
    if (i % 5 === 4) await session.record([{ type: 'command.failed', command: `cmd ${i}`, exitCode: 1 }]);
  }
};

describe('checkpoints', () => {
  it('openSession writes a checkpoint each time the head crosses a multiple of checkpointEvery', async () => {
    const log = await openMemoryLog();
    const session = await openSession(log, { id: 'cp', checkpointEvery: 10 });
    expect(await log.latestCheckpoint('cp')).toBeUndefined();
    await work(session, 5); // 1 + 10 events
    const checkpoint = await log.latestCheckpoint('cp');
    expect(checkpoint?.seq).toBe(10);
    const events = await readAll(log, 'cp');
    expect(checkpoint?.hash).toBe(events[9]!.hash);
    expect(plain((checkpoint?.data as { state: unknown }).state)).toEqual(plain(foldMemory(events.slice(0, 10))));
    // a batch that jumps over a multiple checkpoints at its last event
    await session.record(Array.from({ length: 12 }, (_, i) => ({ type: 'sandbox.state' as const, description: `s${i}` })));
    expect((await log.latestCheckpoint('cp'))?.seq).toBe(await log.head('cp'));
    await log.close();
  });

  it('checkpointEvery 0 writes none', async () => {
    const log = await openMemoryLog();
    const session = await openSession(log, { id: 'none', checkpointEvery: 0 });
    await work(session, 20);
    expect(await log.latestCheckpoint('none')).toBeUndefined();
    await log.close();
  });

  it('resume from a matching checkpoint folds only the tail, and gives the full fold', async () => {
    const log = await openMemoryLog();
    const session = await openSession(log, { id: 'tail', checkpointEvery: 10 });
    await work(session, 23);
    const events = await readAll(log, 'tail');
    const head = events.length;
    const lastCheckpoint = Math.floor(head / 10) * 10;

    const rebuilt = await rebuildState(log, 'tail');
    expect(rebuilt.from).toEqual({ checkpointSeq: lastCheckpoint });
    expect(rebuilt.rejectedCheckpoint).toBeUndefined();
    expect(rebuilt.headSeq).toBe(head);
    expect(rebuilt.headHash).toBe(events.at(-1)!.hash);
    expect(plain(rebuilt.state)).toEqual(plain(foldMemory(events)));

    const resumed = await openSession(log, { id: 'tail' });
    expect(plain(resumed.memory.state())).toEqual(plain(session.memory.state()));
    expect(resumed.getLastCompactResult()).toEqual(session.getLastCompactResult());
    expect(resumed.memory.headSeq()).toBe(head);
    // openAgentMemory resumes the same way
    expect(plain((await openAgentMemory(log, 'tail')).state())).toEqual(plain(foldMemory(events)));
    await log.close();
  });

  it('uses the checkpoint state for the events before it (it is trusted once its hash matches)', async () => {
    const log = await openMemoryLog();
    const session = await openSession(log, { id: 'trust', checkpointEvery: 0 });
    await work(session, 3);
    const events = await readAll(log, 'trust');
    // a hand-made checkpoint at seq 3 whose state differs from the fold: resume shows it is what was used
    const marked = { ...foldMemory(events.slice(0, 3)), summary: 'from the checkpoint' };
    await writeCheckpoint(log, 'trust', 3, events[2]!.hash, marked);
    const rebuilt = await rebuildState(log, 'trust');
    expect(rebuilt.from).toEqual({ checkpointSeq: 3 });
    expect(rebuilt.state.summary).toBe('from the checkpoint');
    await log.close();
  });

  it('a checkpoint at the head: the tail is empty', async () => {
    const log = await openMemoryLog();
    const session = await openSession(log, { id: 'head' });
    await work(session, 4);
    await session.save();
    const rebuilt = await rebuildState(log, 'head');
    expect(rebuilt.from).toEqual({ checkpointSeq: await log.head('head') });
    expect(plain(rebuilt.state)).toEqual(plain(session.memory.state()));
    await log.close();
  });

  it('a checkpoint whose hash does not match the log is ignored, rebuilt by a full fold, and replaced', async () => {
    const log = await openMemoryLog();
    const session = await openSession(log, { id: 'bad-hash', checkpointEvery: 0 });
    await work(session, 8);
    const events = await readAll(log, 'bad-hash');
    const head = events.length;
    // a checkpoint that claims the memory was empty, with a wrong hash
    await log.putCheckpoint('bad-hash', { seq: head - 2, hash: 'not-the-hash', data: { format: 1, state: initialMemoryState } });

    const rebuilt = await rebuildState(log, 'bad-hash');
    expect(rebuilt.from).toBe('full-fold');
    expect(rebuilt.rejectedCheckpoint).toMatch(/does not match the log/);
    expect(plain(rebuilt.state)).toEqual(plain(foldMemory(events)));

    const resumed = await openSession(log, { id: 'bad-hash' });
    expect(plain(resumed.memory.state())).toEqual(plain(foldMemory(events)));
    const replacement = await log.latestCheckpoint('bad-hash');
    expect(replacement?.seq).toBe(head);
    expect(replacement?.hash).toBe(events.at(-1)!.hash);
    const again = await rebuildState(log, 'bad-hash');
    expect(again.from).toEqual({ checkpointSeq: head });
    expect(again.rejectedCheckpoint).toBeUndefined();
    expect(plain(again.state)).toEqual(plain(foldMemory(events)));
    await log.close();
  });

  it('a checkpoint at a seq the log does not have is refused, and resume folds the log', async () => {
    const log = await openMemoryLog();
    const session = await openSession(log, { id: 'beyond', checkpointEvery: 0 });
    await work(session, 2);
    const events = await readAll(log, 'beyond');
    await expect(
      log.putCheckpoint('beyond', { seq: events.length + 50, hash: events.at(-1)!.hash, data: { format: 1, state: initialMemoryState } }),
    ).rejects.toThrow(InvalidCheckpointError);
    const rebuilt = await rebuildState(log, 'beyond');
    expect(rebuilt.from).toBe('full-fold');
    expect(plain(rebuilt.state)).toEqual(plain(foldMemory(events)));
    await log.close();
  });

  it('a checkpoint with garbage data (right hash) is ignored, rebuilt and replaced', async () => {
    const garbage: unknown[] = [
      'garbage',
      null,
      { format: 2, state: initialMemoryState },
      { format: 1, state: { entries: 'not a list' } },
      { format: 1, state: { ...initialMemoryState, entries: [{ id: 1, item: { type: 'message' } }] } },
      { format: 1 },
    ];
    for (const [i, data] of garbage.entries()) {
      const log = await openMemoryLog();
      const id = `garbage-${i}`;
      const session = await openSession(log, { id, checkpointEvery: 0 });
      await work(session, 8);
      const events = await readAll(log, id);
      await log.putCheckpoint(id, { seq: events.length, hash: events.at(-1)!.hash, data });

      const rebuilt = await rebuildState(log, id);
      expect(rebuilt.from, JSON.stringify(data)).toBe('full-fold');
      expect(rebuilt.rejectedCheckpoint).toMatch(/not a valid state/);
      expect(plain(rebuilt.state)).toEqual(plain(foldMemory(events)));

      const resumed = await openSession(log, { id });
      expect(plain(resumed.memory.state())).toEqual(plain(foldMemory(events)));
      expect((await rebuildState(log, id)).from).toEqual({ checkpointSeq: events.length });
      await log.close();
    }
  });

  it('a session resumed from a checkpoint keeps writing and checkpointing correctly', async () => {
    const log = await openMemoryLog();
    const first = await openSession(log, { id: 'continue', checkpointEvery: 6 });
    await work(first, 10);
    const second = await openSession(log, { id: 'continue', checkpointEvery: 6 });
    await work(second, 10, 10);
    await second.memory.addOutputItems([assistantMessage('done')]);
    const events = await readAll(log, 'continue');
    expect(plain(second.memory.state())).toEqual(plain(foldMemory(events)));
    const rebuilt = await rebuildState(log, 'continue');
    expect(rebuilt.from).not.toBe('full-fold');
    expect(plain(rebuilt.state)).toEqual(plain(foldMemory(events)));
    expect((await log.verify('continue')).valid).toBe(true);
    await log.close();
  });
});
