// migrate and the schema: idempotent and concurrent migrations, clear errors, odd ids, the jsonb column, a given pool.
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../src/base/errors.js';
import { isInvalidSessionIdError } from '../src/log/index.js';
import { encodeSessionId } from '../src/log/keys.js';
import { SCHEMA_VERSION, migrate, openPostgresLog, schemaSql } from '../src/postgres/index.js';
import { collect, inputs, rejectionOf } from '../src/testing/log-contract.js';
import { PG_URL, SKIP_MESSAGE, createSchema, freshSchemaName } from './support.js';

if (PG_URL) {
  const url = PG_URL;
  describe('PostgreSQL schema and migrate', () => {
    const drops: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const drop of drops.splice(0)) await drop();
    });
    const query = async <R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        return (await client.query<R>(text, values)).rows;
      } finally {
        await client.end();
      }
    };
    const dropLater = (schema: string): void => {
      drops.push(async () => void (await query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)));
    };

    it('migrate is idempotent and safe to run from several clients at once', async () => {
      const schema = freshSchemaName();
      dropLater(schema);
      const results = await Promise.all(Array.from({ length: 4 }, () => migrate({ connectionString: url }, { schema })));
      expect(results).toEqual(Array.from({ length: 4 }, () => ({ schema, version: SCHEMA_VERSION })));
      expect(await migrate({ connectionString: url }, { schema })).toEqual({ schema, version: SCHEMA_VERSION });
      const tables = await query<{ table_name: string }>(`SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1`, [schema]);
      expect(tables.map((t) => t.table_name)).toEqual(['checkpoints', 'events', 'meta', 'sessions']);
      const keys = await query<{ column_name: string }>(
        `SELECT a.attname AS column_name FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
         WHERE i.indrelid = $1::regclass AND i.indisprimary ORDER BY array_position(i.indkey, a.attnum)`,
        [`"${schema}".events`],
      );
      expect(keys.map((k) => k.column_name)).toEqual(['session_key', 'seq']);
    });

    it('a version-1 schema (no key_id) is refused with a word to run migrate, which upgrades it to version 2 with its sessions kept', async () => {
      const { schema, drop } = await createSchema(url);
      drops.push(drop);
      const log = await openPostgresLog({ connectionString: url }, { schema });
      await log.append('old', inputs('x', 3));
      await log.close();
      // what version 1 created: no key_id, version '1'
      await query(`ALTER TABLE "${schema}".sessions DROP COLUMN key_id`);
      await query(`UPDATE "${schema}".meta SET value = '1' WHERE key = 'schema_version'`);
      const refused = await rejectionOf(openPostgresLog({ connectionString: url }, { schema }));
      expect((refused as Error).message).toMatch(/is at version 1; this context-ledger knows version 2: run migrate\(\) \(or context-ledger migrate --pg URL\) to upgrade it/);
      expect(await migrate({ connectionString: url }, { schema })).toEqual({ schema, version: 2 });
      const upgraded = await openPostgresLog({ connectionString: url }, { schema });
      expect(await upgraded.verify('old')).toEqual({ valid: true, eventCount: 3, firstBrokenSeq: null });
      await upgraded.append('old', inputs('y', 1), { expectedSeq: 3 });
      await upgraded.append('new', inputs('z', 1));
      expect(await upgraded.head('old')).toBe(4);
      await upgraded.close();
      const columns = await query<{ column_name: string }>(`SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'sessions'`, [schema]);
      expect(columns.map((c) => c.column_name)).toContain('key_id');
    });

    it('openPostgresLog without a schema says to run migrate; { migrate: true } creates it', async () => {
      const schema = freshSchemaName();
      dropLater(schema);
      const error = await rejectionOf(openPostgresLog({ connectionString: url }, { schema }));
      expect((error as Error).message).toMatch(/run migrate\(\)/);
      const log = await openPostgresLog({ connectionString: url }, { schema, migrate: true });
      await log.append('s', inputs('x', 1));
      expect(await log.head('s')).toBe(1);
      await log.close();
      await expect(openPostgresLog({ connectionString: url }, { schema: 'Bad-Name' })).rejects.toThrow(InvalidOptionsError);
      expect(() => schemaSql('x; drop table y')).toThrow(InvalidOptionsError);
    });

    it('keys rows by the hex session key, keeps text-safe ids readable, and fills doc only where jsonb can hold the text', async () => {
      const { schema, drop } = await createSchema(url);
      drops.push(drop);
      const log = await openPostgresLog({ connectionString: url }, { schema });
      const ids = ['plain', 'x\u0000y', '\ud800', '\udc00\ud800', '\u{1F600}', 'é'];
      for (const id of ids) await log.append(id, [{ type: 'tool.result', callId: 'c', output: `out ${id}` }]);
      // two ids that text would turn into the same string stay apart
      expect(await log.head('\ud800')).toBe(1);
      expect(await log.head('\ufffd')).toBe(0);
      expect([...(await collect(log.sessions()))].sort()).toEqual([...ids].sort());
      const sessions = await query<{ session_key: string; session_id: string | null }>(`SELECT session_key, session_id FROM "${schema}".sessions ORDER BY 1`);
      const byKey = new Map(sessions.map((r) => [r.session_key, r.session_id]));
      expect(byKey.get('0070006c00610069006e')).toBe('plain');
      expect(byKey.get('007800000079')).toBe(null);
      expect(byKey.get('d800')).toBe(null);
      expect(byKey.get('d83dde00')).toBe('\u{1F600}');
      const docs = await query<{ session_key: string; output: string | null; stored: string }>(
        `SELECT session_key, doc->>'output' AS output, stored FROM "${schema}".events`,
      );
      const docOf = new Map(docs.map((r) => [r.session_key, r.output]));
      expect(docOf.get('0070006c00610069006e')).toBe('out plain');
      expect(docOf.get('d83dde00')).toBe('out \u{1F600}');
      expect(docOf.get('007800000079')).toBe(null);
      expect(docOf.get('d800')).toBe(null);
      // the stored column is the text that was hashed
      for (const id of ids) expect(await collect(log.readStored(id))).toEqual([docs.find((d) => d.session_key === encodeSessionId(id))?.stored]);
      await log.close();
    });

    it('refuses session ids longer than the B-tree key holds, with the limit in the message', async () => {
      const { schema, drop } = await createSchema(url);
      drops.push(drop);
      const log = await openPostgresLog({ connectionString: url }, { schema });
      await log.append('a'.repeat(512), inputs('x', 1));
      const error = await rejectionOf(log.append('a'.repeat(513), inputs('x', 1)));
      expect(isInvalidSessionIdError(error)).toBe(true);
      expect((error as Error).message).toMatch(/512/);
      await log.close();
    });

    it('read and verify name an event removed or edited behind the log', async () => {
      const { schema, drop } = await createSchema(url);
      drops.push(drop);
      const log = await openPostgresLog({ connectionString: url }, { schema, pageSize: 4 });
      await log.append('s', inputs('x', 10));
      const key = encodeSessionId('s');
      await query(`UPDATE "${schema}".events SET stored = replace(stored, '"x.6"', '"x.X"') WHERE session_key = $1 AND seq = 7`, [key]);
      expect(await log.verify('s')).toMatchObject({ valid: false, firstBrokenSeq: 7, problem: 'content does not match its hash' });
      await query(`DELETE FROM "${schema}".events WHERE session_key = $1 AND seq = 5`, [key]);
      expect(await log.verify('s')).toMatchObject({ valid: false, firstBrokenSeq: 5 });
      await expect(collect(log.read('s'))).rejects.toThrow(/event 5 is missing/);
      await query(`DELETE FROM "${schema}".events WHERE session_key = $1 AND seq >= 9`, [key]);
      await expect(collect(log.read('s', { fromSeq: 6 }))).rejects.toThrow(/event 9 is missing/);
      expect(await log.verify('s')).toMatchObject({ valid: false, firstBrokenSeq: 5 });
      await log.close();
    });

    it('leaves a pool it was given open on close', async () => {
      const { schema, drop } = await createSchema(url);
      drops.push(drop);
      const pool = new pg.Pool({ connectionString: url, max: 2 });
      try {
        const log = await openPostgresLog({ pool }, { schema });
        await log.append('s', inputs('x', 2));
        await log.close();
        expect((await pool.query<{ n: string }>(`SELECT count(*) AS n FROM "${schema}".events`)).rows[0]?.n).toBe('2');
      } finally {
        await pool.end();
      }
    });
  });
} else {
  describe.skip(SKIP_MESSAGE, () => {
    it('needs CONTEXT_LEDGER_PG_URL', () => {});
  });
}
