// Store failures on PostgreSQL: an append the server refuses, or whose connection is killed mid-statement, is rejected
// with LogWriteError saying whether its events were written (never a raw pg error); nothing half-written, the log goes on.
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { isLogWriteError, type LogWriteError, type SessionEventLog } from '../src/log/index.js';
import { encodeSessionId } from '../src/log/keys.js';
import { openPostgresLog } from '../src/postgres/index.js';
import { collect, inputs, rejectionOf } from '../src/testing/log-contract.js';
import { PG_URL, SKIP_MESSAGE, createSchema } from './support.js';

if (PG_URL) {
  const url = PG_URL;
  describe('PostgreSQL write failures', () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });
    const query = async (text: string, values: unknown[] = []): Promise<pg.QueryResultRow[]> => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        return (await client.query(text, values)).rows;
      } finally {
        await client.end();
      }
    };
    const setUp = async (): Promise<{ schema: string; log: SessionEventLog }> => {
      const { schema, drop } = await createSchema(url);
      cleanups.push(drop);
      const log = await openPostgresLog({ connectionString: url }, { schema });
      cleanups.push(() => log.close());
      return { schema, log };
    };
    const texts = async (log: SessionEventLog, id: string): Promise<string[]> =>
      (await collect(log.read(id))).map((e) => (e.type === 'user.input' ? String((e.items[0] as { content?: unknown }).content) : e.type));

    it('a server-side failure (a trigger raising) rejects every append of the group with LogWriteError, written: false; nothing stored; the log goes on', async () => {
      const { schema, log } = await setUp();
      await log.append('s', inputs('before', 2));
      await query(`CREATE FUNCTION "${schema}".refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by a trigger'; END $$`);
      await query(`CREATE TRIGGER refuse BEFORE INSERT ON "${schema}".events FOR EACH ROW WHEN (NEW.session_key = '${encodeSessionId('s')}') EXECUTE FUNCTION "${schema}".refuse()`);
      // one append alone (the one-row statement) and three queued together (one group, the array statement)
      const alone = await rejectionOf(log.append('s', inputs('alone', 1)));
      const group = await Promise.allSettled([log.append('s', inputs('g1', 1)), log.append('s', inputs('g2', 2)), log.append('s', inputs('g3', 1))]);
      const rejections = [alone, ...group.map((r) => (r.status === 'rejected' ? r.reason : new Error('resolved')))];
      for (const error of rejections) {
        expect(isLogWriteError(error), String(error)).toBe(true);
        expect(error).toMatchObject({ name: 'LogWriteError', code: 'LOG_WRITE_FAILED', sessionId: 's', written: false });
        expect((error as Error).message).toMatch(/\(nothing was written\): refused by a trigger/);
        expect(((error as LogWriteError).cause as { code?: string }).code).toBe('P0001');
      }
      expect(await log.head('s')).toBe(2);
      // other sessions are not affected while the trigger is there
      expect((await log.append('other', inputs('o', 1)))[0]?.seq).toBe(1);
      await query(`DROP TRIGGER refuse ON "${schema}".events`);
      expect((await log.append('s', inputs('after', 1)))[0]?.seq).toBe(3);
      expect(await texts(log, 's')).toEqual(['before.0', 'before.1', 'after.0']);
      expect(await log.verify('s')).toEqual({ valid: true, eventCount: 3, firstBrokenSeq: null });
    });

    it('a connection killed mid-append (pg_terminate_backend) rejects with LogWriteError, written: false; a retry appends once', async () => {
      const { schema, log } = await setUp();
      await log.append('s', inputs('before', 1));
      // the append waits in a trigger until its backend is killed
      await query(`CREATE FUNCTION "${schema}".stall() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(30); RETURN NEW; END $$`);
      await query(`CREATE TRIGGER stall BEFORE INSERT ON "${schema}".events FOR EACH ROW WHEN (NEW.session_key = '${encodeSessionId('s')}') EXECUTE FUNCTION "${schema}".stall()`);
      const append = log.append('s', inputs('killed', 2));
      append.catch(() => {});
      let killed = 0;
      for (let i = 0; i < 200 && killed === 0; i++) {
        await new Promise((r) => setTimeout(r, 25));
        const rows = await query(`SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND pid <> pg_backend_pid()`);
        killed = rows.filter((r) => r['done'] === true).length;
      }
      expect(killed).toBe(1);
      const error = await rejectionOf(append);
      expect(isLogWriteError(error), String(error)).toBe(true);
      expect(error).toMatchObject({ sessionId: 's', written: false });
      await query(`DROP TRIGGER stall ON "${schema}".events`);
      expect(await log.head('s')).toBe(1);
      // written: false means a retry appends the events once
      await log.append('s', inputs('killed', 2));
      expect(await texts(log, 's')).toEqual(['before.0', 'killed.0', 'killed.1']);
      expect(await log.verify('s')).toEqual({ valid: true, eventCount: 3, firstBrokenSeq: null });
    });
  });
} else {
  describe.skip(SKIP_MESSAGE, () => {
    it('needs CONTEXT_LEDGER_PG_URL', () => {});
  });
}
