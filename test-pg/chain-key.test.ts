// The keyed chain (chainKey, HMAC-SHA256) on PostgreSQL: the same hashes as LevelDB, a round trip, and a wrong key failing verify.
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { chainHash, chainKeyId, copySession, deterministicSalts, isChainKeyMismatchError, isChainBrokenError, isStoredChainError, openMemoryLog, type ChainBrokenError, type SessionEventLog } from '../src/log/index.js';
import { decodeSessionId, encodeSessionId } from '../src/log/keys.js';
import { openPostgresLog, type PostgresLogOptions } from '../src/postgres/index.js';
import { isSessionIntegrityError, openSession } from '../src/session/index.js';
import { collect, inputs, rejectionOf, tickingClock, toolResult } from '../src/testing/log-contract.js';
import { PG_URL, SKIP_MESSAGE, createSchema, freshSchemaName } from './support.js';

const KEY = 'a key of thirty-two characters!!';
const bin = join(resolve(fileURLToPath(import.meta.url), '../..'), 'bin', 'context-ledger.js');

/** Runs the CLI in a child process. */
const cliRun = (args: readonly string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> =>
  new Promise((done, fail) => {
    const child = spawn(process.execPath, [bin, ...args], { env: { ...process.env, FORCE_COLOR: '0', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });

/** One statement on its own connection. */
const adminQuery = async (url: string, text: string, values: unknown[] = []): Promise<pg.QueryResultRow[]> => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows;
  } finally {
    await client.end();
  }
};

/** session id → key_id of every head row in the schema. */
const sessionRows = async (url: string, schema: string): Promise<Map<string, string | null>> =>
  new Map((await adminQuery(url, `SELECT session_key, key_id FROM "${schema}".sessions`)).map((r) => [decodeSessionId(r['session_key'] as string), r['key_id'] as string | null]));
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

    it('a keyed session says so in its head row (key_id: the chainKeyId, never the key), and verify without the key or with another names it', async () => {
      const schema = await fresh();
      const keyed = await open(schema, { chainKey: KEY });
      await keyed.append('k', inputs('a', 3));
      await keyed.append('k', inputs('b', 1));
      const bare = await open(schema);
      await bare.append('plain', inputs('p', 2));
      // a session copied into a keyed log is keyed too
      const source = await openMemoryLog({ chainKey: KEY });
      cleanups.push(() => source.close());
      await source.append('copied', inputs('c', 2));
      await copySession(source, keyed, 'copied');
      const rows = await sessionRows(url, schema);
      expect(rows.get('k')).toBe(chainKeyId(KEY));
      expect(rows.get('copied')).toBe(chainKeyId(KEY));
      expect(rows.get('plain')).toBe(null);
      const everything = JSON.stringify([...rows]);
      expect(everything).not.toContain(KEY);

      const withoutKey = await bare.verify('k');
      expect(withoutKey).toMatchObject({ valid: false, firstBrokenSeq: 1, keyed: { keyId: chainKeyId(KEY), mismatch: 'keyed-session-no-key' } });
      expect(withoutKey.problem).toMatch(/the session is keyed \(chain key id [0-9a-f]{16}\) and this log was opened without a chain key/);
      const other = await open(schema, { chainKey: OTHER_KEY });
      expect(await other.verify('k')).toMatchObject({ valid: false, firstBrokenSeq: 1, keyed: { keyId: chainKeyId(KEY), mismatch: 'other-key' } });
      expect((await other.verify('k')).problem).toMatch(new RegExp(`with another key \\(${chainKeyId(OTHER_KEY)}\\)`));
      // the right key, and an unkeyed session without one: valid, nothing said about keys
      expect(await keyed.verify('k')).toEqual({ valid: true, eventCount: 4, firstBrokenSeq: null });
      expect(await bare.verify('plain')).toEqual({ valid: true, eventCount: 2, firstBrokenSeq: null });
      // an unkeyed session opened with a key is broken, not "keyed"
      expect((await keyed.verify('plain')).keyed).toBeUndefined();
    });

    it('the CLI verify of a keyed PostgreSQL session without the key says it cannot be checked (exit 2), not broken; with the key it is valid', async () => {
      // The CLI opens the default schema: a database of its own for this test, dropped afterwards.
      const database = freshSchemaName();
      await adminQuery(url, `CREATE DATABASE ${database}`);
      cleanups.push(async () => void (await adminQuery(url, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)));
      const target = new URL(url);
      target.pathname = `/${database}`;
      const dbUrl = target.toString();
      const keyed = await openPostgresLog({ connectionString: dbUrl }, { chainKey: KEY, migrate: true });
      await keyed.append('k', inputs('a', 2));
      await keyed.close();
      const withoutKey = await cliRun(['verify', 'k', '--dir', dbUrl], { CONTEXT_LEDGER_CHAIN_KEY: '' });
      expect(withoutKey.code, withoutKey.stderr).toBe(2);
      expect(withoutKey.stderr).toMatch(/the session is keyed; its hash chain cannot be checked without the key \(give the key with CONTEXT_LEDGER_CHAIN_KEY or --chain-key-file\)/);
      expect(withoutKey.stdout).toMatch(new RegExp(`chain key id ${chainKeyId(KEY)}`));
      expect(withoutKey.stdout + withoutKey.stderr).not.toMatch(/broken|BROKEN/);
      const withKey = await cliRun(['verify', 'k', '--dir', dbUrl], { CONTEXT_LEDGER_CHAIN_KEY: KEY });
      expect(withKey.code, withKey.stdout + withKey.stderr).toBe(0);
      expect(withKey.stdout).toMatch(/valid \(2 events/);
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
