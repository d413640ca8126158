// openSession: create (fresh id, session.started) or resume by id; snapshot() and save().
import { describe, expect, it } from 'vitest';
import { StructuredSummaryCompactPolicy } from '../../src/compact/index.js';
import type { SessionEvent } from '../../src/events/index.js';
import { assistantMessage, functionCall, userMessage } from '../../src/items/index.js';
import { openMemoryLog, type SessionEventLog } from '../../src/log/index.js';
import { foldMemory } from '../../src/memory/index.js';
import { openSession } from '../../src/session/index.js';

const readAll = async (log: SessionEventLog, id: string): Promise<SessionEvent[]> => {
  const out: SessionEvent[] = [];
  for await (const e of log.read(id)) out.push(e);
  return out;
};

describe('openSession', () => {
  it('creates a session with a fresh id and records session.started', async () => {
    const log = await openMemoryLog();
    const a = await openSession(log);
    const b = await openSession(log);
    expect(a.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(b.id).not.toBe(a.id);
    expect(a.resumed).toBe(false);
    expect(a.log).toBe(log);
    expect(a.memory.sessionId).toBe(a.id);
    const events = await readAll(log, a.id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'session.started', seq: 1, sessionId: a.id });
    expect(a.memory.getItems()).toEqual([]);
    await log.close();
  });

  it('uses the ids option for fresh ids and records metadata', async () => {
    const log = await openMemoryLog();
    let n = 0;
    const session = await openSession(log, { ids: () => `task-${++n}`, metadata: { user: 'ana', repo: 'x' } });
    expect(session.id).toBe('task-1');
    expect((await readAll(log, 'task-1'))[0]).toMatchObject({ type: 'session.started', metadata: { user: 'ana', repo: 'x' } });
    await log.close();
  });

  it('creates a session under a given id that is not in the log yet', async () => {
    const log = await openMemoryLog();
    const session = await openSession(log, { id: 'task-42' });
    expect(session.id).toBe('task-42');
    expect(session.resumed).toBe(false);
    expect(await log.head('task-42')).toBe(1);
    await log.close();
  });

  it('resumes a session by id: same memory, summary and last compact result, no second session.started', async () => {
    const log = await openMemoryLog();
    const first = await openSession(log, { id: 'work' });
    await first.memory.addUserInput('fix the bug');
    await first.memory.addOutputItems([assistantMessage('looking'), functionCall('c1', 'read_file', { path: 'a.ts' })]);
    await first.memory.addToolOutput('c1', 'source');
    await first.record([{ type: 'command.failed', command: 'npm test', exitCode: 1 }]);
    await first.compact(new StructuredSummaryCompactPolicy({ maxItems: 2 }));
    await first.memory.addUserInput('and the docs');

    const resumed = await openSession(log, { id: 'work' });
    expect(resumed.resumed).toBe(true);
    expect(resumed.id).toBe('work');
    expect(resumed.memory.state()).toEqual(first.memory.state());
    expect(resumed.memory.getItems()).toEqual(first.memory.getItems());
    expect(resumed.memory.getSummary()).toBe(first.memory.getSummary());
    expect(resumed.getLastCompactResult()).toEqual(first.getLastCompactResult());
    expect(resumed.getLastCompactResult()?.failedCommands).toEqual(['npm test (exit 1)']);
    expect(resumed.snapshot()).toEqual(first.snapshot());
    const events = await readAll(log, 'work');
    expect(events.filter((e) => e.type === 'session.started')).toHaveLength(1);

    // the resumed session writes on from the head
    await resumed.memory.addOutputItems([assistantMessage('done')]);
    expect(foldMemory(await readAll(log, 'work'))).toEqual(resumed.memory.state());
    await log.close();
  });
});

describe('AgentSession.snapshot and save', () => {
  it('snapshot carries the id, head seq, memory with summary and facts, and the last compact result', async () => {
    const log = await openMemoryLog();
    const session = await openSession(log, { id: 'snap', clock: () => new Date(Date.UTC(2026, 0, 2, 3, 4, 5)) });
    expect(session.getLastCompactResult()).toBeNull();
    expect(session.snapshot().lastCompactResult).toBeNull();
    await session.memory.addUserInput('a');
    await session.memory.addOutputItems([assistantMessage('b'), assistantMessage('c')]);
    const result = await session.compact(new StructuredSummaryCompactPolicy({ maxItems: 1 }));
    await session.record([{ type: 'test.result', status: 'passed' }]);

    const snapshot = session.snapshot();
    expect(snapshot.id).toBe('snap');
    expect(snapshot.headSeq).toBe(await log.head('snap'));
    expect(snapshot.savedAt).toBe('2026-01-02T03:04:05.000Z');
    expect(snapshot.memory.items).toEqual([assistantMessage('c')]);
    expect(snapshot.memory.summary).toBe(result.summary);
    expect(snapshot.memory.facts?.map((f) => f.type)).toEqual(['test.result']);
    const { memory: _memory, summarizer: _summarizer, ...record } = result;
    expect(snapshot.lastCompactResult).toEqual(JSON.parse(JSON.stringify(record)));
    expect(JSON.parse(JSON.stringify(snapshot))).toEqual(snapshot);
    await log.close();
  });

  it('save appends checkpoint.taken, stores the checkpoint at its seq and returns the snapshot', async () => {
    const log = await openMemoryLog();
    const session = await openSession(log, { id: 'save' });
    await session.memory.addUserInput('a');
    await session.memory.addOutputItems([assistantMessage('b')]);
    expect(await log.latestCheckpoint('save')).toBeUndefined();
    const saved = await session.save();
    expect(saved).toEqual(session.snapshot());
    const checkpoint = await log.latestCheckpoint('save');
    expect(checkpoint?.seq).toBe(4);
    const events = await readAll(log, 'save');
    expect(events.at(-1)?.type).toBe('checkpoint.taken');
    expect(checkpoint?.hash).toBe(events.at(-1)!.hash);
    await session.save(); // nothing new since: no second checkpoint.taken
    expect(await log.head('save')).toBe(4);
    await log.close();
  });

  it('a fresh snapshot is JSON and has no savedAt without a clock', async () => {
    const log = await openMemoryLog();
    const session = await openSession(log, { id: 'fresh' });
    expect(session.snapshot()).toEqual({
      id: 'fresh',
      headSeq: 1,
      memory: { items: [], summary: null, facts: [], readFiles: [], modifiedFiles: [] },
      lastCompactResult: null,
    });
    await session.memory.addUserInput(userMessage('x'));
    expect(session.snapshot().headSeq).toBe(2);
    await log.close();
  });
});
