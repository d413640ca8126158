// forkSession: the prefix copied with its seqs and ids, forkedFrom recorded, a checkpoint taken; the fork continues lawfully and verifies.
import { describe, expect, it } from 'vitest';
import {
  defaultUpcasters,
  forkSession,
  memoryAt,
  openMemoryLog,
  replaySession,
  type SessionEvent,
} from '../../src/index.js';
import { checkSessionLaws } from '../../src/testing/runtime-laws.js';
import { countingLog, plain, readAll, replayAgent, scriptedTurns } from './support.js';

describe('forkSession', () => {
  it('after a step: same state at that seq, forkedFrom recorded, resumes from its checkpoint, continues lawfully and verifies', async () => {
    const log = await openMemoryLog();
    const source = await replayAgent(log, scriptedTurns(18)).newSession();
    await source.run('go');
    const events = await readAll(log, source.id);
    const stepEnd = events.find((e) => e.type === 'step.ended' && e.step === 9)!;

    const fork = await forkSession(log, source.id, { afterStep: 9 }, 'fork-1');
    expect(fork.forkedFrom).toEqual({ sessionId: source.id, seq: stepEnd.seq, hash: stepEnd.hash });
    expect(fork.copied).toBe(stepEnd.seq);
    const forked = await readAll(log, 'fork-1');
    expect(forked[0]).toMatchObject({ type: 'session.started', v: 2, forkedFrom: fork.forkedFrom });
    expect(forked.at(-1)?.type).toBe('checkpoint.taken');
    // payloads copied with their seqs; new hashes
    // a fork's events get their own content salts (so their digests differ too)
    const strip = ({ at: _a, hash: _h, prevHash: _p, sessionId: _s, contentDigest: _d, contentSalt: _c, ...rest }: SessionEvent) => rest;
    expect(forked.slice(1, stepEnd.seq).map(strip)).toEqual(events.slice(1, stepEnd.seq).map(strip));
    expect(forked[5]!.hash).not.toBe(events[5]!.hash);
    // its state equals the source's at that seq
    expect(plain((await memoryAt(log, 'fork-1', { seq: stepEnd.seq })).state)).toEqual(plain((await memoryAt(log, source.id, { seq: stepEnd.seq })).state));
    expect((await log.verify('fork-1')).valid).toBe(true);

    // resumed by an agent (from the fork's checkpoint), it continues with another model and stays lawful
    const { log: counted, counts } = countingLog(log);
    const other = replayAgent(counted, scriptedTurns(4, 'f'));
    const resumed = await other.resumeSession('fork-1');
    expect(resumed.session.opened.from).toEqual({ checkpointSeq: fork.headSeq });
    expect(counts.eventsRead).toBeLessThan(5);
    expect(resumed.lastStep).toBe(9);
    expect(resumed.interruptedRunId).toBeDefined();
    await resumed.run('a different ending');
    const after = await readAll(log, 'fork-1');
    expect(checkSessionLaws(after)).toEqual([]);
    expect(after.filter((e) => e.type === 'step.started').at(-1)).toMatchObject({ step: 14 });
    expect((await log.verify('fork-1')).valid).toBe(true);
    expect(await replaySession(log, 'fork-1')).toMatchObject({ identical: true });
    // the source is untouched
    expect(await readAll(log, source.id)).toEqual(events);
    await log.close();
  });

  it('at a seq, and refuses what it cannot do', async () => {
    const log = await openMemoryLog();
    const source = await replayAgent(log, scriptedTurns(3)).newSession();
    await source.run('go');
    const fork = await forkSession(log, source.id, { atSeq: 6 }, 'f2');
    expect(fork).toMatchObject({ copied: 6, headSeq: 7 });
    await expect(forkSession(log, source.id, { atSeq: 6 }, 'f2')).rejects.toThrow('already exists');
    await expect(forkSession(log, source.id, { atSeq: 999 }, 'f3')).rejects.toThrow('past the head');
    await expect(forkSession(log, source.id, { afterStep: 99 }, 'f3')).rejects.toThrow('step 99 never ended');
    await expect(forkSession(log, 'nope', { atSeq: 1 }, 'f3')).rejects.toThrow('no such session');
    await expect(forkSession(log, source.id, { atSeq: 0 }, 'f3')).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
    await expect(forkSession(log, source.id, { atSeq: 2 }, source.id)).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
    await log.append('plain', [{ type: 'user.input', items: [] }]);
    await expect(forkSession(log, 'plain', { atSeq: 1 }, 'f4')).rejects.toThrow('session.started');
    expect(await log.head('f3')).toBe(0);
    await log.close();
  });

  it('session.started v1 reads back as v2 without forkedFrom (upcaster)', () => {
    const v1 = { sessionId: 's', seq: 1, at: 'x', v: 1, prevHash: '0', hash: 'h', type: 'session.started', metadata: { a: 1 } };
    expect(defaultUpcasters.upcast(v1)).toEqual({ ...v1, v: 2 });
  });
});
