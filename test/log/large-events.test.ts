// Fault "events too large to serialise": a huge event threw inside the append queue; now it is an InvalidEventError for that append alone.
import { MemoryLevel } from 'memory-level';
import { describe, expect, it } from 'vitest';
import { isInvalidOptionsError } from '../../src/base/errors.js';
import { isInvalidEventError, type InvalidEventError, type NewSessionEvent } from '../../src/events/index.js';
import { createStoreLog, isLogWriteError, openMemoryLog, type StringLevel } from '../../src/log/index.js';
import { collectAll, rejectionOf, say, says, stepClock } from './support.js';

const bigInput = (chars: number, char = 'x'): NewSessionEvent => say(char.repeat(chars));

describe('events too large to serialise', () => {
  it('rejects an event past maxEventBytes as InvalidEventError naming session and index; the other appends of the group are written', async () => {
    const log = await openMemoryLog({ clock: stepClock(), maxEventBytes: 4096 });
    // three appends in one tick share one group commit
    const [before, huge, after] = await Promise.allSettled([
      log.append('big', says('before', 2)),
      log.append('big', [say('fine'), bigInput(5000)]),
      log.append('big', says('after', 1)),
    ]);
    expect(before.status).toBe('fulfilled');
    expect(after.status).toBe('fulfilled');
    expect(huge.status).toBe('rejected');
    const error = (huge as PromiseRejectedResult).reason as InvalidEventError;
    expect(isInvalidEventError(error)).toBe(true);
    expect(error.sessionId).toBe('big');
    expect(error.index).toBe(1);
    expect(error.message).toMatch(/invalid event #1 \(user\.input\) for session "big"/);
    expect(error.message).toMatch(/more than maxEventBytes \(4096\)/);
    expect((after as PromiseFulfilledResult<readonly { seq: number }[]>).value.map((e) => e.seq)).toEqual([3]);
    expect(await log.verify('big')).toEqual({ valid: true, eventCount: 3, firstBrokenSeq: null });
    expect((await collectAll(log.read('big'))).map((e) => e.seq)).toEqual([1, 2, 3]);
    await log.close();
  });

  it('counts UTF-8 bytes, not UTF-16 units', async () => {
    const log = await openMemoryLog({ maxEventBytes: 3000 });
    // 1,000 '€' are 1,000 UTF-16 units but 3,000 UTF-8 bytes
    const error = await rejectionOf(log.append('s', [bigInput(1000, '€')]));
    expect(isInvalidEventError(error)).toBe(true);
    expect((error as Error).message).toMatch(/stored size is \d+ bytes/);
    await log.append('s', [bigInput(900)]);
    expect(await log.head('s')).toBe(1);
    await log.close();
  });

  it('has a 64 MiB default', async () => {
    const log = await openMemoryLog();
    // 22.5 M three-byte characters: 67.5 MB of UTF-8, past 64 MiB, while the text is shorter than 64 Mi units
    const error = await rejectionOf(log.append('s', [bigInput(22_500_000, '€')]));
    expect(isInvalidEventError(error)).toBe(true);
    expect((error as Error).message).toMatch(/more than maxEventBytes \(67108864\)/);
    expect(await log.head('s')).toBe(0);
    await log.close();
  });

  it('refuses a maxEventBytes that is not a positive integer', async () => {
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(isInvalidOptionsError(await rejectionOf(openMemoryLog({ maxEventBytes: bad })))).toBe(true);
    }
  });
});

describe('a batch the store fails to write', () => {
  it('rejects exactly the appends of that batch with LogWriteError, and the next appends continue the chain', async () => {
    const db = new MemoryLevel<string, string>({ keyEncoding: 'utf8', valueEncoding: 'utf8' });
    await db.open();
    const batch = db.batch.bind(db) as (...args: unknown[]) => Promise<void>;
    let failNext = false;
    (db as unknown as { batch: unknown }).batch = (...args: unknown[]) => {
      if (failNext) {
        failNext = false;
        throw new Error('disk on fire'); // thrown synchronously, not even a rejected promise
      }
      return batch(...args);
    };
    const log = createStoreLog(db as unknown as StringLevel);
    await log.append('w', says('a', 2));
    failNext = true;
    const results = await Promise.allSettled([log.append('w', says('b', 1)), log.append('w', says('c', 2))]);
    for (const r of results) {
      expect(r.status).toBe('rejected');
      expect(isLogWriteError((r as PromiseRejectedResult).reason)).toBe(true);
      expect(((r as PromiseRejectedResult).reason as Error).message).toMatch(/session "w".*disk on fire/);
    }
    const next = await log.append('w', says('d', 1), { expectedSeq: 2 });
    expect(next.map((e) => e.seq)).toEqual([3]);
    expect(await log.verify('w')).toEqual({ valid: true, eventCount: 3, firstBrokenSeq: null });
    await log.close();
  });
});
