// The next group is sealed while the store writes the current one: used only if that write succeeds, topped up with what was queued meanwhile.
import { MemoryLevel } from 'memory-level';
import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../src/events/index.js';
import { createStoreLog, type SessionEventLog, type StringLevel } from '../../src/log/index.js';
import { collectAll, rejectionOf, says } from './support.js';

interface Gate {
  /** Sizes of the writes the store was given (1 for a put), in order. */
  readonly writes: number[];
  /** Makes the next write fail. */
  failNext(): void;
  /** Holds writes until `release` is called. */
  hold(): void;
  release(): void;
  /** Resolves once `count` writes have been issued. */
  issued(count: number): Promise<void>;
}

/** A memory log whose writes can be held and made to fail; the clock counts its calls. */
const gatedLog = (maxGroup: number): { log: SessionEventLog; gate: Gate; clockCalls: () => number } => {
  const db = new MemoryLevel<string, string>({ keyEncoding: 'utf8', valueEncoding: 'utf8' });
  const writes: number[] = [];
  let failing = false;
  let held: Promise<void> | undefined;
  let releaseHeld: (() => void) | undefined;
  const waiters: { count: number; resolve: () => void }[] = [];
  const wrap =
    (real: (...args: unknown[]) => Promise<void>, size: (args: unknown[]) => number) =>
    async (...args: unknown[]): Promise<void> => {
      writes.push(size(args));
      for (const waiter of waiters.filter((w) => writes.length >= w.count)) waiter.resolve();
      const fail = failing;
      failing = false;
      if (held) await held;
      if (fail) throw Object.assign(new Error('injected write failure'), { code: 'LEVEL_IO_ERROR' });
      return real(...args);
    };
  (db as unknown as { put: unknown }).put = wrap(db.put.bind(db) as (...args: unknown[]) => Promise<void>, () => 1);
  (db as unknown as { batch: unknown }).batch = wrap(db.batch.bind(db) as (...args: unknown[]) => Promise<void>, (args) => (args[0] as unknown[]).length);
  let calls = 0;
  const log = createStoreLog(db as unknown as StringLevel, {
    maxGroup,
    clock: () => {
      calls += 1;
      return new Date(Date.UTC(2025, 0, 1, 0, 0, calls)).toISOString();
    },
  });
  const gate: Gate = {
    writes,
    failNext: () => {
      failing = true;
    },
    hold: () => {
      held = new Promise((resolve) => {
        releaseHeld = resolve;
      });
    },
    release: () => {
      held = undefined;
      releaseHeld?.();
    },
    issued: (count) => new Promise((resolve) => (writes.length >= count ? resolve() : waiters.push({ count, resolve }))),
  };
  return { log, gate, clockCalls: () => calls };
};

const seqsOf = (events: readonly SessionEvent[]): number[] => events.map((e) => e.seq);

describe('group commit with the next group sealed during the write', () => {
  it('seals the next group while the current one is being written, and writes it after', async () => {
    const { log, gate, clockCalls } = gatedLog(2);
    gate.hold();
    const appends = [log.append('s', says('a', 1)), log.append('s', says('b', 1)), log.append('s', says('c', 1))];
    await gate.issued(1);
    expect(gate.writes).toEqual([3]); // a, b and the head record
    expect(clockCalls()).toBe(3); // c is sealed already, while that write is held
    gate.release();
    expect((await Promise.all(appends)).map(seqsOf)).toEqual([[1], [2], [3]]);
    expect(gate.writes).toEqual([3, 1]);
    expect(await log.verify('s')).toEqual({ valid: true, eventCount: 3, firstBrokenSeq: null });
  });

  it('tops the sealed group up with appends queued during the write: one batch, as without sealing ahead', async () => {
    const { log, gate } = gatedLog(2);
    gate.hold();
    const first = [log.append('s', says('a', 1)), log.append('s', says('b', 1)), log.append('s', says('c', 1))];
    await gate.issued(1);
    const late = log.append('s', says('d', 1)); // queued while a and b are written, after c was sealed
    gate.release();
    expect((await Promise.all([...first, late])).map(seqsOf)).toEqual([[1], [2], [3], [4]]);
    expect(gate.writes).toEqual([3, 2]); // c and d together
    expect((await collectAll(log.read('s', { verify: true }))).map((e) => (e as { items?: unknown }).items)).toEqual(
      ['a', 'b', 'c', 'd'].map((tag) => [{ type: 'message', role: 'user', content: `${tag}.0` }]),
    );
  });

  it('a failed write rejects its own appends only; the group sealed onto it is sealed again on the stored head and written', async () => {
    const { log, gate } = gatedLog(1);
    await log.append('s', says('base', 1));
    gate.hold();
    gate.failNext();
    const lost = log.append('s', says('lost', 1));
    // expects the failing write to have happened: sealed ahead onto it, it would be accepted; once it fails, a conflict
    const dependent = log.append('s', says('dependent', 1), { expectedSeq: 2 });
    // expects the head as it is now: it conflicts with the failing write, but that write fails
    const kept = log.append('s', says('kept', 1), { expectedSeq: 1 });
    const plain = log.append('s', says('plain', 1));
    await gate.issued(2);
    gate.release();
    expect(await rejectionOf(lost)).toMatchObject({ name: 'LogWriteError' });
    expect(await rejectionOf(dependent)).toMatchObject({ name: 'ExpectedSeqConflictError', expectedSeq: 2, actualSeq: 1 });
    expect(seqsOf(await kept)).toEqual([2]);
    expect(seqsOf(await plain)).toEqual([3]);
    const stored = await collectAll(log.read('s', { verify: true }));
    expect(stored.map((e) => (e as { items?: unknown[] }).items?.[0])).toEqual(
      ['base', 'kept', 'plain'].map((tag) => ({ type: 'message', role: 'user', content: `${tag}.0` })),
    );
    expect(await log.verify('s')).toEqual({ valid: true, eventCount: 3, firstBrokenSeq: null });
  });

  it('a failed first batch leaves no head record; the group sealed onto it writes the record with its own events', async () => {
    const { log, gate } = gatedLog(1);
    gate.hold();
    gate.failNext();
    const lost = log.append('s', says('lost', 2));
    const next = log.append('s', says('next', 1));
    await gate.issued(1);
    gate.release();
    expect(await rejectionOf(lost)).toMatchObject({ name: 'LogWriteError' });
    expect(seqsOf(await next)).toEqual([1]);
    expect(gate.writes).toEqual([3, 2]); // the failed batch, then the event and the record
    expect(await log.verify('s')).toEqual({ valid: true, eventCount: 1, firstBrokenSeq: null });
    expect(await collectAll(log.sessions())).toEqual(['s']);
  });
});
