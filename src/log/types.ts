// The SessionEventLog contract: append-only, per-session sequence, hash-chained.
import type { NewSessionEvent, SessionEvent } from '../events/index.js';

export interface AppendOptions {
  /** The session's head before this append (0 for a new session); a mismatch writes nothing and throws. */
  readonly expectedSeq?: number;
}

export interface ReadOptions {
  /** First seq to read (inclusive, default 1). */
  readonly fromSeq?: number;
  /** Last seq to read (inclusive, default the head). */
  readonly toSeq?: number;
}

export interface VerifyResult {
  readonly valid: boolean;
  readonly eventCount: number;
  /** The first seq at which the chain is broken (edited, removed, reordered or undecodable), or null. */
  readonly firstBrokenSeq: number | null;
  /** What is wrong at firstBrokenSeq, when anything is. */
  readonly problem?: string;
}

/** A derived state stored beside a session's events, tied to the hash of the event it was taken at. */
export interface StoredCheckpoint {
  readonly seq: number;
  readonly hash: string;
  readonly data: unknown;
}

export interface PutCheckpointOptions {
  /** Keep one checkpoint per band of this many seqs (older checkpoints in the new one's band are removed). */
  readonly band?: number;
}

export interface SessionEventLog {
  /**
   * Validates every event, assigns seqs, chains hashes and writes them in one atomic batch.
   * @example await log.append('s1', [{ type: 'user.input', items: [userMessage('hi')] }], { expectedSeq: 0 })
   */
  append(sessionId: string, events: readonly NewSessionEvent[], options?: AppendOptions): Promise<readonly SessionEvent[]>;
  /** Streams a session's events in seq order, decoded (old versions upcast). */
  read(sessionId: string, options?: ReadOptions): AsyncIterable<SessionEvent>;
  /** The seq of the session's last event; 0 for an unknown session. */
  head(sessionId: string): Promise<number>;
  /** Every session id with at least one event, in key order. */
  sessions(): AsyncIterable<string>;
  /** Recomputes the hash chain and checks seqs and the head. */
  verify(sessionId: string): Promise<VerifyResult>;
  /**
   * Stores a checkpoint for the session at `seq` (which must exist); replaces any older one at that seq.
   * Older checkpoints are kept sparse: with `band` (e.g. the session's `checkpointEvery`), one per band of
   * `band` seqs (older ones in the new checkpoint's band are removed); without it, the newest older one.
   */
  putCheckpoint(sessionId: string, checkpoint: StoredCheckpoint, options?: PutCheckpointOptions): Promise<void>;
  /** The session's checkpoint with the highest seq, or undefined. Callers must check `hash` against the log. */
  latestCheckpoint(sessionId: string): Promise<StoredCheckpoint | undefined>;
  /**
   * The readable checkpoint with the highest seq at or below `seq` (and not past the head), or undefined.
   * Callers must check `hash` against the log. Reads only: never writes.
   * @example const cp = await log.checkpointAtOrBefore('s1', 12_345)
   */
  checkpointAtOrBefore(sessionId: string, seq: number): Promise<StoredCheckpoint | undefined>;
  /** Waits for pending appends, then closes the store. */
  close(): Promise<void>;
}

export type Clock = () => Date | string | number;

export interface LogOptions {
  /**
   * Stamps `at` on appended events (default: the system clock). A reading that is an empty string,
   * an invalid date or not a Date/string/number rejects the append with `InvalidEventError` (path `at`).
   */
  readonly clock?: Clock;
  /**
   * Largest stored size of one event (its canonical JSON with the envelope), in UTF-8 bytes; default
   * 64 MiB. A larger event rejects its append with `InvalidEventError` naming the session and the
   * event's index, before anything is written; other appends of the same batch are unaffected.
   */
  readonly maxEventBytes?: number;
}

export interface LevelLogOptions extends LogOptions {
  /** fsync every append batch (slower; survives an OS crash, not only a process crash). */
  readonly sync?: boolean;
}
