// The PostgreSQL schema of the log, and `migrate`, which creates it (idempotent, safe to run from several processes).
import pg from 'pg';
import type { Pool, PoolClient } from 'pg';
import { InvalidOptionsError } from '../base/errors.js';
import { PostgresSchemaError } from './errors.js';

/**
 * The schema version `migrate` creates (or upgrades an older one to); `openPostgresLog` refuses a schema with another one.
 * Version 2 added `sessions.key_id` (a keyed session says it is keyed).
 */
export const SCHEMA_VERSION = 2;

/** The PostgreSQL schema (namespace) the log lives in unless told otherwise. */
export const DEFAULT_SCHEMA = 'context_ledger';

/** Where the log's tables are: a connection string or a pool the caller owns. */
export type PostgresTarget = { readonly connectionString: string } | { readonly pool: Pool };

export interface MigrateOptions {
  /** The schema (namespace) for the tables (default `context_ledger`): lower-case letters, digits and `_`. */
  readonly schema?: string;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,47}$/;

/** Checks a schema name (it is written into SQL as an identifier) and gives it quoted. */
export const quoteSchema = (schema: string): string => {
  if (typeof schema !== 'string' || !SCHEMA_NAME.test(schema)) {
    throw new InvalidOptionsError('the PostgreSQL log', [
      { path: 'schema', message: `must be 1-48 characters of a-z, 0-9 and _ (not starting with a digit), got ${JSON.stringify(schema)}` },
    ]);
  }
  return `"${schema}"`;
};

/** The LISTEN/NOTIFY channel on which appends to the schema's sessions are announced. */
export const channelOf = (schema: string): string => `${schema}_appended`;

/**
 * The DDL. `sessions` is the list of sessions (its primary key is the listing index) and each
 * session's head, which appends move with a conditional update: only unindexed columns change, and
 * fillfactor leaves room on the page, so those updates stay HOT (no index writes). Session ids may hold NUL and lone surrogates, which PostgreSQL `text` rejects or
 * replaces, so rows are keyed by the hex session key of src/log/session-key.ts (4 hex digits per UTF-16
 * unit, lossless); `session_id` keeps the id as text for users' SQL only where text can hold it.
 * `stored` is each event's sealed canonical JSON exactly as hashed (JSON escapes NUL and lone
 * surrogates, so it is always valid text); `doc` is the same as jsonb where jsonb can hold it.
 * `key_id` is the chain key id (`chainKeyId`) of a session written by a keyed log, set with its first append: a keyed
 * session says so without revealing its key. Version 1 had no `key_id`; `migrate` adds it (the statements are idempotent).
 */
export const schemaSql = (schema: string): string => {
  const s = quoteSchema(schema);
  return `
CREATE SCHEMA IF NOT EXISTS ${s};
CREATE TABLE IF NOT EXISTS ${s}.meta (
  key text PRIMARY KEY,
  value text NOT NULL
);
CREATE TABLE IF NOT EXISTS ${s}.sessions (
  session_key text COLLATE "C" PRIMARY KEY,
  session_id text,
  head_seq bigint NOT NULL CHECK (head_seq > 0),
  head_hash text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  key_id text
) WITH (fillfactor = 70);
ALTER TABLE ${s}.sessions ADD COLUMN IF NOT EXISTS key_id text;
CREATE INDEX IF NOT EXISTS sessions_by_id ON ${s}.sessions (session_id);
CREATE TABLE IF NOT EXISTS ${s}.events (
  session_key text COLLATE "C" NOT NULL,
  seq bigint NOT NULL CHECK (seq > 0),
  type text NOT NULL,
  at text NOT NULL,
  prev_hash text NOT NULL,
  hash text NOT NULL,
  stored text NOT NULL,
  doc jsonb GENERATED ALWAYS AS (CASE WHEN stored ~ '\\\\u(0000|[dD][89abcdefABCDEF])' THEN NULL ELSE stored::jsonb END) STORED,
  PRIMARY KEY (session_key, seq)
);
CREATE TABLE IF NOT EXISTS ${s}.checkpoints (
  session_key text COLLATE "C" NOT NULL,
  seq bigint NOT NULL CHECK (seq > 0),
  hash text NOT NULL,
  body text NOT NULL,
  PRIMARY KEY (session_key, seq)
);
INSERT INTO ${s}.meta (key, value) VALUES ('schema_version', '${SCHEMA_VERSION}') ON CONFLICT (key) DO NOTHING;
UPDATE ${s}.meta SET value = '${SCHEMA_VERSION}' WHERE key = 'schema_version' AND value = '1';
`;
};

/** Runs `work` with a client from the target (a pool made for the call is ended afterwards). */
export const withClient = async <T>(target: PostgresTarget, work: (client: PoolClient) => Promise<T>): Promise<T> => {
  const pool = 'pool' in target ? target.pool : new pg.Pool({ connectionString: target.connectionString, max: 1 });
  try {
    const client = await pool.connect();
    try {
      return await work(client);
    } finally {
      client.release();
    }
  } finally {
    if (!('pool' in target)) await pool.end();
  }
};

/**
 * Creates the log's schema and tables when missing, or upgrades an older version of them (idempotent; concurrent runs
 * wait for each other on an advisory lock). `openPostgresLog` needs it to have run once per database and schema.
 * @example await migrate({ connectionString: process.env.DATABASE_URL! })
 */
export const migrate = async (target: PostgresTarget, options: MigrateOptions = {}): Promise<{ schema: string; version: number }> => {
  const schema = options.schema ?? DEFAULT_SCHEMA;
  const ddl = schemaSql(schema);
  return withClient(target, async (client) => {
    await client.query('BEGIN');
    try {
      await client.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`context-ledger migrate ${schema}`]);
      await client.query(ddl);
      const found = await client.query<{ value: string }>(`SELECT value FROM ${quoteSchema(schema)}.meta WHERE key = 'schema_version'`);
      const version = Number(found.rows[0]?.value);
      if (version !== SCHEMA_VERSION) {
        throw new PostgresSchemaError(schema, `schema ${schema} is at version ${String(found.rows[0]?.value)}; this context-ledger knows version ${SCHEMA_VERSION}`);
      }
      await client.query('COMMIT');
      return { schema, version };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    }
  });
};
