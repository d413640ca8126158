// A keyed chain (chainKey) with sessions: opening and resuming check the chain with the log's key, so a keyed log resumes.
import { describe, expect, it } from 'vitest';
import { ClassicLevel } from 'classic-level';
import { chainHash, openLevelLog } from '../../src/log/index.js';
import { eventKey, headKey } from '../../src/log/keys.js';
import { isSessionIntegrityError, openSession } from '../../src/session/index.js';
import { rejectionOf, tempDir } from './support.js';

const KEY = 'a key of thirty-two characters!!';

describe('keyed chain and sessions', () => {
  it('a session on a keyed log resumes (from a checkpoint and by a full fold), and a rewrite without the key stops the resume', async () => {
    const { dir, remove } = await tempDir('keyed-session');
    try {
      let log = await openLevelLog(dir, { chainKey: KEY });
      const session = await openSession(log, { id: 'k', checkpointEvery: 4 });
      for (let i = 0; i < 10; i++) await session.memory.addUserInput(`message ${i}`);
      const items = session.memory.getItems();
      await log.close();

      log = await openLevelLog(dir, { chainKey: KEY });
      const resumed = await openSession(log, { id: 'k' });
      expect(resumed.memory.getItems()).toEqual(items);
      expect(resumed.opened.from).not.toBe('full-fold');
      await log.close();

      // rewrite event 2 and re-seal the rest with plain sha256, as someone without the key would
      const db = new ClassicLevel<string, string>(dir, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
      await db.open();
      let prevHash = JSON.parse((await db.get(eventKey('k', 1)))!).hash as string;
      let seq = 2;
      for (;;) {
        const text = await db.get(eventKey('k', seq));
        if (text === undefined) break;
        const event = JSON.parse(text) as Record<string, unknown>;
        if (seq === 2 && event['type'] === 'user.input') (event['items'] as { content: string }[])[0]!.content = 'forged';
        event['prevHash'] = prevHash;
        delete event['hash'];
        event['hash'] = chainHash(prevHash, event);
        await db.put(eventKey('k', seq), JSON.stringify(event));
        prevHash = event['hash'] as string;
        seq += 1;
      }
      await db.put(headKey('k'), JSON.stringify({ seq: seq - 1, hash: prevHash }));
      for await (const key of db.keys({ gte: 'c', lt: 'd' })) await db.del(key); // no checkpoint to start from
      await db.close();

      log = await openLevelLog(dir, { chainKey: KEY });
      const error = await rejectionOf(openSession(log, { id: 'k' }));
      expect(isSessionIntegrityError(error)).toBe(true);
      await log.close();
    } finally {
      await remove();
    }
  });
});
