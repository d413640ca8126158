// verify on PostgreSQL is the protocol's (issue 25 item 3): the head row is the head record, read before the events.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { encodeSessionId } from '../src/log/keys.js';
import { openPostgresLog } from '../src/postgres/index.js';
import { inputs } from '../src/testing/log-contract.js';
import { PG_URL, SKIP_MESSAGE, createSchema } from './support.js';

if (PG_URL) {
  const url = PG_URL;
  describe('verify against the PostgreSQL head row', () => {
    const withSession = async (damage: (client: pg.Client, table: string, key: string) => Promise<void>) => {
      const { schema, drop } = await createSchema(url);
      const log = await openPostgresLog({ connectionString: url }, { schema });
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await log.append('s', inputs('a', 3));
        await log.append('s', inputs('b', 2));
        expect(await log.verify('s')).toMatchObject({ valid: true, eventCount: 5 });
        await damage(client, `"${schema}"`, encodeSessionId('s'));
        return await log.verify('s');
      } finally {
        await client.end();
        await log.close();
        await drop();
      }
    };

    it('a head row ahead of the stored events (the last ones deleted) is a rollback', async () => {
      const result = await withSession((client, s, key) => client.query(`DELETE FROM ${s}.events WHERE session_key = $1 AND seq > 3`, [key]).then(() => {}));
      expect(result).toMatchObject({ valid: false, eventCount: 3, firstBrokenSeq: 4, rollback: true });
      expect(result.problem).toMatch(/head record is at seq 5 but the session has 3 events/);
    });

    it('a head row whose hash is not the chain\'s at its seq is a rewritten chain', async () => {
      const result = await withSession((client, s, key) => client.query(`UPDATE ${s}.sessions SET head_hash = repeat('0', 64) WHERE session_key = $1`, [key]).then(() => {}));
      expect(result).toMatchObject({ valid: false, eventCount: 5, firstBrokenSeq: 5 });
      expect(result.problem).toMatch(/head record does not match event 5/);
    });
  });
} else {
  describe.skip(SKIP_MESSAGE, () => {
    it('needs CONTEXT_LEDGER_PG_URL', () => {});
  });
}
