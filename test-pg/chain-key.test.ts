// The keyed chain (chainKey, HMAC-SHA256) on PostgreSQL: the same hashes as LevelDB, a round trip, and a wrong key failing verify.
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { chainHash, copySession, deterministicSalts, isChainKeyMismatchError, isChainBrokenError, isStoredChainError, openMemoryLog, type ChainBrokenError, type SessionEventLog } from '../src/log/index.js';
import { encodeSessionId } from '../src/log/keys.js';
import { openPostgresLog, type PostgresLogOptions } from '../src/postgres/index.js';
import { isSessionIntegrityError, openSession } from '../src/session/index.js';
import { collect, inputs, rejectionOf, tickingClock, toolResult } from '../src/testing/log-contract.js';
import { PG_URL, SKIP_MESSAGE, createSchema } from './support.js';

const KEY = 'a key of thirty-two characters!!';
const OTHER_KEY = new Uint8Array(32).fill(7);

if (PG_URL) {
  const url = PG_URL;
  describe('PostgreSQL log with chainKey', () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });
    const open = async (schema: string, options: Omit<PostgresLogOptions, 'schema'> = {}): Promise<SessionEventLog> => {
      const log = await openPostgresLog({ connectionString: url }, { ...options, schema });
      cleanups.push(() => log.close());
      return log;
    };
    const fresh = async (): Promise<string> => {
      const { schema, drop } = await createSchema(url);
      cleanups.push(drop);
      return schema;
    };

    it('writes the keyed hashes LevelDB writes, verifies with the key after reopening, and continues the chain', async () => {
      const schema = await fresh();
      // the same salts everywhere, so the stored bytes can be compared (the default salts are random)
      const keyed = await open(schema, { chainKey: KEY, clock: tickingClock().clock, salt: deterministicSalts('keyed') });
      const memory = await openMemoryLog({ chainKey: KEY, clock: tickingClock().clock, salt: deterministicSalts('keyed') });
      cleanups.push(() => memory.close());
      const unkeyed = await openMemoryLog({ clock: tickingClock().clock, salt: deterministicSalts('keyed') });
      cleanups.push(() => unkeyed.close());
      const batches = [inputs('a', 3), [toolResult('c1', 'out'), { type: 'memory.cleared' as const }], inputs('b', 1)];
      const written = [];
      for (const batch of batches) {
        written.push(...(await keyed.append('s\u0000', batch)));
        await memory.append('s\u0000', batch);
        await unkeyed.append('s\u0000', batch);
      }
      // byte for byte what the LevelDB code writes with the same key; none of it an unkeyed hash
      expect(await collect(keyed.readStored('s\u0000'))).toEqual(await collect(memory.readStored('s\u0000')));
      const plain = await collect(unkeyed.read('s\u0000'));
      for (const [i, event] of written.entries()) {
        expect(event.hash).not.toBe(plain[i]?.hash);
        expect(chainHash(event.prevHash, event as unknown as Record<string, unknown>, KEY)).toBe(event.hash);
      }
      expect(await collect(keyed.read('s\u0000', { verify: true }))).toEqual(written);
      expect(await keyed.verify('s\u0000', { anchors: [await keyed.anchor('s\u0000')] })).toEqual({ valid: true, eventCount: 6, firstBrokenSeq: null });

      const again = await open(schema, { chainKey: Buffer.from(KEY) });
      expect(await again.verify('s\u0000')).toEqual({ valid: true, eventCount: 6, firstBrokenSeq: null });
      const [next] = await again.append('s\u0000', inputs('c', 1), { expectedSeq: 6 });
      expect(next?.prevHash).toBe(written[5]?.hash);
      expect(chainHash(next?.prevHash ?? '', next as unknown as Record<string, unknown>, KEY)).toBe(next?.hash);
      expect(await again.verify('s\u0000')).toEqual({ valid: true, eventCount: 7, firstBrokenSeq: null });
    });

    it('an append without the key, with another key, or with a key onto an unkeyed session is refused by name; nothing is written', async () => {
      const schema = await fresh();
      const keyed = await open(schema, { chainKey: KEY });
      await keyed.append('k', inputs('a', 2));
      await keyed.append('plain', []);
      const bare = await open(schema);
      await bare.append('plain', inputs('p', 1));
      const other = await open(schema, { chainKey: OTHER_KEY });
      for (const [log, id, mismatch] of [
        [bare, 'k', 'keyed-session-no-key'],
        [other, 'k', 'other-key'],
        [keyed, 'plain', 'unkeyed-session-with-key'],
      ] as const) {
        const error = await rejectionOf(log.append(id, inputs('x', 1)));
        expect(isChainKeyMismatchError(error), String(error)).toBe(true);
        expect(error).toMatchObject({ mismatch });
      }
      expect(await keyed.head('k')).toBe(2);
      expect(await bare.head('plain')).toBe(1);
      expect(await keyed.verify('k')).toMatchObject({ valid: true, eventCount: 2 });
    });

    it('with another key or none, verify and read with verify fail at the first event; a plain read still works', async () => {
      const schema = await fresh();
      const keyed = await open(schema, { chainKey: KEY });
      const written = await keyed.append('s', inputs('x', 4));
      for (const options of [{ chainKey: OTHER_KEY }, { chainKey: `${KEY}.` }, {}]) {
        const wrong = await open(schema, options);
        const result = await wrong.verify('s');
        expect(result).toMatchObject({ valid: false, firstBrokenSeq: 1, eventCount: 1 });
        expect(result.problem).toMatch(options.chainKey === undefined ? /does not match its hash/ : /keyed hash/);
        const error = await rejectionOf(collect(wrong.read('s', { verify: true })));
        expect(isChainBrokenError(error)).toBe(true);
        expect((error as ChainBrokenError).seq).toBe(1);
        expect(await collect(wrong.read('s'))).toEqual(written);
      }
      expect((await keyed.verify('s')).valid).toBe(true);
    });

    it('importStored checks texts with the key: the same key copies, another key or none is refused and nothing is written', async () => {
      const source = await openMemoryLog({ chainKey: KEY });
      cleanups.push(() => source.close());
      await source.append('s', inputs('x', 5));
      const texts = await collect(source.readStored('s'));

      const same = await open(await fresh(), { chainKey: KEY });
      expect(await copySession(source, same, 's', { batchSize: 2 })).toMatchObject({ copied: 5, head: 5 });
      expect(await collect(same.readStored('s'))).toEqual(texts);
      expect(await same.verify('s')).toEqual({ valid: true, eventCount: 5, firstBrokenSeq: null });

      const other = await open(await fresh(), { chainKey: OTHER_KEY });
      const refused = await rejectionOf(other.importStored('s', texts));
      expect(isStoredChainError(refused)).toBe(true);
      expect((refused as Error).message).toMatch(/keyed hash/);
      expect(await other.head('s')).toBe(0);

      // unkeyed texts into a keyed log: refused the same way
      const unkeyed = await openMemoryLog();
      cleanups.push(() => unkeyed.close());
      await unkeyed.append('s', inputs('x', 2));
      const plain = await rejectionOf(same.importStored('u', await collect(unkeyed.readStored('s'))));
      expect(isStoredChainError(plain)).toBe(true);
      expect(await same.head('u')).toBe(0);
    });

    it('a session on a keyed log resumes; a rewrite re-sealed without the key stops the resume', async () => {
      const schema = await fresh();
      let log = await open(schema, { chainKey: KEY });
      const session = await openSession(log, { id: 'k', checkpointEvery: 4 });
      for (let i = 0; i < 10; i++) await session.memory.addUserInput(`message ${i}`);
      const items = session.memory.getItems();
      log = await open(schema, { chainKey: KEY });
      expect((await openSession(log, { id: 'k' })).memory.getItems()).toEqual(items);

      // rewrite event 2 and re-seal the rest with plain sha256, as someone without the key would
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const key = encodeSessionId('k');
        const rows = (await client.query<{ seq: string; stored: string }>(`SELECT seq, stored FROM "${schema}".events WHERE session_key = $1 ORDER BY seq`, [key])).rows;
        let prevHash = (JSON.parse(rows[0]?.stored ?? '{}') as { hash: string }).hash;
        for (const row of rows.slice(1)) {
          const event = JSON.parse(row.stored) as Record<string, unknown>;
          if (row.seq === '2' && event['type'] === 'user.input') (event['items'] as { content: string }[])[0]!.content = 'forged';
          event['prevHash'] = prevHash;
          delete event['hash'];
          event['hash'] = chainHash(prevHash, event);
          await client.query(`UPDATE "${schema}".events SET stored = $3, prev_hash = $4, hash = $5 WHERE session_key = $1 AND seq = $2`, [key, row.seq, JSON.stringify(event), prevHash, event['hash']]);
          prevHash = event['hash'] as string;
        }
        await client.query(`UPDATE "${schema}".sessions SET head_hash = $2 WHERE session_key = $1`, [key, prevHash]);
        await client.query(`DELETE FROM "${schema}".checkpoints WHERE session_key = $1`, [key]); // no checkpoint to start from
      } finally {
        await client.end();
      }
      log = await open(schema, { chainKey: KEY });
      expect(isSessionIntegrityError(await rejectionOf(openSession(log, { id: 'k' })))).toBe(true);
      expect(await log.verify('k')).toMatchObject({ valid: false, firstBrokenSeq: 2 });
    });
  });
} else {
  describe.skip(SKIP_MESSAGE, () => {
    it('needs CONTEXT_LEDGER_PG_URL', () => {});
  });
}
