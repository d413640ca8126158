// Fault "events too large to serialise", the V8 string limit itself: sealing threw outside any try, so the process exited or the batch never settled.
import { describe, expect, it, vi } from 'vitest';
import { isInvalidEventError, type InvalidEventError } from '../../src/events/index.js';
import { openMemoryLog } from '../../src/log/index.js';
import { say, says } from './support.js';

// Building a real 512 MiB string would take gigabytes on a shared machine; this seals as V8 does past its limit.
vi.mock('../../src/log/hash-chain.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/log/hash-chain.js')>();
  return {
    ...original,
    sealEvent: (prevHash: string, unhashed: Record<string, unknown>) => {
      if (JSON.stringify(unhashed['items'] ?? '').includes('PAST-V8-LIMIT')) throw new RangeError('Invalid string length');
      return original.sealEvent(prevHash, unhashed);
    },
    sealEventAs: (version: 1 | 2, prevHash: string, unhashed: Record<string, unknown>) => {
      if (JSON.stringify(unhashed['items'] ?? '').includes('PAST-V8-LIMIT')) throw new RangeError('Invalid string length');
      return original.sealEventAs(version, prevHash, unhashed);
    },
  };
});

describe('an event whose serialisation throws', () => {
  it('rejects that append alone with InvalidEventError; the others of the group settle and are written; nothing is left unhandled', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => {
      unhandled.push(reason);
    };
    process.on('unhandledRejection', onUnhandled);
    try {
      const log = await openMemoryLog();
      const settled = await Promise.race([
        Promise.allSettled([
          log.append('v8', says('a', 1)),
          log.append('v8', [say('ok'), say('PAST-V8-LIMIT')]),
          log.append('v8', says('b', 2)),
        ]),
        new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 5000)),
      ]);
      expect(settled).not.toBe('hung');
      const [a, bad, b] = settled as PromiseSettledResult<readonly { seq: number }[]>[];
      expect(a).toMatchObject({ status: 'fulfilled' });
      expect(b).toMatchObject({ status: 'fulfilled' });
      expect((b as PromiseFulfilledResult<readonly { seq: number }[]>).value.map((e) => e.seq)).toEqual([2, 3]);
      const error = (bad as PromiseRejectedResult).reason as InvalidEventError;
      expect(isInvalidEventError(error)).toBe(true);
      expect(error.index).toBe(1);
      expect(error.message).toMatch(/session "v8".*cannot be serialised \(Invalid string length\)/);
      expect(await log.verify('v8')).toEqual({ valid: true, eventCount: 3, firstBrokenSeq: null });
      await log.close();
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
