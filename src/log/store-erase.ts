// erase and deleteSession for the abstract-level store: exclusive per session, one atomic batch, then compaction of the session's keys.
import type { NewSessionEvent } from '../events/index.js';
import { LogClosedError, LogWriteError } from './errors.js';
import { eraseOptionsOf, type EraseOptions, type EraseResult, type EraseSelector } from './erasure.js';
import { planErasure } from './erasure-plan.js';
import { sealEventAs, type ChainKey, type ChainVersion } from './hash-chain.js';
import { MAX_SEQ, checkpointRange, eventKey, eventRange, headKey, seqOfKey } from './keys.js';
import type { Redaction } from './redact.js';
import type { AbstractLevel } from 'abstract-level';
import type { DeleteSessionResult } from './types.js';

type StringLevel = AbstractLevel<string | Buffer | Uint8Array, string, string>;

interface Head {
  readonly seq: number;
  readonly hash: string;
}

/** The parts of a session's writer that erase and deleteSession use. */
interface ExclusiveWriter {
  head: Head | undefined;
  recordHolds: boolean;
  chain: ChainVersion;
  draining: Promise<void> | undefined;
  readonly queue: unknown[];
}

/** What the store hands to {@link createErasure}. */
export interface ErasureContext<W extends ExclusiveWriter> {
  readonly db: StringLevel;
  readonly chainKey: ChainKey | undefined;
  readonly writeOptions: object;
  readonly writerOf: (sessionId: string) => W;
  readonly startDrain: (sessionId: string, writer: W) => void;
  readonly loadWriterHead: (sessionId: string, writer: W) => Promise<Head>;
  readonly stamp: (sessionId: string) => string;
  readonly unsealedEvent: (
    sessionId: string,
    seq: number,
    at: string,
    v: number,
    prevHash: string,
    chain: ChainVersion,
    redactions: readonly Redaction[] | undefined,
    event: NewSessionEvent,
    salt?: string,
  ) => Record<string, unknown>;
  /** A content salt for a chain-version-2 event. */
  readonly salt: (sessionId: string) => string;
  readonly version: (type: 'event.erased') => number;
  readonly afterWrite: (sessionId: string) => void;
  readonly isClosed: () => boolean;
}


/** erase and deleteSession over an abstract-level store (LevelDB or memory-level). */
export const createErasure = <W extends ExclusiveWriter>(context: ErasureContext<W>) => {
  const { db } = context;

  /** Runs `work` with the session's writer to itself: appends made meanwhile queue and run after it. */
  const exclusive = async <T>(sessionId: string, work: (writer: W) => Promise<T>): Promise<T> => {
    let writer: W;
    for (;;) {
      writer = context.writerOf(sessionId);
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
      writer.draining = undefined;
      release();
      if (writer.queue.length > 0) context.startDrain(sessionId, writer);
    }
  };

  /**
   * Pushes the session's keys through LevelDB's compaction, so overwritten and deleted values leave its
   * files. Called before the write too: a memtable flush keeps every version of a key, and LevelDB may
   * place the flushed table below the levels one compactRange then compacts; with the old versions
   * flushed first, the rewrite's table lands above them and is merged down through them.
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

  const writeFailure = (sessionId: string, error: unknown): unknown => (context.isClosed() ? new LogClosedError({ cause: error }) : new LogWriteError(sessionId, error));

  /** The session's stored events from `fromSeq` to `toSeq`, in seq order, read in chunks. */
  async function* storedEvents(sessionId: string, fromSeq: number, toSeq: number): AsyncIterable<{ seq: number; text: string }> {
    const iterator = db.iterator(eventRange(sessionId, fromSeq, toSeq));
    try {
      for (;;) {
        const entries = (await iterator.nextv(512)) as [string, string][];
        if (entries.length === 0) return;
        for (const [key, text] of entries) yield { seq: seqOfKey(key), text };
      }
    } finally {
      await iterator.close();
    }
  }

  const erase = (sessionId: string, selector: EraseSelector, options: EraseOptions): Promise<EraseResult> =>
    exclusive(sessionId, async (writer) => {
      const checked = eraseOptionsOf(options);
      writer.head = undefined;
      const head = await context.loadWriterHead(sessionId, writer);
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
        events: (fromSeq) => storedEvents(sessionId, fromSeq, head.seq),
      });
      if (!plan) {
        await compactSession(sessionId); // a re-run after a crash between the batch and the compaction finishes it
        return { erased: [], seq: undefined };
      }
      const full = context.unsealedEvent(sessionId, seq, at, context.version('event.erased'), head.hash, writer.chain, undefined, plan.event, writer.chain === 2 ? context.salt(sessionId) : undefined);
      const { hash, text } = sealEventAs(writer.chain, head.hash, full, context.chainKey);
      const first = Math.min(...plan.writes.map((w) => w.seq));
      const checkpointKeys = ((await db.keys(checkpointRange(sessionId)).all()) as string[]).filter((key) => seqOfKey(key) >= first);
      const ops: ({ type: 'put'; key: string; value: string } | { type: 'del'; key: string })[] = [
        ...plan.writes.map((w) => ({ type: 'put' as const, key: eventKey(sessionId, w.seq), value: w.text })),
        { type: 'put', key: eventKey(sessionId, seq), value: text },
        ...checkpointKeys.map((key) => ({ type: 'del' as const, key })),
      ];
      const writesRecord = !writer.recordHolds;
      if (writesRecord) ops.push({ type: 'put', key: headKey(sessionId), value: JSON.stringify({ seq, hash }) });
      await compactSession(sessionId);
      try {
        await db.batch(ops, context.writeOptions);
      } catch (error) {
        writer.head = undefined;
        throw writeFailure(sessionId, error);
      }
      writer.head = { seq, hash };
      if (writesRecord) writer.recordHolds = true;
      context.afterWrite(sessionId);
      await compactSession(sessionId);
      return { erased: plan.erased, seq, ...(plan.copies.length > 0 ? { copies: plan.copies.map((c) => c.seq) } : {}) };
    });

  const deleteSession = (sessionId: string): Promise<DeleteSessionResult> =>
    exclusive(sessionId, async (writer) => {
      const events = (await db.keys(eventRange(sessionId, 1, MAX_SEQ)).all()) as string[];
      const checkpoints = (await db.keys(checkpointRange(sessionId)).all()) as string[];
      const ops = [...events, ...checkpoints, headKey(sessionId)].map((key) => ({ type: 'del' as const, key }));
      await compactSession(sessionId);
      try {
        await db.batch(ops, context.writeOptions);
      } catch (error) {
        writer.head = undefined;
        throw writeFailure(sessionId, error);
      }
      writer.head = undefined;
      writer.recordHolds = false;
      context.afterWrite(sessionId);
      await compactSession(sessionId);
      return { deleted: events.length };
    });

  return { erase, deleteSession };
};

