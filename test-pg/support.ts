// Shared by the PostgreSQL suites: the server URL, a fresh schema per store, and the skip notice.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrate, openPostgresLog, type PostgresLogOptions } from '../src/postgres/index.js';
import type { SessionEventLog } from '../src/log/index.js';
import { encodeSessionId } from '../src/log/keys.js';
import type { LogHarnessOpenOptions, LogHarnessStore } from '../src/testing/log-contract.js';

/** The server the suites use; unset, they are skipped with a message saying how to run them. */
export const PG_URL = process.env['CONTEXT_LEDGER_PG_URL'];

export const SKIP_MESSAGE =
  'PostgreSQL suites SKIPPED: CONTEXT_LEDGER_PG_URL is not set. Run them with a throwaway server: scripts/with-postgres.sh npm run test:pg';

if (!PG_URL) console.warn(`\n*** ${SKIP_MESSAGE} ***\n`);

/** A unique schema name, so every test has an empty store of its own. */
export const freshSchemaName = (): string => `cl_t_${randomBytes(6).toString('hex')}`;

/** Creates a schema with the log's tables; the function it gives drops it. */
export const createSchema = async (url: string, schema = freshSchemaName()): Promise<{ schema: string; drop: () => Promise<void> }> => {
  await migrate({ connectionString: url }, { schema });
  return {
    schema,
    drop: async () => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
};

/** A contract-suite store: its own schema; `openAnother` opens a second log with its own pool; `tamper` edits a row. */
export const postgresHarness = (url: string, base: Omit<PostgresLogOptions, 'schema'> = {}): LogHarnessStore => {
  let created: { schema: string; drop: () => Promise<void> } | undefined;
  let options: PostgresLogOptions = base;
  let current: SessionEventLog | undefined;
  const others: SessionEventLog[] = [];
  const schema = async (): Promise<string> => (created ??= await createSchema(url)).schema;
  return {
    async open(extra: LogHarnessOpenOptions = {}) {
      options = { ...base, ...extra, schema: await schema() };
      current = await openPostgresLog({ connectionString: url }, options);
      return current;
    },
    async reopen() {
      await current?.close();
      current = await openPostgresLog({ connectionString: url }, options);
      return current;
    },
    async openAnother(extra: LogHarnessOpenOptions = {}) {
      const other = await openPostgresLog({ connectionString: url }, { ...base, ...extra, schema: await schema() });
      others.push(other);
      return other;
    },
    async tamper(sessionId, seq, edit) {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const table = `"${await schema()}".events`;
        const key = encodeSessionId(sessionId);
        const found = await client.query<{ stored: string }>(`SELECT stored FROM ${table} WHERE session_key = $1 AND seq = $2`, [key, seq]);
        const stored = found.rows[0]?.stored;
        if (stored === undefined) throw new Error(`no event ${seq} in ${sessionId} to tamper with`);
        await client.query(`UPDATE ${table} SET stored = $3 WHERE session_key = $1 AND seq = $2`, [key, seq, edit(stored)]);
      } finally {
        await client.end();
      }
      if (!current) throw new Error('tamper before open');
      return current;
    },
    async cleanup() {
      await Promise.all([current?.close(), ...others.map((o) => o.close())]);
      await created?.drop();
    },
  };
};
