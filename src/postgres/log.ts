// openPostgresLog: the SessionEventLog on PostgreSQL, shared by any number of processes and machines.
import * as E from 'fp-ts/lib/Either.js';
import pg from 'pg';
import type { Pool } from 'pg';
import {
  EVENT_VERSIONS,
  EventDecodeError,
  InvalidEventError,
  decodeEvent,
  type NewSessionEvent,
  type SessionEvent,
  type UpcasterRegistry,
} from '../events/index.js';
import { anchorsBySeq, checkLink, createErasureCheck, rollbackOf, unclaimedProblem, validWithErasures } from '../log/chain-check.js';
import { assertTipSealedWith, chainKeyId, keyedVerifyProblem } from '../log/chain-key.js';
import {
  ChainBrokenError,
  ExpectedSeqConflictError,
  InvalidCheckpointError,
  InvalidSessionIdError,
  LogClosedError,
  LogWriteError,
  SeqLimitError,
} from '../log/errors.js';
import { PostgresSchemaError } from './errors.js';
import { followSession } from '../log/follow.js';
import { GENESIS_HASH, chainVersionOf, sealEventAs, type ChainKey, type ChainVersion } from '../log/hash-chain.js';
import { redactBatch, redactOption, type Redaction, type Redactor } from '../log/redact.js';
import { createPostgresErasure } from './erase.js';
import { ContextLedgerError, InvalidOptionsError } from '../errors.js';
import { MAX_SEQ, decodeSessionId, encodeSessionId } from '../log/keys.js';
import { DEFAULT_MAX_EVENT_BYTES, assertSessionId, chainVersionOption, seqOption, stampOf, toIso, unsealedEvent, validateBatch } from '../log/store.js';
import { expectedSeqOption } from '../log/validate.js';
import { verifyStoredTexts } from '../log/stored.js';
import { registerWriterStates } from '../log/writer-states.js';
import type {
  AppendOptions,
  Clock,
  ImportResult,
  PutCheckpointOptions,
  ReadOptions,
  SessionEventLog,
  StoredCheckpoint,
  VerifyOptions,
  VerifyResult,
} from '../log/types.js';
import { saltFrom, saltOption } from '../log/salt.js';
import { createSessionListener, notifyTagOf } from './listener.js';
import { DEFAULT_SCHEMA, SCHEMA_VERSION, channelOf, migrate, quoteSchema, type PostgresTarget } from './schema.js';

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

/** Idle per-session writers kept (as the LevelDB log keeps). */
const MAX_IDLE_WRITERS = 256;

/** Session ids longer than this do not fit the B-tree key (4 hex digits per UTF-16 unit). */
export const MAX_POSTGRES_SESSION_ID_LENGTH = 512;

interface Head {
  readonly seq: number;
  readonly hash: string;
  /** The chain version of the session's last event (from readHead; new sessions: the log's). */
  readonly chain?: ChainVersion;
  /** The chain key id the session's head row names (from readHead: a keyed session's). */
  readonly keyId?: string;
}

interface Pending {
  readonly events: readonly NewSessionEvent[];
  readonly expectedSeq: number | undefined;
  readonly imported: readonly string[] | undefined;
  /** What the `redact` option replaced in each event (undefined where nothing). */
  readonly redactions?: readonly (readonly Redaction[] | undefined)[];
  /** The clock reading, taken once, kept across retries. */
  at: string | undefined;
  readonly resolve: (events: readonly SessionEvent[], tip: Head) => void;
  readonly reject: (error: unknown) => void;
}

interface Writer {
  readonly key: string;
  /** The NOTIFY payload for the session (md5 of its key). */
  readonly notifyTag: string;
  /** What this process last wrote or read; a guess, checked by the conditional write. */
  head: Head | undefined;
  /** The session's chain version, from the last head read (what `head` is sealed in). */
  chain: ChainVersion;
  queue: Pending[];
  draining: Promise<void> | undefined;
}

interface Row {
  readonly seq: number;
  readonly type: string;
  readonly at: string;
  readonly prevHash: string;
  readonly hash: string;
  readonly text: string;
}

const LONE_OR_NUL = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
/** The id as PostgreSQL text can hold it, or null (NUL or a lone surrogate would be rejected or replaced). */
const textColumnOf = (sessionId: string): string | null => (LONE_OR_NUL.test(sessionId) ? null : sessionId);

const MAX_RETRIES = 10_000;
/** Read pages in flight at once. */
const READ_AHEAD = 3;

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

const createPostgresLog = (pool: Pool, ownsPool: boolean, schema: string, options: PostgresLogOptions): SessionEventLog => {
  const s = quoteSchema(schema);
  const clock: Clock = options.clock ?? (() => new Date());
  const pageSize = options.pageSize ?? 1000;
  const maxGroup = options.maxGroup ?? 1024;
  const notify = options.notify ?? false;
  const pollMs = options.pollMs ?? (notify ? DEFAULT_POLL_MS.notify : DEFAULT_POLL_MS.quiet);
  const chainKey: ChainKey | undefined = options.chainKey;
  const keyId = chainKey === undefined ? undefined : chainKeyId(chainKey);
  const decodeOptions = options.upcasters ? { upcasters: options.upcasters } : {};
  const importOptions = { ...decodeOptions, ...(chainKey === undefined ? {} : { chainKey }) };
  const channel = channelOf(schema);
  const listener = createSessionListener(pool, {
    channel,
    pollMs,
    headsSql: `SELECT session_key, head_seq FROM ${s}.sessions WHERE session_key = ANY($1::text[])`,
    headsName: `cl_${schema}_heads`,
  });
  const writers = new Map<string, Writer>();
  let closed = false;
  const redact = redactOption(options.redact);
  const defaultChain = chainVersionOption(options.chainVersion);
  const salt = saltOption(options.salt);

  const sql = {
    // with the chain version of the last event (version 2 events carry contentDigest)
    head: `SELECT h.head_seq, h.head_hash, (SELECT CASE WHEN e.doc IS NOT NULL THEN e.doc ? 'contentDigest' ELSE e.stored LIKE '%"contentDigest":"%' END
  FROM ${s}.events e WHERE e.session_key = h.session_key AND e.seq = h.head_seq) AS v2, h.key_id FROM ${s}.sessions h WHERE h.session_key = $1`,
    // One autocommit statement per group: move the head only if it is still where this process
    // thinks it is, write the events only if the head moved, and with `notify` announce them on
    // commit (without it the statement ends in `SELECT 1`: subscribers find them by the head poll).
    // A new session's row gets the log's chain key id ($6, NULL without a key); later appends leave it.
    write: `WITH moved AS (
  INSERT INTO ${s}.sessions AS h (session_key, session_id, head_seq, head_hash, key_id)
  VALUES ($1, $2, $3, $4, $6)
  ON CONFLICT (session_key) DO UPDATE SET head_seq = EXCLUDED.head_seq, head_hash = EXCLUDED.head_hash, updated_at = now()
    WHERE h.head_seq = $5
  RETURNING 1
), written AS (
  INSERT INTO ${s}.events (session_key, seq, type, at, prev_hash, hash, stored)
  SELECT $1, e.seq, e.type, e.at, e.prev_hash, e.hash, e.stored
  FROM unnest($7::bigint[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[]) AS e(seq, type, at, prev_hash, hash, stored)
  WHERE EXISTS (SELECT 1 FROM moved)
)
SELECT ${notify ? 'pg_notify($13, $14)' : '1'} FROM moved`,
    // The same for one event, without arrays (most appends are one event).
    writeOne: `WITH moved AS (
  INSERT INTO ${s}.sessions AS h (session_key, session_id, head_seq, head_hash, key_id)
  VALUES ($1, $2, $3, $4, $6)
  ON CONFLICT (session_key) DO UPDATE SET head_seq = EXCLUDED.head_seq, head_hash = EXCLUDED.head_hash, updated_at = now()
    WHERE h.head_seq = $5
  RETURNING 1
), written AS (
  INSERT INTO ${s}.events (session_key, seq, type, at, prev_hash, hash, stored)
  SELECT $1, $3, $7, $8, $9, $4, $10 WHERE EXISTS (SELECT 1 FROM moved)
)
SELECT ${notify ? 'pg_notify($11, $12)' : '1'} FROM moved`,
    page: `SELECT seq, stored FROM ${s}.events WHERE session_key = $1 AND seq >= $2 AND seq <= $3 ORDER BY seq`,
    firstPage: `SELECT h.head_seq, h.head_hash, e.seq, e.stored FROM ${s}.sessions h
  LEFT JOIN LATERAL (SELECT seq, stored FROM ${s}.events WHERE session_key = $1 AND seq >= $2 AND seq <= $3) e ON true
  WHERE h.session_key = $1 ORDER BY e.seq`,
    sessions: `SELECT session_key FROM ${s}.sessions WHERE session_key > $1 ORDER BY session_key LIMIT $2`,
    putCheckpoint: `WITH put AS (
  INSERT INTO ${s}.checkpoints (session_key, seq, hash, body) VALUES ($1, $2, $3, $4)
  ON CONFLICT (session_key, seq) DO UPDATE SET hash = EXCLUDED.hash, body = EXCLUDED.body
)
DELETE FROM ${s}.checkpoints WHERE session_key = $1 AND seq < $2
  AND seq < (SELECT max(seq) FROM ${s}.checkpoints WHERE session_key = $1 AND seq < $2)`,
    putCheckpointBand: `WITH put AS (
  INSERT INTO ${s}.checkpoints (session_key, seq, hash, body) VALUES ($1, $2, $3, $4)
  ON CONFLICT (session_key, seq) DO UPDATE SET hash = EXCLUDED.hash, body = EXCLUDED.body
)
DELETE FROM ${s}.checkpoints WHERE session_key = $1 AND seq < $2 AND div(seq, $5) = div($2::bigint, $5)`,
    checkpoints: `SELECT seq, body FROM ${s}.checkpoints WHERE session_key = $1 AND seq <= $2 ORDER BY seq DESC LIMIT 16`,
  };

  // Prepared once per connection (named), so the server parses and plans them once.
  // The write statements differ with `notify`, so their names do too (two logs may share a pool).
  const quiet = notify ? '' : 'q';
  const names = {
    head: `cl_${schema}_head`,
    write: `cl_${schema}_write${quiet}`,
    writeOne: `cl_${schema}_write1${quiet}`,
    page: `cl_${schema}_page`,
    firstPage: `cl_${schema}_first`,
  };
  const announce = (writer: Writer): string[] => (notify ? [channel, writer.notifyTag] : []);

  const ensureOpen = (): void => {
    if (closed) throw new LogClosedError();
  };

  const checkId = (sessionId: string): string => {
    assertSessionId(sessionId);
    if (sessionId.length > MAX_POSTGRES_SESSION_ID_LENGTH) {
      throw new InvalidSessionIdError(sessionId);
    }
    return encodeSessionId(sessionId);
  };

  const readHead = async (key: string): Promise<Head> => {
    const result = await pool.query<{ head_seq: string; head_hash: string; v2: boolean | null; key_id: string | null }>({ name: names.head, text: sql.head, values: [key] });
    const row = result.rows[0];
    if (!row || Number(row.head_seq) === 0) return { seq: row ? Number(row.head_seq) : 0, hash: row ? row.head_hash : GENESIS_HASH, chain: defaultChain };
    return { seq: Number(row.head_seq), hash: row.head_hash, chain: row.v2 === true ? 2 : 1, ...(row.key_id !== null ? { keyId: row.key_id } : {}) };
  };

  /** The head an append chains onto, refused (ChainKeyMismatchError) when its event was not sealed with this log's key. */
  const readWriterHead = async (sessionId: string, key: string): Promise<Head> => {
    const head = await readHead(key);
    if (head.seq === 0) return head;
    const result = await pool.query<{ stored: string }>({ text: `SELECT stored FROM ${s}.events WHERE session_key = $1 AND seq = $2`, values: [key, head.seq] });
    const text = result.rows[0]?.stored;
    if (text !== undefined) assertTipSealedWith(sessionId, head.seq, text, chainKey);
    return head;
  };

  const writerOf = (sessionId: string, key: string): Writer => {
    let writer = writers.get(sessionId);
    if (!writer) {
      writer = { key, notifyTag: notifyTagOf(key), head: undefined, chain: defaultChain, queue: [], draining: undefined };
      writers.set(sessionId, writer);
    }
    return writer;
  };

  const maxEventBytes = options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
  /** The same limit and error as LevelDB's: the stored text of one event past `maxEventBytes`. */
  const checkEventSize = (sessionId: string, index: number, type: string, text: string): void => {
    if (text.length * 3 <= maxEventBytes) return;
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes <= maxEventBytes) return;
    throw new InvalidEventError({ sessionId, index, eventType: type, issues: [{ path: '', message: `stored size is ${bytes} bytes, more than maxEventBytes (${maxEventBytes})` }] });
  };

  /** Stages one queued append (or import) on `tip`: its rows and stored events, or the error it gets. */
  const stage = (
    sessionId: string,
    tip: Head,
    pending: Pending,
    chain: ChainVersion,
  ): { ok: true; rows: Row[]; stored: SessionEvent[]; tip: Head } | { ok: false; error: unknown } => {
    try {
      if (pending.imported) {
        const verified = verifyStoredTexts(sessionId, tip, pending.imported, importOptions);
        const last = verified[verified.length - 1];
        const rows = verified.map((v) => ({ seq: v.seq, type: v.type, at: v.at, prevHash: v.prevHash, hash: v.hash, text: v.text }));
        return { ok: true, rows, stored: [], tip: last ? { seq: last.seq, hash: last.hash, chain: chainVersionOf(JSON.parse(last.text) as Record<string, unknown>) } : tip };
      }
      if (pending.expectedSeq !== undefined && pending.expectedSeq !== tip.seq) {
        return { ok: false, error: new ExpectedSeqConflictError(sessionId, pending.expectedSeq, tip.seq) };
      }
      if (tip.seq + pending.events.length > MAX_SEQ) {
        return { ok: false, error: new SeqLimitError(sessionId) };
      }
      pending.at ??= toIso(clock());
      const at = pending.at;
      const rows: Row[] = [];
      const stored: SessionEvent[] = [];
      let prevHash = tip.hash;
      let seq = tip.seq;
      for (let index = 0; index < pending.events.length; index++) {
        const event = pending.events[index] as NewSessionEvent;
        seq += 1;
        const type = event['type'] as keyof typeof EVENT_VERSIONS;
        // The envelope in the order `read` decodes it, then type and payload (law 10: key order included).
        const full = unsealedEvent(sessionId, seq, at, EVENT_VERSIONS[type], prevHash, chain, pending.redactions?.[index], event, chain === 2 ? saltFrom(sessionId, salt, index) : undefined);
        const { hash, text } = sealEventAs(chain, prevHash, full, chainKey);
        checkEventSize(sessionId, seq - tip.seq - 1, type, text);
        rows.push({ seq, type, at, prevHash, hash, text });
        stored.push(full as unknown as SessionEvent);
        prevHash = hash;
      }
      return { ok: true, rows, stored, tip: { seq, hash: prevHash } };
    } catch (error) {
      return { ok: false, error };
    }
  };

  /** Writes `rows` if the session's head is still `from`; true when it was. */
  const conditionalWrite = async (sessionId: string, writer: Writer, from: Head, to: Head, rows: readonly Row[]): Promise<boolean> => {
    const key = writer.key;
    const one = rows.length === 1 ? rows[0] : undefined;
    if (one) {
      const result = await pool.query({
        name: names.writeOne,
        text: sql.writeOne,
        values: [key, textColumnOf(sessionId), one.seq, one.hash, from.seq, keyId ?? null, one.type, one.at, one.prevHash, one.text, ...announce(writer)],
      });
      return result.rowCount === 1;
    }
    const result = await pool.query({
      name: names.write,
      text: sql.write,
      values: [
        key,
        textColumnOf(sessionId),
        to.seq,
        to.hash,
        from.seq,
        keyId ?? null,
        rows.map((r) => r.seq),
        rows.map((r) => r.type),
        rows.map((r) => r.at),
        rows.map((r) => r.prevHash),
        rows.map((r) => r.hash),
        rows.map((r) => r.text),
        ...announce(writer),
      ],
    });
    return result.rowCount === 1;
  };

  // One drain loop per session in this process (group commit): every append queued while a write is
  // in flight goes into the next statement. Across processes the conditional write decides: a
  // group that finds the head moved re-reads it and is staged again, so appends without
  // expectedSeq always land and one with a stale expectedSeq is refused only against the real head.
  const drain = async (sessionId: string, writer: Writer): Promise<void> => {
    await undefined;
    try {
      while (writer.queue.length > 0) {
        const group = writer.queue.splice(0, maxGroup);
        try {
          let fresh = writer.head === undefined;
          let head = writer.head ?? (await readWriterHead(sessionId, writer.key));
          if (head.chain !== undefined) writer.chain = head.chain;
          for (let attempt = 0; ; attempt++) {
            if (attempt > MAX_RETRIES) throw new LogWriteError(sessionId, `gave up after ${MAX_RETRIES} lost races for the head`, false);
            let tip = head;
            let chain = writer.chain;
            const accepted: { pending: Pending; stored: SessionEvent[]; tip: Head }[] = [];
            const refused: { pending: Pending; error: unknown }[] = [];
            const rows: Row[] = [];
            for (const pending of group) {
              const staged = stage(sessionId, tip, pending, chain);
              if (!staged.ok) {
                refused.push({ pending, error: staged.error });
                continue;
              }
              rows.push(...staged.rows);
              tip = staged.tip;
              if (tip.chain !== undefined) chain = tip.chain;
              accepted.push({ pending, stored: staged.stored, tip });
            }
            if (refused.length > 0 && !fresh) {
              // refused against what this process last saw: check against the real head first
              head = await readWriterHead(sessionId, writer.key);
              if (head.chain !== undefined) writer.chain = head.chain;
              fresh = true;
              continue;
            }
            let moved: boolean;
            try {
              moved = rows.length === 0 || (await conditionalWrite(sessionId, writer, head, tip, rows));
            } catch (error) {
              // The statement failed: the server rolled it back, unless the connection was lost after the commit.
              // The events are there exactly when the session has this group's last hash at its seq.
              const written = closed ? undefined : await writtenAfterFailure(writer.key, tip);
              if (written !== true) throw closed ? new LogClosedError({ cause: error }) : new LogWriteError(sessionId, error, written);
              moved = true; // committed despite the error: the appends resolve
            }
            if (!moved) {
              head = await readWriterHead(sessionId, writer.key);
              if (head.chain !== undefined) writer.chain = head.chain;
              fresh = true;
              continue;
            }
            writer.head = tip;
            writer.chain = chain;
            for (const { pending, error } of refused) pending.reject(error);
            for (const { pending, stored, tip: after } of accepted) pending.resolve(stored, after);
            if (rows.length > 0) listener.poke(writer.notifyTag);
            break;
          }
        } catch (error) {
          writer.head = undefined; // re-read on the next append: the database is the truth
          // A store error before anything was sent (reading the head) wrote nothing; named errors pass as they are.
          const failure = error instanceof ContextLedgerError ? error : closed ? new LogClosedError({ cause: error }) : new LogWriteError(sessionId, error, false);
          for (const pending of group) pending.reject(failure);
        }
      }
    } finally {
      writer.draining = undefined;
      releaseIdleWriters();
    }
  };

  /**
   * After a failed write, whether the group is stored: true when the event at the group's last seq has its hash (a
   * statement writes all of its rows or none), false when there is no such event or another one, undefined when the
   * database cannot be read to tell.
   */
  const writtenAfterFailure = async (key: string, tip: Head): Promise<boolean | undefined> => {
    try {
      const result = await pool.query<{ hash: string }>({ text: `SELECT hash FROM ${s}.events WHERE session_key = $1 AND seq = $2`, values: [key, tip.seq] });
      return result.rows[0]?.hash === tip.hash;
    } catch {
      return undefined;
    }
  };

  /** Forgets idle writers past MAX_IDLE_WRITERS (their heads are read again on the next append), so the map does not grow with every session ever written. */
  const releaseIdleWriters = (): void => {
    if (writers.size <= MAX_IDLE_WRITERS) return;
    for (const [id, other] of writers) {
      if (writers.size <= MAX_IDLE_WRITERS) break;
      if (!other.draining && other.queue.length === 0) writers.delete(id);
    }
  };

  const enqueue = (sessionId: string, key: string, pending: Omit<Pending, 'resolve' | 'reject'>, resolve: Pending['resolve'], reject: Pending['reject']): void => {
    const writer = writerOf(sessionId, key);
    writer.queue.push({ ...pending, resolve, reject });
    if (!writer.draining) writer.draining = drain(sessionId, writer);
  };

  const decodeRow = (sessionId: string, seq: number, text: string): SessionEvent => {
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (cause) {
      throw new EventDecodeError({ sessionId, seq, issues: [{ path: '', message: `stored value is not JSON: ${(cause as Error).message}` }], cause });
    }
    const decoded = decodeEvent(raw, decodeOptions);
    if (E.isLeft(decoded)) throw new EventDecodeError({ sessionId, seq, issues: decoded.left.issues });
    const event = decoded.right;
    if (event.seq !== seq || event.sessionId !== sessionId) {
      throw new EventDecodeError({
        sessionId,
        seq,
        issues: [{ path: 'seq', message: `stored under seq ${seq} but says session ${JSON.stringify(event.sessionId)} seq ${event.seq}` }],
      });
    }
    return event;
  };

  type Page = (string | number)[][];

  /**
   * Pages of [seq, stored] rows (bounded memory: at most READ_AHEAD pages in flight), by seq range up
   * to the head read when the read starts (as a LevelDB iterator reads a snapshot). Seqs are dense,
   * so the ranges are known in advance and the next pages are asked for while the current one is
   * handed out. Returns the last seq it should have given; the caller names any that is missing.
   */
  const pages = async function* (key: string, fromSeq: number, toSeq: number, knownHead?: Head): AsyncGenerator<Page, number> {
    const fetch = (from: number, to: number): Promise<Page> => {
      const promise = pool.query({ name: names.page, text: sql.page, values: [key, from, to], rowMode: 'array' }).then((r) => r.rows as Page);
      promise.catch(() => {}); // observed when its turn comes; this only keeps an early exit from leaving it unhandled
      return promise;
    };
    const firstTo = Math.min(toSeq, fromSeq + pageSize - 1);
    let head = knownHead;
    const inFlight: Promise<Page>[] = [];
    if (head) inFlight.push(fetch(fromSeq, firstTo));
    else {
      // The head and the first page in one statement (one snapshot), so the page is never older than the head.
      const first = await pool.query({ name: names.firstPage, text: sql.firstPage, values: [key, fromSeq, firstTo], rowMode: 'array' });
      const rows = first.rows as [string, string, string | null, string | null][];
      head = rows[0] ? { seq: Number(rows[0][0]), hash: rows[0][1] } : { seq: 0, hash: GENESIS_HASH };
      inFlight.push(Promise.resolve(rows.filter((r) => r[2] !== null).map((r) => [r[2] as string, r[3] as string])));
    }
    const last = Math.min(toSeq, head.seq);
    let nextFrom = fromSeq + pageSize;
    while (inFlight.length > 0) {
      while (inFlight.length < READ_AHEAD && nextFrom <= last) {
        inFlight.push(fetch(nextFrom, Math.min(last, nextFrom + pageSize - 1)));
        nextFrom += pageSize;
      }
      const rows = await (inFlight.shift() as Promise<Page>);
      if (rows.length > 0) yield rows;
    }
    return last;
  };

  /**
   * The iterator behind `read` and `readStored`: checks the range on the first `next`, hands out
   * one page at a time without a generator turn per event, and names a missing seq.
   */
  const readRows = <T>(sessionId: string, readOptions: ReadOptions, map: (seq: number, text: string) => T): AsyncIterableIterator<T> => {
    let source: AsyncGenerator<Page, number> | undefined;
    let rows: Page = [];
    let index = 0;
    let expected = 1;
    let finished = false;
    const finish = async (): Promise<void> => {
      finished = true;
      rows = [];
      if (source) await source.return(0);
    };
    const iterator: AsyncIterableIterator<T> = {
      async next() {
        for (;;) {
          if (index < rows.length) {
            const row = rows[index++] as [string, string];
            const seq = Number(row[0]);
            try {
              if (seq !== expected) {
                throw new EventDecodeError({
                  sessionId,
                  seq: expected,
                  issues: [{ path: 'seq', message: `event ${expected} is missing (the next stored event is ${seq})` }],
                });
              }
              expected += 1;
              return { done: false, value: map(seq, row[1]) };
            } catch (error) {
              await finish();
              throw error;
            }
          }
          if (finished) return { done: true, value: undefined };
          try {
            if (!source) {
              ensureOpen();
              const key = checkId(sessionId);
              const fromSeq = Math.max(1, seqOption('fromSeq', readOptions.fromSeq) ?? 1);
              const toSeq = Math.min(MAX_SEQ, seqOption('toSeq', readOptions.toSeq) ?? MAX_SEQ);
              expected = fromSeq;
              if (toSeq < fromSeq) {
                finished = true;
                continue;
              }
              source = pages(key, fromSeq, toSeq);
            }
            const result = await source.next();
            if (result.done) {
              if (expected <= result.value) {
                throw new EventDecodeError({ sessionId, seq: expected, issues: [{ path: 'seq', message: `event ${expected} is missing (the head is ${result.value})` }] });
              }
              finished = true;
            } else {
              rows = result.value;
              index = 0;
            }
          } catch (error) {
            await finish();
            throw error;
          }
        }
      },
      async return() {
        await finish();
        return { done: true, value: undefined };
      },
      [Symbol.asyncIterator]() {
        return iterator;
      },
    };
    return iterator;
  };

  const checkpointAtOrBefore = async (sessionId: string, seq: number): Promise<StoredCheckpoint | undefined> => {
    ensureOpen();
    const key = checkId(sessionId);
    if (typeof seq !== 'number' || Number.isNaN(seq) || seq < 0) {
      throw new InvalidOptionsError('checkpointAtOrBefore', [{ path: 'seq', message: `must be a non-negative number, got ${String(seq)}` }]);
    }
    const head = await log.head(sessionId);
    let limit = Math.min(head, Math.floor(Math.min(seq, MAX_SEQ)));
    // The newest readable one at or below the limit; a damaged one is skipped, never trusted.
    while (limit >= 1) {
      const result = await pool.query<{ seq: string; body: string }>({ text: sql.checkpoints, values: [key, limit] });
      if (result.rows.length === 0) return undefined;
      for (const row of result.rows) {
        try {
          const parsed = JSON.parse(row.body) as StoredCheckpoint;
          if (parsed && typeof parsed === 'object' && typeof parsed.seq === 'number' && typeof parsed.hash === 'string') return parsed;
        } catch {
          // skip it
        }
      }
      limit = Number(result.rows[result.rows.length - 1]?.seq) - 1;
    }
    return undefined;
  };

  const erasure = createPostgresErasure({
    pool,
    schema: s,
    chainKey,
    writerOf,
    checkId,
    startDrain: (sessionId, writer) => {
      if (!writer.draining && writer.queue.length > 0) writer.draining = drain(sessionId, writer);
    },
    stamp: (sessionId) => stampOf(sessionId, clock),
    salt: (sessionId) => saltFrom(sessionId, salt),
    pageSize,
    defaultChain,
    afterWrite: (writer) => listener.poke(writer.notifyTag),
  });

  const log: SessionEventLog = {
    erase(sessionId, selector, eraseOptions) {
      try {
        ensureOpen();
        checkId(sessionId);
        return erasure.erase(sessionId, selector, eraseOptions);
      } catch (error) {
        return Promise.reject(error);
      }
    },

    deleteSession(sessionId) {
      try {
        ensureOpen();
        checkId(sessionId);
        return erasure.deleteSession(sessionId);
      } catch (error) {
        return Promise.reject(error);
      }
    },

    append(sessionId, events, appendOptions: AppendOptions = {}) {
      try {
        ensureOpen();
        const key = checkId(sessionId);
        const expectedSeq = expectedSeqOption(appendOptions.expectedSeq);
        let validated = validateBatch(sessionId, events) as unknown as NewSessionEvent[];
        let redactions: (readonly Redaction[] | undefined)[] | undefined;
        if (redact !== undefined) ({ events: validated, redactions } = redactBatch(sessionId, redact, validated));
        const pending = { events: validated, expectedSeq, imported: undefined, at: undefined, ...(redactions ? { redactions } : {}) };
        return new Promise<readonly SessionEvent[]>((resolve, reject) => enqueue(sessionId, key, pending, (stored) => resolve(stored), reject));
      } catch (error) {
        return Promise.reject(error);
      }
    },

    read(sessionId, readOptions: ReadOptions = {}) {
      if (readOptions.verify !== true) {
        return { [Symbol.asyncIterator]: () => readRows(sessionId, readOptions, (seq, text) => decodeRow(sessionId, seq, text)) };
      }
      // With verify: each row checked against the stored hash of the one before it (the same checks as the LevelDB log).
      return {
        [Symbol.asyncIterator]: async function* () {
          const fromSeq = Math.max(1, seqOption('fromSeq', readOptions.fromSeq) ?? 1);
          let prevHash: string | undefined = GENESIS_HASH;
          if (fromSeq > 1) {
            prevHash = undefined;
            for await (const text of readRows(sessionId, { fromSeq: fromSeq - 1, toSeq: fromSeq - 1 }, (_seq, t) => t)) {
              const hash = (JSON.parse(text) as { hash?: unknown }).hash;
              prevHash = typeof hash === 'string' ? hash : undefined;
            }
          }
          try {
            for await (const [seq, text] of readRows(sessionId, readOptions, (s, t): [number, string] => [s, t])) {
              if (prevHash === undefined) throw new ChainBrokenError(sessionId, seq - 1, `event ${seq - 1} is missing`);
              const link = checkLink(sessionId, seq, text, prevHash, chainKey);
              if (typeof link === 'string') throw new ChainBrokenError(sessionId, seq, link);
              prevHash = link.hash;
              yield decodeRow(sessionId, seq, text);
            }
          } catch (error) {
            if (error instanceof EventDecodeError && error.issues[0]?.path === 'seq' && error.seq !== undefined) {
              throw new ChainBrokenError(sessionId, error.seq, `event ${error.seq} is missing`);
            }
            throw error;
          }
        },
      };
    },

    readStored(sessionId, readOptions: ReadOptions = {}) {
      return { [Symbol.asyncIterator]: () => readRows(sessionId, readOptions, (_seq, text) => text) };
    },

    importStored(sessionId, storedTexts) {
      try {
        ensureOpen();
        const key = checkId(sessionId);
        const texts = Array.isArray(storedTexts) ? [...(storedTexts as string[])] : (storedTexts as string[]);
        return new Promise<ImportResult>((resolve, reject) =>
          enqueue(
            sessionId,
            key,
            { events: [], expectedSeq: undefined, imported: texts, at: undefined },
            (_stored, tip) => resolve({ imported: texts.length, head: tip.seq }),
            reject,
          ),
        );
      } catch (error) {
        return Promise.reject(error);
      }
    },

    async head(sessionId) {
      ensureOpen();
      return (await readHead(checkId(sessionId))).seq;
    },

    sessions() {
      return {
        [Symbol.asyncIterator]: async function* () {
          ensureOpen();
          let after = '';
          for (;;) {
            const result = await pool.query({ text: sql.sessions, values: [after, pageSize], rowMode: 'array' });
            const keys = result.rows as [string][];
            for (const [key] of keys) yield decodeSessionId(key);
            if (keys.length < pageSize) return;
            after = keys[keys.length - 1]?.[0] ?? after;
          }
        },
      };
    },

    async anchor(sessionId) {
      ensureOpen();
      const key = checkId(sessionId);
      const writer = writers.get(sessionId);
      if (writer?.draining) await writer.draining;
      const head = await readHead(key);
      return { seq: head.seq, hash: head.hash };
    },

    async verify(sessionId, verifyOptions: VerifyOptions = {}) {
      ensureOpen();
      const key = checkId(sessionId);
      const anchors = anchorsBySeq(verifyOptions.anchors);
      if (typeof anchors === 'string') throw new InvalidOptionsError('verify', [{ path: 'anchors', message: anchors }]);
      const writer = writers.get(sessionId);
      if (writer?.draining) await writer.draining;
      const broken = (seq: number, count: number, problem: string): VerifyResult => ({ valid: false, eventCount: count, firstBrokenSeq: seq, problem });
      const genesisAnchor = anchors.get(0);
      if (genesisAnchor !== undefined && genesisAnchor !== GENESIS_HASH) return broken(1, 0, 'the anchor at seq 0 is not the genesis hash');
      let expected = 1;
      let prevHash = GENESIS_HASH;
      let count = 0;
      const erasures = createErasureCheck();
      // The head first: events past it may be appended while this reads, and are not its business.
      const head = await readHead(key);
      const reading = pages(key, 1, head.seq, head);
      for (let next = await reading.next(); !next.done; next = await reading.next()) {
        const rows = next.value;
        for (const row of rows) {
          const seq = Number(row[0]);
          count += 1;
          if (seq !== expected) return broken(expected, count, `event ${expected} is missing`);
          const link = checkLink(sessionId, seq, row[1] as string, prevHash, chainKey);
          if (typeof link === 'string') {
            const { problem, keyed } = keyedVerifyProblem(seq, link, head.keyId, keyId);
            return keyed ? { ...broken(seq, count, problem), keyed } : broken(seq, count, problem);
          }
          const erasureProblem = erasures.add(seq, link.raw);
          if (erasureProblem !== undefined) return broken(seq, count, erasureProblem);
          const anchored = anchors.get(seq);
          if (anchored !== undefined && anchored !== link.hash) {
            return broken(seq, count, `event ${seq} does not match its anchor: the chain was rewritten at or before it`);
          }
          prevHash = link.hash;
          expected += 1;
        }
      }
      const rollback = rollbackOf(count, anchors);
      if (rollback) return rollback;
      if (head.seq !== count) return broken(count + 1, count, `head says ${head.seq} events but ${count} are stored`);
      if (count > 0 && head.hash !== prevHash) return broken(count, count, 'head hash does not match the last event');
      const unclaimed = erasures.unclaimed();
      if (unclaimed !== undefined) return broken(unclaimed, count, unclaimedProblem(unclaimed, erasures.isCopy(unclaimed)));
      return validWithErasures(count, erasures);
    },

    async putCheckpoint(sessionId, checkpoint: StoredCheckpoint, putOptions: PutCheckpointOptions = {}) {
      ensureOpen();
      const key = checkId(sessionId);
      if (!Number.isInteger(checkpoint.seq) || checkpoint.seq < 1) throw new InvalidCheckpointError(sessionId, checkpoint.seq, 'seq must be a positive integer');
      const band = putOptions.band;
      if (band !== undefined && (!Number.isInteger(band) || band < 1)) {
        throw new InvalidOptionsError('putCheckpoint', [{ path: 'band', message: `must be a positive integer, got ${String(band)}` }]);
      }
      const head = await log.head(sessionId);
      if (checkpoint.seq > head) {
        throw new InvalidCheckpointError(sessionId, checkpoint.seq, `it is past the head (${head})`);
      }
      const body = JSON.stringify(checkpoint);
      const values: unknown[] = [key, checkpoint.seq, String(checkpoint.hash), body];
      await pool.query(band === undefined ? { text: sql.putCheckpoint, values } : { text: sql.putCheckpointBand, values: [...values, band] });
    },

    latestCheckpoint(sessionId) {
      return checkpointAtOrBefore(sessionId, MAX_SEQ);
    },

    checkpointAtOrBefore(sessionId, seq) {
      return checkpointAtOrBefore(sessionId, seq);
    },

    subscribe(sessionId, subscribeOptions = {}) {
      return followSession(sessionId, subscribeOptions, {
        readFrom: (fromSeq) => log.read(sessionId, { fromSeq }),
        watch: (changed) => {
          ensureOpen();
          return listener.watch(checkId(sessionId), changed);
        },
        isClosed: () => closed,
        // no timer of its own: the listener's head poll (every pollMs, one statement for all) wakes it
      });
    },

    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([...writers.values()].map((w) => w.draining));
      await listener.close();
      if (ownsPool) await pool.end();
    },
  };
  registerWriterStates(log, () => writers.size);
  return log;
};
