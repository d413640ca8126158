// The engine over PostgreSQL: SQL on a pool, the conditional head-row upsert, a transaction holding the head row, LISTEN/NOTIFY and a head poll.
import type { Pool, PoolClient } from 'pg';
import type { EngineHead, EngineHeadRecord, EngineRow, HeldSession, SessionLogEngine, StoredRow } from '../log/engine.js';
import { boundedMemo, decodeSessionId, encodeSessionId } from '../log/session-key.js';
import { createSessionListener, notifyTagOf } from './listener.js';
import { channelOf, quoteSchema } from './schema.js';

export interface PostgresEngineOptions {
  /** The schema (namespace) of the tables (checked: it is written into SQL). */
  readonly schema: string;
  /** End the pool on `close` (a pool made from a connection string). */
  readonly ownsPool: boolean;
  /** Events per page when reading. */
  readonly pageSize: number;
  /** Announce each write with NOTIFY. */
  readonly notify: boolean;
  /** How often the heads of watched sessions are polled. */
  readonly pollMs: number;
}

const LONE_OR_NUL = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
/** The id as PostgreSQL text can hold it, or null (NUL or a lone surrogate would be rejected or replaced). */
const textColumnOf = (sessionId: string): string | null => (LONE_OR_NUL.test(sessionId) ? null : sessionId);

/** Read pages in flight at once. */
const READ_AHEAD = 3;

type Page = [string | number, string][];

/** A page of `[seq, stored]` rows with the seqs as numbers (in place: the rows are ours). */
const asStoredRows = (rows: Page): StoredRow[] => {
  for (const row of rows) row[0] = Number(row[0]);
  return rows as StoredRow[];
};

/**
 * The engine over a pool and a migrated schema. Rows are keyed by the session's hex key (src/log/keys.ts: lossless for
 * any id); the `sessions` row is each session's head, which a write moves with one conditional upsert (any number of
 * processes write, so `singleWriter` is false).
 */
export const createPostgresEngine = (pool: Pool, options: PostgresEngineOptions): SessionLogEngine => {
  const { schema, pageSize, notify } = options;
  const s = quoteSchema(schema);
  const channel = channelOf(schema);
  const listener = createSessionListener(pool, {
    channel,
    pollMs: options.pollMs,
    headsSql: `SELECT session_key, head_seq FROM ${s}.sessions WHERE session_key = ANY($1::text[])`,
    headsName: `cl_${schema}_heads`,
  });

  const sql = {
    head: `SELECT head_seq, head_hash FROM ${s}.sessions WHERE session_key = $1`,
    // the head with the stored text of its event (the log reads its chain version and key from it)
    headForWrite: `SELECT h.head_seq, h.head_hash, (SELECT e.stored FROM ${s}.events e WHERE e.session_key = h.session_key AND e.seq = h.head_seq) AS stored
  FROM ${s}.sessions h WHERE h.session_key = $1`,
    headRecord: `SELECT head_seq, head_hash, key_id FROM ${s}.sessions WHERE session_key = $1`,
    // One autocommit statement per group: move the head only if it is still at the base, write the events only if the
    // head moved, and with `notify` announce them on commit (without it the statement ends in `SELECT 1`: subscribers
    // find them by the head poll). A new session's row gets the log's chain key id ($6, NULL without a key); later
    // writes leave it.
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
    // The head and the first page in one statement (one snapshot), so the page is never older than the head.
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

  // Prepared once per connection (named), so the server parses and plans them once. The write statements differ with
  // `notify`, so their names do too (two logs may share a pool).
  const quiet = notify ? '' : 'q';
  const names = {
    head: `cl_${schema}_head`,
    headForWrite: `cl_${schema}_headw`,
    write: `cl_${schema}_write${quiet}`,
    writeOne: `cl_${schema}_write1${quiet}`,
    page: `cl_${schema}_page`,
    firstPage: `cl_${schema}_first`,
  };

  /** `encodeSessionId` is a few string operations per UTF-16 unit: the keys (and NOTIFY tags) of recent sessions are kept. */
  const keyOf = boundedMemo(1024, encodeSessionId);
  const tagOf = boundedMemo(1024, notifyTagOf);

  const head = async (sessionId: string, forWrite = false): Promise<EngineHead | undefined> => {
    const key = keyOf(sessionId);
    if (!forWrite) {
      const result = await pool.query({ name: names.head, text: sql.head, values: [key], rowMode: 'array' });
      const row = result.rows[0] as [string, string] | undefined;
      return row ? { seq: Number(row[0]), hash: row[1] } : undefined;
    }
    const result = await pool.query({ name: names.headForWrite, text: sql.headForWrite, values: [key], rowMode: 'array' });
    const row = result.rows[0] as [string, string, string | null] | undefined;
    return row ? { seq: Number(row[0]), hash: row[1], text: row[2] ?? undefined } : undefined;
  };

  /**
   * Pages of `[seq, stored]` rows (at most READ_AHEAD in flight), by seq range up to the head read when the read starts
   * (as a LevelDB iterator reads a snapshot). Seqs are dense, so the ranges are known in advance and the next pages are
   * asked for while the current one is handed out. Returns the last seq it should have given.
   */
  const rows = async function* (sessionId: string, fromSeq: number, toSeq: number): AsyncGenerator<readonly StoredRow[], number, undefined> {
    const key = keyOf(sessionId);
    const fetch = (from: number, to: number): Promise<Page> => {
      const promise = pool.query({ name: names.page, text: sql.page, values: [key, from, to], rowMode: 'array' }).then((r) => r.rows as Page);
      promise.catch(() => {}); // observed when its turn comes; this only keeps an early exit from leaving it unhandled
      return promise;
    };
    const firstTo = Math.min(toSeq, fromSeq + pageSize - 1);
    const first = await pool.query({ name: names.firstPage, text: sql.firstPage, values: [key, fromSeq, firstTo], rowMode: 'array' });
    const firstRows = first.rows as [string, string, string | null, string | null][];
    const headSeq = firstRows[0] ? Number(firstRows[0][0]) : 0;
    const inFlight: Promise<Page>[] = [Promise.resolve(firstRows.filter((r) => r[2] !== null).map((r) => [r[2] as string, r[3] as string]))];
    const last = Math.min(toSeq, headSeq);
    let nextFrom = fromSeq + pageSize;
    while (inFlight.length > 0) {
      while (inFlight.length < READ_AHEAD && nextFrom <= last) {
        inFlight.push(fetch(nextFrom, Math.min(last, nextFrom + pageSize - 1)));
        nextFrom += pageSize;
      }
      const page = await (inFlight.shift() as Promise<Page>);
      if (page.length > 0) yield asStoredRows(page);
    }
    return last;
  };

  const writeValues = (sessionId: string, key: string, base: { seq: number }, tip: { seq: number; hash: string }, written: readonly EngineRow[], keyId: string | undefined) => {
    const announce = notify ? [channel, tagOf(key)] : [];
    const one = written.length === 1 ? written[0] : undefined;
    if (one) {
      return {
        name: names.writeOne,
        text: sql.writeOne,
        values: [key, textColumnOf(sessionId), one.seq, one.hash, base.seq, keyId ?? null, one.type, one.at, one.prevHash, one.text, ...announce],
      };
    }
    return {
      name: names.write,
      text: sql.write,
      values: [
        key,
        textColumnOf(sessionId),
        tip.seq,
        tip.hash,
        base.seq,
        keyId ?? null,
        written.map((r) => r.seq),
        written.map((r) => r.type),
        written.map((r) => r.at),
        written.map((r) => r.prevHash),
        written.map((r) => r.hash),
        written.map((r) => r.text),
        ...announce,
      ],
    };
  };

  /** Runs `work` in a transaction on one client: committed when it resolves, rolled back when it rejects. */
  const inTransaction = async <T>(work: (client: PoolClient) => Promise<T>): Promise<T> => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      try {
        const result = await work(client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      }
    } finally {
      client.release();
    }
  };

  const engine: SessionLogEngine = {
    singleWriter: false,

    head,

    async headRecord(sessionId): Promise<EngineHeadRecord | undefined> {
      const result = await pool.query({ text: sql.headRecord, values: [keyOf(sessionId)], rowMode: 'array' });
      const row = result.rows[0] as [string, string, string | null] | undefined;
      if (!row) return undefined;
      return row[2] === null ? { seq: Number(row[0]), hash: row[1] } : { seq: Number(row[0]), hash: row[1], keyId: row[2] };
    },

    async write(sessionId, { base, tip, rows: written, keyId }) {
      const result = await pool.query(writeValues(sessionId, keyOf(sessionId), base, tip, written, keyId));
      return result.rowCount === 1;
    },

    rows,

    async *sessions() {
      let after = '';
      for (;;) {
        const result = await pool.query({ text: sql.sessions, values: [after, pageSize], rowMode: 'array' });
        const found = result.rows as [string][];
        for (const [key] of found) yield decodeSessionId(key);
        if (found.length < pageSize) return;
        after = found[found.length - 1]?.[0] ?? after;
      }
    },

    async putCheckpoint(sessionId, checkpoint, band) {
      const values: unknown[] = [keyOf(sessionId), checkpoint.seq, checkpoint.hash, checkpoint.text];
      await pool.query(band === undefined ? { text: sql.putCheckpoint, values } : { text: sql.putCheckpointBand, values: [...values, band] });
    },

    async *checkpoints(sessionId, atOrBefore) {
      const key = keyOf(sessionId);
      let limit = atOrBefore;
      while (limit >= 1) {
        const result = await pool.query<{ seq: string; body: string }>({ text: sql.checkpoints, values: [key, limit] });
        for (const row of result.rows) yield row.body;
        if (result.rows.length < 16) return;
        limit = Number(result.rows[result.rows.length - 1]?.seq) - 1;
      }
    },

    // One transaction that locks the session's head row (FOR UPDATE): appends from any process wait until it commits.
    hold(sessionId, work) {
      const key = keyOf(sessionId);
      return inTransaction(async (client) => {
        const locked = await client.query({ text: `SELECT head_seq, head_hash FROM ${s}.sessions WHERE session_key = $1 FOR UPDATE`, values: [key], rowMode: 'array' });
        const lockedRow = locked.rows[0] as [string, string] | undefined;
        const held: HeldSession = {
          async head() {
            if (!lockedRow) return undefined;
            const seq = Number(lockedRow[0]);
            const last = await client.query<{ stored: string }>(`SELECT stored FROM ${s}.events WHERE session_key = $1 AND seq = $2`, [key, seq]);
            return { seq, hash: lockedRow[1], text: last.rows[0]?.stored };
          },
          async *rows(fromSeq, toSeq) {
            let after = fromSeq - 1;
            for (;;) {
              const page = await client.query({
                text: `SELECT seq, stored FROM ${s}.events WHERE session_key = $1 AND seq > $2 AND seq <= $3 ORDER BY seq LIMIT $4`,
                values: [key, after, toSeq, pageSize],
                rowMode: 'array',
              });
              const found = page.rows as Page;
              if (found.length === 0) return;
              yield asStoredRows(found);
              if (found.length < pageSize) return;
              after = Number(found[found.length - 1]?.[0]);
            }
          },
          async rewrite({ replace, append, checkpointsFrom }) {
            await client.query(
              `UPDATE ${s}.events AS e SET stored = u.stored FROM unnest($2::bigint[], $3::text[]) AS u(seq, stored) WHERE e.session_key = $1 AND e.seq = u.seq`,
              [key, replace.map((w) => w.seq), replace.map((w) => w.text)],
            );
            await client.query(`INSERT INTO ${s}.events (session_key, seq, type, at, prev_hash, hash, stored) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [
              key,
              append.seq,
              append.type,
              append.at,
              append.prevHash,
              append.hash,
              append.text,
            ]);
            await client.query(`UPDATE ${s}.sessions SET head_seq = $2, head_hash = $3, updated_at = now() WHERE session_key = $1`, [key, append.seq, append.hash]);
            await client.query(`DELETE FROM ${s}.checkpoints WHERE session_key = $1 AND seq >= $2`, [key, checkpointsFrom]);
          },
          async remove() {
            const deleted = await client.query(`DELETE FROM ${s}.events WHERE session_key = $1`, [key]);
            await client.query(`DELETE FROM ${s}.checkpoints WHERE session_key = $1`, [key]);
            await client.query(`DELETE FROM ${s}.sessions WHERE session_key = $1`, [key]);
            return deleted.rowCount ?? 0;
          },
        };
        return work(held);
      });
    },

    watch: (sessionId, changed) => listener.watch(keyOf(sessionId), changed),

    async close() {
      try {
        await listener.close();
      } finally {
        if (options.ownsPool) await pool.end();
      }
    },
  };
  return engine;
};
