// openPostgresLog: the SessionEventLog on PostgreSQL, shared by any number of processes and machines (the log protocol over the PostgreSQL engine).
import pg from 'pg';
import type { Pool } from 'pg';
import type { UpcasterRegistry } from '../events/index.js';
import { InvalidOptionsError } from '../base/errors.js';
import { createSessionEventLog } from '../log/protocol.js';
import type { Redactor } from '../log/redact.js';
import type { Clock, SessionEventLog } from '../log/types.js';
import { createPostgresEngine } from './engine.js';
import { PostgresSchemaError } from './errors.js';
import { DEFAULT_SCHEMA, SCHEMA_VERSION, migrate, quoteSchema, type PostgresTarget } from './schema.js';

export interface PostgresLogOptions {
  /** Stamps `at` on appended events (default: the system clock). */
  readonly clock?: Clock;
  /** Largest stored size of one event in UTF-8 bytes (default 64 MiB, as on LevelDB): a larger one is an InvalidEventError, nothing of its append written. */
  readonly maxEventBytes?: number;
  readonly upcasters?: UpcasterRegistry;
  /** The schema (namespace) of the tables (default `context_ledger`). */
  readonly schema?: string;
  /** Run `migrate` on open (default false: the schema must exist, or open throws saying so). */
  readonly migrate?: boolean;
  /** Connections in the pool made from a connection string (default 10; a given pool is used as it is). */
  readonly poolSize?: number;
  /** Events per page when reading (default 1000): memory stays bounded on any session. */
  readonly pageSize?: number;
  /** Most queued appends to one session written in one statement (group commit; default 1024). */
  readonly maxGroup?: number;
  /**
   * Announce each append with NOTIFY, so subscribers in other processes hear of it within milliseconds
   * (default false: PostgreSQL serialises the commits of notifying transactions across the whole server,
   * and subscribers find appends by polling every `pollMs` anyway). Subscribers always LISTEN, so
   * writers opened with `notify: true` reach them at once.
   */
  readonly notify?: boolean;
  /**
   * How often this log reads the heads of the sessions its subscribers follow (one statement for all of
   * them) and wakes those whose head moved: how subscribers find appends made without NOTIFY, and a
   * backstop for a lost LISTEN connection. Default 250 ms, or 1000 ms when `notify` is true (a log that
   * notifies expects its peers to). A positive integer.
   */
  readonly pollMs?: number;
  /**
   * Keyed chain: each hash is HMAC-SHA256 with this key instead of plain sha256 (as on LevelDB, the same
   * hashes for the same key). Open the log with the same key everywhere: a session written with
   * another key, or without one, does not verify, and `importStored` refuses texts sealed with another key.
   */
  readonly chainKey?: string | Uint8Array;
  /** Redaction before append, as on the other stores: `secretRedactor()` or `(event) => { event, redactions }`. */
  readonly redact?: Redactor;
  /** The chain version new sessions are written with (default 2; see LogOptions). */
  readonly chainVersion?: 1 | 2;
  /** Where each chain-version-2 event's `contentSalt` comes from (default random; see LogOptions). */
  readonly salt?: () => string;
}

/** `pollMs` when `notify` is off (how subscribers find new events) and when it is on (a backstop). */
const DEFAULT_POLL_MS = { quiet: 250, notify: 1000 } as const;

const MAX_TIMER_MS = 2_147_483_647;

/** Checks the options before anything is opened; every problem with its path in one InvalidOptionsError. */
const checkOptions = (options: PostgresLogOptions): void => {
  const issues: { path: string; message: string }[] = [];
  if (options === null || typeof options !== 'object') {
    throw new InvalidOptionsError('the PostgreSQL log', [{ path: '', message: `must be an object, got ${options === null ? 'null' : typeof options}` }]);
  }
  const positive = (path: 'poolSize' | 'pageSize' | 'maxGroup' | 'pollMs' | 'maxEventBytes', max = Number.MAX_SAFE_INTEGER): void => {
    const value = options[path];
    if (value !== undefined && !(Number.isSafeInteger(value) && value >= 1 && value <= max)) {
      issues.push({ path, message: `must be an integer from 1 to ${max === Number.MAX_SAFE_INTEGER ? 'Number.MAX_SAFE_INTEGER' : max}, got ${String(value)}` });
    }
  };
  positive('pageSize');
  positive('maxGroup');
  positive('maxEventBytes');
  positive('pollMs', MAX_TIMER_MS);
  const poolSize = options.poolSize;
  // One connection LISTENs while anyone subscribes: a pool of one would leave none for reads.
  if (poolSize !== undefined && !(Number.isSafeInteger(poolSize) && poolSize >= 2)) {
    issues.push({ path: 'poolSize', message: `must be an integer of at least 2 (one connection listens while anyone subscribes), got ${String(poolSize)}` });
  }
  for (const path of ['notify', 'migrate'] as const) {
    const value = options[path];
    if (value !== undefined && typeof value !== 'boolean') issues.push({ path, message: `must be true or false, got ${typeof value === 'string' ? JSON.stringify(value) : String(value)}` });
  }
  if (options.clock !== undefined && typeof options.clock !== 'function') issues.push({ path: 'clock', message: `must be a function, got ${typeof options.clock}` });
  if (options.salt !== undefined && typeof options.salt !== 'function') issues.push({ path: 'salt', message: `must be a function returning a hex string, got ${typeof options.salt}` });
  const chainKey = options.chainKey;
  if (chainKey !== undefined && !((typeof chainKey === 'string' || chainKey instanceof Uint8Array) && chainKey.length > 0)) {
    issues.push({ path: 'chainKey', message: 'must be a non-empty string or Uint8Array' });
  }
  if (issues.length > 0) throw new InvalidOptionsError('the PostgreSQL log', issues);
};

/** Session ids longer than this do not fit the B-tree key (4 hex digits per UTF-16 unit). */
export const MAX_POSTGRES_SESSION_ID_LENGTH = 512;

/**
 * Opens the log on PostgreSQL: a connection string (a pool is made and ended by `close`) or your
 * own pool (left open). Every process and machine that opens the same database and schema shares
 * the sessions: appends serialise per session through a conditional write (exactly one winner per
 * expectedSeq), and `subscribe` finds other processes' appends by polling heads every `pollMs`, or
 * at once through LISTEN/NOTIFY from writers opened with `notify: true`.
 * @example
 * import { migrate, openPostgresLog } from 'context-ledger/postgres';
 * await migrate({ connectionString: process.env.DATABASE_URL! });
 * const log = await openPostgresLog({ connectionString: process.env.DATABASE_URL! });
 */
export const openPostgresLog = async (target: PostgresTarget, options: PostgresLogOptions = {}): Promise<SessionEventLog> => {
  checkOptions(options);
  const givenMax = 'pool' in target ? target.pool.options?.max : undefined;
  if (givenMax !== undefined && givenMax < 2) {
    throw new InvalidOptionsError('the PostgreSQL log', [
      { path: 'pool', message: `must allow at least 2 connections (one LISTENs while anyone subscribes, and reads need another), got max ${String(givenMax)}` },
    ]);
  }
  const schema = options.schema ?? DEFAULT_SCHEMA;
  const s = quoteSchema(schema);
  const ownsPool = !('pool' in target);
  const pool: Pool =
    'pool' in target ? target.pool : new pg.Pool({ connectionString: target.connectionString, max: options.poolSize ?? 10 });
  if (ownsPool) pool.on('error', () => {}); // an idle client's error; the next query on it reports the problem
  try {
    if (options.migrate) await migrate({ pool }, { schema });
    const found = await pool
      .query<{ value: string }>(`SELECT value FROM ${s}.meta WHERE key = 'schema_version'`)
      .catch((error: unknown) => {
        if ((error as { code?: string }).code === '42P01') {
          throw new PostgresSchemaError(schema, `no context-ledger schema ${JSON.stringify(schema)} in this database: run migrate() (or context-ledger migrate --pg URL) first`, { cause: error });
        }
        throw error;
      });
    const version = Number(found.rows[0]?.value);
    if (version !== SCHEMA_VERSION) {
      const upgrade = version < SCHEMA_VERSION ? ': run migrate() (or context-ledger migrate --pg URL) to upgrade it' : '';
      throw new PostgresSchemaError(schema, `schema ${schema} is at version ${String(found.rows[0]?.value)}; this context-ledger knows version ${SCHEMA_VERSION}${upgrade}`);
    }
  } catch (error) {
    if (ownsPool) await pool.end().catch(() => {});
    throw error;
  }
  return createPostgresLog(pool, ownsPool, schema, options);
};

/** The log protocol over the PostgreSQL engine: the engine takes the store's options, the protocol the log's. */
const createPostgresLog = (pool: Pool, ownsPool: boolean, schema: string, options: PostgresLogOptions): SessionEventLog => {
  const { clock, maxEventBytes, upcasters, maxGroup, chainKey, redact, chainVersion, salt } = options;
  const notify = options.notify ?? false;
  const engine = createPostgresEngine(pool, {
    schema,
    ownsPool,
    pageSize: options.pageSize ?? 1000,
    notify,
    pollMs: options.pollMs ?? (notify ? DEFAULT_POLL_MS.notify : DEFAULT_POLL_MS.quiet),
  });
  return createSessionEventLog(engine, { clock, maxEventBytes, upcasters, maxGroup, chainKey, redact, chainVersion, salt });
};
