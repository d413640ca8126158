// erase and deleteSession on PostgreSQL: one transaction that locks the session's head row, so appends from any process wait for it.
import type { Pool, PoolClient } from 'pg';
import { EVENT_VERSIONS } from '../events/index.js';
import { LogWriteError } from '../log/errors.js';
import { ErasureRefusedError, eraseOptionsOf, type EraseResult, type EraseSelector, type EraseOptions } from '../log/erasure.js';
import { planErasure } from '../log/erasure-plan.js';
import { GENESIS_HASH, chainVersionOf, sealEventAs, type ChainKey, type ChainVersion } from '../log/hash-chain.js';
import { unsealedEvent } from '../log/store.js';

import type { DeleteSessionResult } from '../log/types.js';

interface ErasureWriter {
  head: { readonly seq: number; readonly hash: string } | undefined;
  chain: ChainVersion;
  draining: Promise<void> | undefined;
  readonly queue: unknown[];
  readonly key: string;
}

export interface PostgresErasureContext<W extends ErasureWriter> {
  readonly pool: Pool;
  /** The quoted schema. */
  readonly schema: string;
  readonly chainKey: ChainKey | undefined;
  readonly writerOf: (sessionId: string, key: string) => W;
  readonly checkId: (sessionId: string) => string;
  readonly startDrain: (sessionId: string, writer: W) => void;
  readonly stamp: (sessionId: string) => string;
  /** A content salt for a chain-version-2 event. */
  readonly salt: (sessionId: string) => string;
  /** Events read per page while an erase reads the session for copies (the log's `pageSize`). */
  readonly pageSize: number;
  readonly defaultChain: ChainVersion;
  readonly afterWrite: (writer: W) => void;
}

export const createPostgresErasure = <W extends ErasureWriter>(context: PostgresErasureContext<W>) => {
  const { pool, schema: s } = context;

  /** Runs `work` with this process's writer of the session to itself (other processes wait on the row lock). */
  const exclusive = async <T>(sessionId: string, work: (writer: W) => Promise<T>): Promise<T> => {
    const key = context.checkId(sessionId);
    let writer: W;
    for (;;) {
      writer = context.writerOf(sessionId, key);
      if (!writer.draining) break;
      await writer.draining.catch(() => {});
    }
    let release!: () => void;
    writer.draining = new Promise<void>((resolve) => {
      release = resolve;
    });
    try {
      return await work(writer);
    } finally {
      writer.head = undefined; // the next append re-reads the head
      writer.draining = undefined;
      release();
      context.startDrain(sessionId, writer);
    }
  };

  const inTransaction = async <T>(sessionId: string, work: (client: PoolClient) => Promise<T>): Promise<T> => {
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
    } catch (error) {
      if (error instanceof ErasureRefusedError || (error as { name?: string }).name === 'InvalidOptionsError') throw error;
      throw new LogWriteError(sessionId, error);
    } finally {
      client.release();
    }
  };

  /** The session's stored events from `fromSeq` to `toSeq`, in seq order, a page at a time (inside the transaction). */
  async function* storedEvents(client: PoolClient, key: string, fromSeq: number, toSeq: number): AsyncIterable<{ seq: number; text: string }> {
    let after = fromSeq - 1;
    for (;;) {
      const page = await client.query<{ seq: string; stored: string }>(
        `SELECT seq, stored FROM ${s}.events WHERE session_key = $1 AND seq > $2 AND seq <= $3 ORDER BY seq LIMIT $4`,
        [key, after, toSeq, context.pageSize],
      );
      for (const row of page.rows) yield { seq: Number(row.seq), text: row.stored };
      if (page.rows.length < context.pageSize) return;
      after = Number(page.rows[page.rows.length - 1]!.seq);
    }
  }

  const erase = (sessionId: string, selector: EraseSelector, options: EraseOptions): Promise<EraseResult> =>
    exclusive(sessionId, (writer) =>
      inTransaction(sessionId, async (client) => {
        const checked = eraseOptionsOf(options);
        const key = writer.key;
        // The head row, locked: appends from any process wait until this commits.
        const headRow = await client.query<{ head_seq: string; head_hash: string }>(`SELECT head_seq, head_hash FROM ${s}.sessions WHERE session_key = $1 FOR UPDATE`, [key]);
        const row = headRow.rows[0];
        const head = row ? { seq: Number(row.head_seq), hash: row.head_hash } : { seq: 0, hash: GENESIS_HASH };
        const last = await client.query<{ stored: string }>(`SELECT stored FROM ${s}.events WHERE session_key = $1 AND seq = $2`, [key, head.seq]);
        const lastText = last.rows[0]?.stored;
        const chain: ChainVersion = lastText === undefined ? context.defaultChain : chainVersionOf(JSON.parse(lastText) as Record<string, unknown>);
        const seq = head.seq + 1;
        const at = context.stamp(sessionId);
        const plan = await planErasure({
          sessionId,
          selector,
          options: checked,
          head: head.seq,
          erasedSeq: seq,
          at,
          chainKey: context.chainKey,
          events: (fromSeq) => storedEvents(client, key, fromSeq, head.seq),
        });
        if (!plan) return { erased: [], seq: undefined };
        const full = unsealedEvent(sessionId, seq, at, EVENT_VERSIONS['event.erased'], head.hash, chain, undefined, plan.event, chain === 2 ? context.salt(sessionId) : undefined);
        const { hash, text } = sealEventAs(chain, head.hash, full, context.chainKey);
        await client.query(
          `UPDATE ${s}.events AS e SET stored = u.stored FROM unnest($2::bigint[], $3::text[]) AS u(seq, stored) WHERE e.session_key = $1 AND e.seq = u.seq`,
          [key, plan.writes.map((w) => w.seq), plan.writes.map((w) => w.text)],
        );
        await client.query(`INSERT INTO ${s}.events (session_key, seq, type, at, prev_hash, hash, stored) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [
          key,
          seq,
          'event.erased',
          at,
          head.hash,
          hash,
          text,
        ]);
        await client.query(`UPDATE ${s}.sessions SET head_seq = $2, head_hash = $3, updated_at = now() WHERE session_key = $1`, [key, seq, hash]);
        await client.query(`DELETE FROM ${s}.checkpoints WHERE session_key = $1 AND seq >= $2`, [key, Math.min(...plan.writes.map((w) => w.seq))]);
        context.afterWrite(writer);
        return { erased: plan.erased, seq, ...(plan.copies.length > 0 ? { copies: plan.copies.map((c) => c.seq) } : {}) };
      }),
    );

  const deleteSession = (sessionId: string): Promise<DeleteSessionResult> =>
    exclusive(sessionId, (writer) =>
      inTransaction(sessionId, async (client) => {
        const key = writer.key;
        await client.query(`SELECT 1 FROM ${s}.sessions WHERE session_key = $1 FOR UPDATE`, [key]);
        const deleted = await client.query(`DELETE FROM ${s}.events WHERE session_key = $1`, [key]);
        await client.query(`DELETE FROM ${s}.checkpoints WHERE session_key = $1`, [key]);
        await client.query(`DELETE FROM ${s}.sessions WHERE session_key = $1`, [key]);
        return { deleted: deleted.rowCount ?? 0 };
      }),
    );

  return { erase, deleteSession };
};
