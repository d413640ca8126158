// Erasure on PostgreSQL: the value is gone from the table (stored text and jsonb doc) and the checkpoints; after VACUUM
// the table file holds no dead copy to read back through SQL; another process's appends wait for the erase and chain on.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openPostgresLog } from '../src/postgres/index.js';
import { secretRedactor } from '../src/log/index.js';
import { PG_URL, SKIP_MESSAGE, createSchema } from './support.js';

const SECRET = 'pg-erase-secret-5Kq9Zr2Lw7';
const input = (text: string) => ({ type: 'user.input' as const, items: [{ type: 'message', role: 'user', content: text }] });

if (PG_URL) {
  const url = PG_URL;
  describe('erase on PostgreSQL', () => {
    it('removes the value from events.stored, events.doc and the checkpoints; verify is valid; VACUUM runs', async () => {
      const { schema, drop } = await createSchema(url);
      const log = await openPostgresLog({ connectionString: url }, { schema });
      const other = await openPostgresLog({ connectionString: url }, { schema });
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await log.append('s', [input('hello')]);
        const written = await log.append('s', [{ type: 'tool.result', callId: 'c1', output: `TOKEN=${SECRET}` }]);
        await log.putCheckpoint('s', { seq: 2, hash: written[0]!.hash, data: { copy: SECRET } });
        const count = async (): Promise<number> =>
          Number(
            (await client.query<{ n: string }>(`SELECT count(*) AS n FROM "${schema}".events WHERE stored LIKE $1 OR doc::text LIKE $1`, [`%${SECRET}%`])).rows[0]?.n,
          ) + Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM "${schema}".checkpoints WHERE body LIKE $1`, [`%${SECRET}%`])).rows[0]?.n);
        expect(await count()).toBe(2);
        const racing = Promise.all([log.erase('s', { seqs: [2] }, { reason: 'token', by: 'ops' }), other.append('s', [input('from another process')])]);
        const [result] = await racing;
        expect(result.erased).toEqual([2]);
        expect(await count()).toBe(0);
        await client.query(`VACUUM "${schema}".events`);
        expect(await count()).toBe(0);
        const verified = await log.verify('s');
        expect(verified).toMatchObject({ valid: true, eventCount: 4, erased: [2] });
        expect(await other.verify('s')).toMatchObject({ valid: true, erased: [2] });
        await log.append('s', [input('after')]);
        expect((await other.verify('s')).valid).toBe(true);
        expect(await log.deleteSession('s')).toEqual({ deleted: 5 });
        expect(Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM "${schema}".sessions`)).rows[0]?.n)).toBe(0);
      } finally {
        await client.end();
        await log.close();
        await other.close();
        await drop();
      }
    });

    it('redact works on PostgreSQL too', async () => {
      const { schema, drop } = await createSchema(url);
      const log = await openPostgresLog({ connectionString: url }, { schema, redact: secretRedactor() });
      try {
        const [stored] = await log.append('r', [{ type: 'tool.result', callId: 'c', output: `DB_PASSWORD=${SECRET}` }]);
        expect(stored?.redactions).toEqual([{ path: 'output', rule: 'env-secret' }]);
        const read: unknown[] = [];
        for await (const e of log.read('r', { verify: true })) read.push(e);
        expect(read).toEqual([stored]);
      } finally {
        await log.close();
        await drop();
      }
    });
  });
} else {
  describe.skip(SKIP_MESSAGE, () => {
    it('needs CONTEXT_LEDGER_PG_URL', () => {});
  });
}
