// A store error while reading the head an append chains onto is a LogWriteError that says nothing was written, not the store's raw error.
import { ClassicLevel } from 'classic-level';
import { describe, expect, it } from 'vitest';
import { createStoreLog, isLogWriteError, type StringLevel } from '../../src/log/index.js';
import { collectAll, rejectionOf, says, tempDir } from './support.js';

describe('a failed head read before an append', () => {
  it('rejects the appends with LogWriteError, written: false; the next append reads the head again and continues the chain', async () => {
    const { dir, remove } = await tempDir('head-read');
    try {
      const db = new ClassicLevel<string, string>(dir, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
      await db.open();
      await createStoreLog(db as unknown as StringLevel).append('s', says('before', 2)); // another handle wrote these
      const log = createStoreLog(db as unknown as StringLevel);
      // the next iterator (the head's reverse seek) fails once, as a disk read error would
      const realIterator = db.iterator.bind(db);
      let failNext = true;
      (db as unknown as { iterator: (...args: unknown[]) => unknown }).iterator = (...args: unknown[]) => {
        const iterator = realIterator(...(args as Parameters<typeof realIterator>));
        if (!failNext) return iterator;
        failNext = false;
        const failing = Object.create(iterator) as typeof iterator;
        failing.all = () => Promise.reject(Object.assign(new Error('IO error: read failed'), { code: 'LEVEL_IO_ERROR' }));
        return failing;
      };
      const results = await Promise.allSettled([log.append('s', says('x', 1)), log.append('s', says('y', 1))]);
      for (const result of results) {
        const error = result.status === 'rejected' ? result.reason : new Error('resolved');
        expect(isLogWriteError(error), String(error)).toBe(true);
        expect(error).toMatchObject({ sessionId: 's', written: false });
        expect((error as Error).message).toMatch(/\(nothing was written\): IO error: read failed/);
      }
      expect((await log.append('s', says('after', 1)))[0]?.seq).toBe(3);
      expect((await collectAll(log.read('s'))).map((e) => e.seq)).toEqual([1, 2, 3]);
      expect(await log.verify('s')).toEqual({ valid: true, eventCount: 3, firstBrokenSeq: null });
      await log.close();
    } finally {
      await remove();
    }
  });
});
