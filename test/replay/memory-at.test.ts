// memoryAt and replayContext: time travel to any seq or step (from the nearest checkpoint, reads only), and the exact items sent at a step.
// A seq and a step together are refused, by memoryAt and by forkSession.
import { describe, expect, it } from 'vitest';
import {
  digestOf,
  fatesOf,
  forkSession,
  sentIdsOf,
  foldSession,
  isReplayTargetError,
  memoryAt,
  openMemoryLog,
  openSession,
  replayContext,
  type NewSessionEvent,
} from '../../src/index.js';
import { encodeFateRuns } from '../../src/events/fate-runs.js';
import { countingLog, plain, readAll, replayAgent, scriptedTurns } from './support.js';

describe('memoryAt', () => {
  it('equals the fold of the prefix at every seq of a 1,000-event session, and folds from a checkpoint at or below the seq', async () => {
    const memory = await openMemoryLog();
    const session = await openSession(memory, { id: 'k', checkpointEvery: 100 });
    const batch = (i: number): NewSessionEvent[] => [
      { type: 'user.input', items: [{ type: 'message', role: 'user', content: `u${i}` }] },
      { type: 'model.output', items: [{ type: 'function_call', call_id: `c${i}`, name: 'bash', arguments: `{"i":${i}}` }] },
      { type: 'tool.result', callId: `c${i}`, output: `o${i}` },
      ...(i % 9 === 0 ? [{ type: 'command.failed' as const, command: `x${i}`, exitCode: 2 }] : []),
      ...(i % 37 === 0 ? [{ type: 'memory.restored' as const, items: [{ type: 'message', role: 'user', content: `restart ${i}` }] }] : []),
      { type: 'run.started', runId: `r${i}` },
      { type: 'step.started', runId: `r${i}`, step: i + 1 },
    ];
    for (let i = 0; (await memory.head('k')) < 1000; i++) await session.record(batch(i));
    const events = await readAll(memory, 'k');
    const checkpoints = events.filter((e) => e.type === 'checkpoint.taken').map((e) => e.seq);
    expect(checkpoints.length).toBeGreaterThan(8);

    const { log, counts } = countingLog(memory);
    let state = foldSession([]);
    for (let seq = 0; seq <= events.length; seq++) {
      if (seq > 0) state = foldSession([events[seq - 1]!], state);
      const before = counts.eventsRead;
      const at = await memoryAt(log, 'k', { seq });
      expect(at.state, `seq ${seq}`).toEqual(state);
      expect(at.seq).toBe(seq);
      const base = checkpoints.filter((c) => c <= seq).at(-1);
      if (base !== undefined) {
        expect(at.from).toEqual({ checkpointSeq: base });
        expect(at.eventsFolded).toBe(seq - base);
        // the checkpoint's own event is read to vouch for it; then only the tail
        expect(counts.eventsRead - before).toBe(seq - base + 1);
      } else {
        expect(at.from).toBe('full-fold');
        expect(counts.eventsRead - before).toBe(seq);
      }
    }
    expect(counts.appends).toBe(0);
    expect(counts.checkpointWrites).toBe(0);
    await memory.close();
  });

  it('at the start of a step: just after its step.started', async () => {
    const log = await openMemoryLog();
    const agent = replayAgent(log, scriptedTurns(6));
    const session = await agent.newSession();
    await session.run('go');
    const events = await readAll(log, session.id);
    const start = events.find((e) => e.type === 'step.started' && e.step === 4)!;
    const at = await memoryAt(log, session.id, { step: 4 });
    expect(at.seq).toBe(start.seq);
    expect(plain(at.state)).toEqual(plain(foldSession(events.slice(0, start.seq))));
    expect(at.run.lastStep).toBe(4);
    await log.close();
  });

  it('names what it cannot find: an unknown session, a seq past the head, a step never started, bad points', async () => {
    const log = await openMemoryLog();
    await log.append('s', [{ type: 'session.started' }]);
    const failure = async (p: Promise<unknown>): Promise<unknown> => p.then(() => undefined, (e: unknown) => e);
    const unknown = await failure(memoryAt(log, 'nope', { seq: 1 }));
    expect(isReplayTargetError(unknown)).toBe(true);
    expect(String(unknown)).toContain('"nope"');
    expect(String(await failure(memoryAt(log, 's', { seq: 5 })))).toContain('seq 5 is past the head (1)');
    expect(String(await failure(memoryAt(log, 's', { step: 2 })))).toContain('no step 2 was started');
    await expect(memoryAt(log, 's', { seq: -1 })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
    await expect(memoryAt(log, 's', { seq: 1.5 })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
    await expect(memoryAt(log, 's', {} as { seq: number })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
    await expect(memoryAt(log, '', { seq: 0 })).rejects.toMatchObject({ code: 'INVALID_SESSION_ID' });
    await log.close();
  });
});

describe('replayContext', () => {
  it('rebuilds the exact items sent at every step (digest, ids, fates, report), reading only', async () => {
    const memory = await openMemoryLog();
    const agent = replayAgent(memory, scriptedTurns(20));
    const session = await agent.newSession();
    await session.run('go');
    const events = await readAll(memory, session.id);
    const steps = events.filter((e) => e.type === 'context.projected');
    expect(events.some((e) => e.type === 'memory.compacted')).toBe(true);
    const { log, counts } = countingLog(memory);
    for (const recorded of steps) {
      if (recorded.type !== 'context.projected') continue;
      const replayed = await replayContext(log, session.id, { step: recorded.step! });
      expect(replayed.identical, `step ${recorded.step}`).toBe(true);
      expect(replayed.differences).toEqual([]);
      expect(digestOf(replayed.items)).toBe(recorded.digest);
      expect(replayed.sent).toEqual(sentIdsOf(recorded, replayed.sourceIds));
      expect(replayed.request?.digest).toBe(recorded.digest);
      expect(replayed.request?.systemPrompt).toBe('You are a test agent.');
    }
    expect(counts.appends + counts.checkpointWrites).toBe(0);
    await memory.close();
  });

  it('says which recorded fields a re-projection does not reproduce', async () => {
    const log = await openMemoryLog();
    const agent = replayAgent(log, scriptedTurns(2));
    const session = await agent.newSession();
    await session.run('go');
    const recorded = (await readAll(log, session.id)).find((e) => e.type === 'context.projected' && e.step === 2)!;
    if (recorded.type !== 'context.projected') throw new Error('unreachable');
    // a forged step 7 whose recording claims something else was sent
    const { sessionId: _s, seq: _q, at: _a, v: _v, prevHash: _p, hash: _h, ...payload } = recorded;
    await session.session.record([
      { type: 'step.started', runId: 'x', step: 7 },
      {
        ...payload,
        step: 7,
        digest: 'f'.repeat(64),
        fateRuns: encodeFateRuns(fatesOf(recorded).map((f, i) => (i === 0 ? { fate: 'dropped' as const, rule: 'maxItems' as const } : f))),
      },
    ]);
    const replayed = await replayContext(log, session.id, { step: 7 });
    expect(replayed.identical).toBe(false);
    expect(replayed.differences).toEqual(expect.arrayContaining(['digest', 'sent']));
    await expect(replayContext(log, session.id, { step: 9 })).rejects.toThrow('step 9 has no recorded context.projected');
    await log.close();
  });
});

// forkSession and memoryAt given a seq and a step together refuse the pair by name.
describe('a seq and a step together', () => {
  it('are refused by name, before anything is read or written', async () => {
    const log = await openMemoryLog();
    await log.append('s', [{ type: 'user.input', items: [{ type: 'message', role: 'user', content: 'hi' }] }]);
    await expect(memoryAt(log, 's', { seq: 1, step: 1 } as never)).rejects.toMatchObject({ code: 'INVALID_OPTIONS', message: expect.stringMatching(/not both/) });
    await expect(forkSession(log, 's', { atSeq: 1, afterStep: 1 } as never, 'f')).rejects.toMatchObject({ code: 'INVALID_OPTIONS', message: expect.stringMatching(/not both/) });
    expect(await log.head('f')).toBe(0);
  });
});
