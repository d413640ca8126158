// A keyed session reopened without its key (or with another) refuses appends by name, and writes nothing.
import { ClassicLevel } from 'classic-level';
import { describe, expect, it } from 'vitest';
import { chainKeyId, isChainKeyMismatchError, openLevelLog, type ChainKeyMismatchError } from '../../src/log/index.js';
import { headKey } from '../../src/log/keys.js';
import { rejectionOf, says, tempDir } from './support.js';

const KEY = 'a key of thirty-two characters!!';
const OTHER = new Uint8Array(32).fill(7);

describe('appending to a keyed session', () => {
  it('without the key, with another key, or with a key onto an unkeyed session: refused by name, nothing written', async () => {
    const { dir, remove } = await tempDir('keyed-append');
    try {
      let log = await openLevelLog(dir, { chainKey: KEY });
      await log.append('k', says('a', 3));
      await log.close();

      // The head record says the session is keyed, by the key's id, not the key.
      const db = new ClassicLevel<string, string>(dir, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
      await db.open();
      const record = JSON.parse((await db.get(headKey('k')))!) as Record<string, unknown>;
      await db.close();
      expect(record).toMatchObject({ seq: 3, keyId: chainKeyId(KEY) });
      expect(JSON.stringify(record)).not.toContain(KEY);

      for (const [options, mismatch] of [
        [{}, 'keyed-session-no-key'],
        [{ chainKey: OTHER }, 'other-key'],
      ] as const) {
        log = await openLevelLog(dir, options);
        const error = (await rejectionOf(log.append('k', says('b', 1)))) as ChainKeyMismatchError;
        expect(isChainKeyMismatchError(error)).toBe(true);
        expect(error).toMatchObject({ sessionId: 'k', seq: 3, mismatch });
        expect(await log.head('k')).toBe(3);
        // verify without the right key says why instead of a bare broken chain
        const verdict = await log.verify('k');
        expect(verdict.valid).toBe(false);
        expect(verdict.problem).toMatch(/the session is keyed \(chain key id [0-9a-f]{16}\)/);
        expect(verdict).toMatchObject({ firstBrokenSeq: 1, keyed: { keyId: chainKeyId(KEY), mismatch } });
        await log.close();
      }

      log = await openLevelLog(dir, { chainKey: KEY });
      await log.append('k', says('c', 1));
      expect(await log.verify('k')).toMatchObject({ valid: true, eventCount: 4 });
      await log.append('plain-by-mistake', says('p', 1));
      await log.close();

      log = await openLevelLog(dir);
      await log.append('plain', says('p', 2));
      await log.close();
      log = await openLevelLog(dir, { chainKey: KEY });
      const error = (await rejectionOf(log.append('plain', says('q', 1)))) as ChainKeyMismatchError;
      expect(error).toMatchObject({ code: 'CHAIN_KEY_MISMATCH', mismatch: 'unkeyed-session-with-key' });
      expect(await log.head('plain')).toBe(2);
      await log.close();
    } finally {
      await remove();
    }
  });
});
