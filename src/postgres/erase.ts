// erase and deleteSession on PostgreSQL: one transaction that locks the session's head row, so appends from any process wait for it.
import type { Pool, PoolClient } from 'pg';
import { EVENT_VERSIONS } from '../events/index.js';
import { checkLink } from '../log/chain-check.js';
import { LogWriteError } from '../log/errors.js';
import { ErasureRefusedError, eraseOptionsOf, erasedStoredText, selectedSeqs, type EraseResult, type EraseSelector, type EraseOptions, type ErasedMark } from '../log/erasure.js';
import { GENESIS_HASH, chainVersionOf, sealEventAs, type ChainKey, type ChainVersion } from '../log/hash-chain.js';
import { unsealedEvent } from '../log/store.js';
import { erasedEventOf } from '../log/store-erase.js';
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

  const erase = (sessionId: string, selector: EraseSelector, options: EraseOptions): Promise<EraseResult> =>
    exclusive(sessionId, (writer) =>
      inTransaction(sessionId, async (client) => {
        const checked = eraseOptionsOf(options);
        const key = writer.key;
        // The head row, locked: appends from any process wait until this commits.
        const headRow = await client.query<{ head_seq: string; head_hash: string }>(`SELECT head_seq, head_hash FROM ${s}.sessions WHERE session_key = $1 FOR UPDATE`, [key]);
        const row = headRow.rows[0];
        const head = row ? { seq: Number(row.head_seq), hash: row.head_hash } : { seq: 0, hash: GENESIS_HASH };
        const all = 'all' in (selector as object);
        const seqs = selectedSeqs(sessionId, selector, head.seq);
        const found = await client.query<{ seq: string; stored: string }>(`SELECT seq, stored FROM ${s}.events WHERE session_key = $1 AND seq = ANY($2::bigint[]) ORDER BY seq`, [key, seqs]);
        const bySeq = new Map(found.rows.map((r) => [Number(r.seq), r.stored]));
        const last = await client.query<{ stored: string }>(`SELECT stored FROM ${s}.events WHERE session_key = $1 AND seq = $2`, [key, head.seq]);
        const lastText = last.rows[0]?.stored;
        const chain: ChainVersion = lastText === undefined ? context.defaultChain : chainVersionOf(JSON.parse(lastText) as Record<string, unknown>);
        const targets: { seq: number; raw: Record<string, unknown> }[] = [];
        for (const seq of seqs) {
          const text = bySeq.get(seq);
          let raw: Record<string, unknown> | undefined;
          try {
            raw = text === undefined ? undefined : (JSON.parse(text) as Record<string, unknown>);
          } catch {
            raw = undefined;
          }
          if (!raw || typeof raw['hash'] !== 'string') throw new ErasureRefusedError(sessionId, 'the event is missing or damaged (run verify)', seq);
          if (raw['type'] === 'event.erased') {
            if (all) continue;
            throw new ErasureRefusedError(sessionId, 'it is an event.erased event (the record of an erasure is kept)', seq);
          }
          if (raw['erased'] !== undefined) continue;
          const self = checkLink(sessionId, seq, text as string, String(raw['prevHash']), context.chainKey);
          if (typeof self === 'string') throw new ErasureRefusedError(sessionId, `the event is damaged (${self}); run verify`, seq);
          targets.push({ seq, raw });
        }
        if (targets.length === 0) return { erased: [], seq: undefined };
        const erasedSeqs = targets.map((t) => t.seq);
        const event = erasedEventOf(erasedSeqs, checked);
        const at = context.stamp(sessionId);
        const seq = head.seq + 1;
        const full = unsealedEvent(sessionId, seq, at, EVENT_VERSIONS['event.erased'], head.hash, chain, undefined, event);
        const { hash, text } = sealEventAs(chain, head.hash, full, context.chainKey);
        const mark: ErasedMark = { seq, at, reason: checked.reason, ...(checked.by === undefined ? {} : { by: checked.by }) };
        await client.query(
          `UPDATE ${s}.events AS e SET stored = u.stored FROM unnest($2::bigint[], $3::text[]) AS u(seq, stored) WHERE e.session_key = $1 AND e.seq = u.seq`,
          [key, erasedSeqs, targets.map((t) => erasedStoredText(t.raw, mark))],
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
        await client.query(`DELETE FROM ${s}.checkpoints WHERE session_key = $1 AND seq >= $2`, [key, erasedSeqs[0]]);
        context.afterWrite(writer);
        return { erased: erasedSeqs, seq };
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
