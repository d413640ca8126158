// The engine over any abstract-level store (LevelDB on disk, memory-level): keys per session, batches, the head record, compaction after erasure.
import type { AbstractLevel } from 'abstract-level';
import { EventDecodeError } from '../events/index.js';
import type { EngineHead, EngineHeadRecord, EngineRow, HeldSession, SessionLogEngine, StoredRow } from './engine.js';
import { GENESIS_HASH } from './hash-chain.js';
import { MAX_SEQ, checkpointKey, checkpointRange, encodeSeq, eventKey, eventRange, headKey, headRange, seqOfKey, sessionIdOfHeadKey } from './keys.js';
import { boundedMemo } from './session-key.js';

export type StringLevel = AbstractLevel<string | Buffer | Uint8Array, string, string>;

export interface LevelEngineOptions {
  /** fsync every write (classic-level's `sync`; memory-level ignores it). */
  readonly sync?: boolean | undefined;
  /** Called once when `close()` has closed the store (openLevelLog releases the directory). */
  readonly onClose?: (() => void) | undefined;
}

const READ_CHUNK = 512;

/** Sessions whose event key prefix is kept (encoding an id costs a few string operations per UTF-16 unit). */
const MAX_PREFIXES = 1024;

/** The stored head record: absent, valid, or what is wrong with it (it is never trusted unchecked). */
const parseHeadRecord = (text: string | undefined): EngineHeadRecord | undefined => {
  if (text === undefined) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { problem: 'the head record is not JSON' };
  }
  const seq = (raw as { seq?: unknown } | null)?.seq;
  const hash = (raw as { hash?: unknown } | null)?.hash;
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0 || typeof hash !== 'string' || !/^[0-9a-f]{64}$/.test(hash)) {
    return { problem: `the head record is not { seq: a non-negative integer, hash: 64 hex digits }: ${text.slice(0, 120)}` };
  }
  const keyId = (raw as { keyId?: unknown }).keyId;
  return typeof keyId === 'string' ? { seq, hash, keyId } : { seq, hash };
};

/** The stored head record: a head, and for a keyed log its chain key id (the session says it is keyed). */
const headRecordText = (tip: { readonly seq: number; readonly hash: string }, keyId: string | undefined): string =>
  JSON.stringify(keyId === undefined ? { seq: tip.seq, hash: tip.hash } : { seq: tip.seq, hash: tip.hash, keyId });

/**
 * The engine over an opened abstract-level store with utf8 keys and values. One handle writes (LevelDB's directory
 * lock, openLevelLog's registry), so `write` is not conditional. A session's head is its last stored event; its head
 * record, written with its first batch, is the anchor verify checks and the listing of `sessions`.
 * @example const log = createSessionEventLog(createLevelEngine(db, { sync: true }), options)
 */
export const createLevelEngine = (db: StringLevel, options: LevelEngineOptions = {}): SessionLogEngine => {
  // `sync` is a classic-level write option (fsync); memory-level ignores it. It is only set when on:
  // abstract-level copies the batch options into every operation.
  const writeOptions = (options.sync === true ? { sync: true } : {}) as object;
  let closed = false;
  /**
   * Sessions with events whose head record does not hold (missing, damaged, or not matching the chain), found when a
   * head was read for a write: the next write puts a record at its tip. A session's first write always does.
   */
  const repair = new Set<string>();
  /** `eventKey(sessionId, seq)` is `eventKeyPrefix(sessionId) + encodeSeq(seq)`: the session part is encoded once. */
  const eventKeyPrefix = boundedMemo(MAX_PREFIXES, (sessionId) => {
    const key = eventKey(sessionId, 0);
    return key.slice(0, key.length - encodeSeq(0).length);
  });

  const storedHashAt = async (sessionId: string, seq: number): Promise<string | undefined> => {
    const text = await db.get(eventKey(sessionId, seq));
    if (text === undefined) return undefined;
    try {
      const hash = (JSON.parse(text) as { hash?: unknown } | null)?.hash;
      return typeof hash === 'string' ? hash : undefined;
    } catch {
      return undefined;
    }
  };

  /**
   * The last stored event (one reverse seek), never the head record alone, so a record that is missing, damaged or
   * ahead of the events (a store that lost its tail) can neither make an append overwrite an event nor leave a gap.
   */
  const lastEvent = async (sessionId: string): Promise<EngineHead | undefined> => {
    const [last] = (await db.iterator({ ...eventRange(sessionId, 1, MAX_SEQ), reverse: true, limit: 1 }).all()) as [string, string][];
    if (!last) return undefined;
    const seq = seqOfKey(last[0]);
    let raw: unknown;
    try {
      raw = JSON.parse(last[1]);
    } catch {
      raw = undefined;
    }
    const hash = (raw as { hash?: unknown } | undefined)?.hash;
    if ((raw as { seq?: unknown } | undefined)?.seq === seq && typeof hash === 'string') return { seq, hash, text: last[1] };
    throw new EventDecodeError({
      sessionId,
      seq,
      issues: [{ path: 'hash', message: 'the last stored event is damaged: there is no hash to chain an append onto' }],
    });
  };

  const headRecord = async (sessionId: string): Promise<EngineHeadRecord | undefined> => parseHeadRecord(await db.get(headKey(sessionId)));

  /**
   * Before a write: the head, and whether the head record holds (stored, readable, at or below the head, the chain has
   * its hash at its seq). The record is written once, with a session's first batch (a legacy store has it at an older
   * head); one that does not hold is rewritten by the next write, at its tip.
   */
  const headForWrite = async (sessionId: string): Promise<EngineHead | undefined> => {
    const [head, record] = await Promise.all([lastEvent(sessionId), headRecord(sessionId)]);
    let holds = head === undefined; // a first write puts the record anyway
    if (head !== undefined && record !== undefined && 'seq' in record && record.seq <= head.seq) {
      const hashThere = record.seq === head.seq ? head.hash : record.seq === 0 ? GENESIS_HASH : await storedHashAt(sessionId, record.seq);
      holds = hashThere === record.hash;
    }
    if (holds) repair.delete(sessionId);
    else repair.add(sessionId);
    return head;
  };

  const rows = async function* (sessionId: string, fromSeq: number, toSeq: number): AsyncGenerator<readonly StoredRow[], undefined, undefined> {
    // The next chunk is asked for before the current one is handed out, so reading overlaps decoding.
    const iterator = db.iterator(eventRange(sessionId, fromSeq, toSeq));
    try {
      let next = iterator.nextv(READ_CHUNK);
      for (;;) {
        const entries = (await next) as unknown as [string | number, string][];
        if (entries.length === 0) return undefined;
        next = iterator.nextv(READ_CHUNK);
        next.catch(() => {}); // observed by the next `await`; this only keeps an early exit from leaving it unhandled
        for (const entry of entries) entry[0] = seqOfKey(entry[0] as string); // the entries are ours: their keys become seqs in place
        yield entries as StoredRow[];
      }
    } finally {
      // waits for a read still in flight; after close() the store has closed it already
      await iterator.close().catch((error: unknown) => {
        if (!closed) throw error;
      });
    }
  };

  /**
   * Pushes the session's keys through LevelDB's compaction, so overwritten and deleted values leave its files. Called
   * before an erase's write too: a memtable flush keeps every version of a key, and LevelDB may place the flushed table
   * below the levels one compactRange then compacts; with the old versions flushed first, the rewrite's table lands
   * above them and is merged down through them.
   */
  const compactSession = async (sessionId: string): Promise<void> => {
    const compactRange = (db as unknown as { compactRange?: (start: string, end: string) => Promise<void> }).compactRange;
    if (typeof compactRange !== 'function') return; // memory-level: an overwritten value is gone already
    const events = eventRange(sessionId, 1, MAX_SEQ);
    const checkpoints = checkpointRange(sessionId);
    await compactRange.call(db, events.gte, events.lte);
    await compactRange.call(db, checkpoints.gte, checkpoints.lt);
    await compactRange.call(db, headKey(sessionId), headKey(sessionId));
  };

  const checkpointKeys = async (sessionId: string): Promise<string[]> => (await db.keys(checkpointRange(sessionId)).all()) as string[];

  const put = (prefix: string, row: { readonly seq: number; readonly text: string }) => ({ type: 'put' as const, key: prefix + encodeSeq(row.seq), value: row.text });

  const engine: SessionLogEngine = {
    singleWriter: true,

    head: (sessionId, forWrite) => (forWrite ? headForWrite(sessionId) : lastEvent(sessionId)),

    headRecord,

    write(sessionId, { base, tip, rows: written, keyId }) {
      const prefix = eventKeyPrefix(sessionId);
      // The head record goes with the session's first batch (or repairs one that does not hold); after that a batch is
      // only its events, and a one-event append is a plain put.
      const withRecord = base.seq === 0 || repair.has(sessionId);
      const one = written.length === 1 ? (written[0] as EngineRow) : undefined;
      if (one && !withRecord) return db.put(prefix + encodeSeq(one.seq), one.text, writeOptions);
      const ops: { type: 'put'; key: string; value: string }[] = written.map((row) => put(prefix, row));
      if (!withRecord) return db.batch(ops, writeOptions);
      ops.push({ type: 'put', key: headKey(sessionId), value: headRecordText(tip, keyId) });
      return db.batch(ops, writeOptions).then(() => {
        repair.delete(sessionId);
      });
    },

    rows,

    async *sessions() {
      const iterator = db.keys(headRange);
      try {
        for (;;) {
          const keys = (await iterator.nextv(READ_CHUNK)) as string[];
          if (keys.length === 0) return;
          for (const key of keys) yield sessionIdOfHeadKey(key);
        }
      } finally {
        await iterator.close().catch((error: unknown) => {
          if (!closed) throw error;
        });
      }
    },

    async putCheckpoint(sessionId, checkpoint, band) {
      // Sparse older checkpoints: with a band, one per band (older ones in the new one's band go); without, the newest
      // older one (a fallback). Removed in the same batch as the put.
      const older = ((await db.keys({ ...checkpointRange(sessionId), reverse: true }).all()) as string[]).filter((key) => seqOfKey(key) < checkpoint.seq);
      const stale = band === undefined ? older.slice(1) : older.filter((key) => Math.floor(seqOfKey(key) / band) === Math.floor(checkpoint.seq / band));
      await db.batch(
        [{ type: 'put', key: checkpointKey(sessionId, checkpoint.seq), value: checkpoint.text }, ...stale.map((key) => ({ type: 'del' as const, key }))],
        writeOptions,
      );
    },

    async *checkpoints(sessionId, atOrBefore) {
      const iterator = db.iterator({ gte: checkpointRange(sessionId).gte, lte: checkpointKey(sessionId, atOrBefore), reverse: true });
      try {
        for (;;) {
          const entries = (await iterator.nextv(8)) as [string, string][];
          if (entries.length === 0) return;
          for (const [, text] of entries) yield text;
        }
      } finally {
        await iterator.close();
      }
    },

    // The log keeps its own appends out while `work` runs, and the directory lock every other process: an erase is one
    // batch, with LevelDB's compaction before and after it so no old version of a rewritten value stays in the files (an
    // erase that finds nothing left to erase compacts too: a re-run after a crash between the batch and the compaction
    // finishes it).
    async hold(sessionId, work) {
      const held: HeldSession = {
        head: () => headForWrite(sessionId),
        rows: (fromSeq, toSeq) => rows(sessionId, fromSeq, toSeq),
        async rewrite({ replace, append, checkpointsFrom, keyId }) {
          const prefix = eventKeyPrefix(sessionId);
          const stale = (await checkpointKeys(sessionId)).filter((key) => seqOfKey(key) >= checkpointsFrom);
          const ops: ({ type: 'put'; key: string; value: string } | { type: 'del'; key: string })[] = [
            ...replace.map((row) => put(prefix, row)),
            put(prefix, append),
            ...stale.map((key) => ({ type: 'del' as const, key })),
          ];
          const withRecord = repair.has(sessionId);
          if (withRecord) ops.push({ type: 'put', key: headKey(sessionId), value: headRecordText(append, keyId) });
          await compactSession(sessionId);
          await db.batch(ops, writeOptions);
          if (withRecord) repair.delete(sessionId);
        },
        async remove() {
          const events = (await db.keys(eventRange(sessionId, 1, MAX_SEQ)).all()) as string[];
          const ops = [...events, ...(await checkpointKeys(sessionId)), headKey(sessionId)].map((key) => ({ type: 'del' as const, key }));
          await compactSession(sessionId);
          await db.batch(ops, writeOptions);
          repair.delete(sessionId);
          return events.length;
        },
      };
      const result = await work(held);
      await compactSession(sessionId);
      return result;
    },

    async close() {
      closed = true;
      try {
        await db.close();
      } finally {
        options.onClose?.();
      }
    },
  };
  return engine;
};
