// The SessionEventLog contract: append-only, per-session sequence, hash-chained.
import type { NewSessionEvent, SessionEvent } from '../events/index.js';
import type { EraseOptions, EraseResult, EraseSelector } from './erasure.js';
import type { Redactor } from './redact.js';

export interface AppendOptions {
  /** The session's head before this append (0 for a new session); a mismatch writes nothing and throws. */
  readonly expectedSeq?: number;
}

export interface ReadOptions {
  /** First seq to read (inclusive, default 1). */
  readonly fromSeq?: number;
  /** Last seq to read (inclusive, default the head). */
  readonly toSeq?: number;
  /**
   * Check every event against the chain while streaming it (its prevHash is the stored hash of the
   * event before it, its content matches its hash, no seq is missing): the read fails with
   * `ChainBrokenError` at the first broken event, and hands out nothing from it on. Events before
   * `fromSeq` are not checked (`verify` checks a whole session).
   */
  readonly verify?: boolean;
}

/** A position in a session's chain, from `anchor`: keep it outside the log to detect rollback and rewrites later. */
export interface Anchor {
  readonly seq: number;
  readonly hash: string;
}

export interface VerifyOptions {
  /**
   * Anchors taken earlier with `anchor` (and kept elsewhere). The session is valid only if its chain
   * holds the same hash at each anchor's seq; fewer events than an anchor's seq is reported as rollback.
   */
  readonly anchors?: readonly Anchor[];
}

export interface VerifyResult {
  readonly valid: boolean;
  readonly eventCount: number;
  /** The first seq at which the chain is broken (edited, removed, reordered or undecodable), or null. */
  readonly firstBrokenSeq: number | null;
  /** What is wrong at firstBrokenSeq, when anything is. */
  readonly problem?: string;
  /** Set when the session has fewer events than an anchor's seq: acknowledged events were removed from its end. */
  readonly rollback?: true;
  /** The seqs whose payload `log.erase` removed (present only when there are any); their envelopes and digests still verify. */
  readonly erased?: readonly number[];
  /**
   * Set when the chain fails at its first event and the session says it is keyed with another key than this log's
   * (LevelDB and memory: its head record's `keyId`; PostgreSQL: its head row's `key_id`): `mismatch` is
   * `'keyed-session-no-key'` when this log has no key (the chain cannot be checked without it) or `'other-key'`.
   * `keyId` is the session's {@link chainKeyId}, which names the key without revealing it.
   */
  readonly keyed?: { readonly keyId: string; readonly mismatch: 'keyed-session-no-key' | 'other-key' };
  /**
   * The seqs `log.erase` scrubbed of copies of erased content (present only when there are any): their envelopes and
   * digests still verify, and what is left of their payload matches the digest the `event.erased` recorded.
   */
  readonly copies?: readonly number[];
}

/** What `deleteSession` removed. */
export interface DeleteSessionResult {
  /** How many events were removed (0: there was no such session). */
  readonly deleted: number;
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
  /**
   * Recomputes the hash chain over the stored bytes and checks seqs, the head record and the anchors.
   * @example const { valid, problem } = await log.verify('s1', { anchors: [savedAnchor] })
   */
  verify(sessionId: string, options?: VerifyOptions): Promise<VerifyResult>;
  /**
   * The session's last event as `{ seq, hash }` (after pending appends; `{ seq: 0, hash: GENESIS_HASH }`
   * for an unknown session). Store it outside the log (another machine, a receipt, a database) and pass
   * it to `verify` later.
   * @example const anchor = await log.anchor('s1'); // later: await log.verify('s1', { anchors: [anchor] })
   */
  anchor(sessionId: string): Promise<Anchor>;
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
  // ---- privacy (issue 22) ----
  /**
   * Removes the payload of the selected events (by seq, by memory item id `seq:index`, or all), keeping
   * their envelope and digest, marks them `erased` and appends `event.erased { seqs, reason, by }`, in
   * one atomic write; checkpoints at or after the first erased seq are deleted. `verify` stays valid and
   * reports `erased`. Already erased events are skipped; an `event.erased` event cannot be erased.
   * @example await log.erase('s1', { itemIds: ['12:0'] }, { reason: 'API key read from .env', by: 'ops' })
   */
  erase(sessionId: string, selector: EraseSelector, options: EraseOptions): Promise<EraseResult>;
  /**
   * Removes a whole session: its events, checkpoints and head record; `sessions()` no longer lists it.
   * @example await log.deleteSession('s1') // { deleted: 42 }
   */
  deleteSession(sessionId: string): Promise<DeleteSessionResult>;
  // ---- moving and following sessions (every store) ----
  /**
   * Streams the session's stored texts in seq order: each event's sealed canonical JSON exactly as
   * it was hashed (what `importStored` takes). Same range rules as `read`; nothing is decoded.
   * @example for await (const text of log.readStored('s1')) texts.push(text)
   */
  readStored(sessionId: string, options?: ReadOptions): AsyncIterable<string>;
  /**
   * Writes events exactly as another store stored them (`at`, `v`, hashes kept), after re-verifying
   * them: each text must decode, be in canonical form, belong to `sessionId`, and chain on from this
   * store's head (first seq = head + 1, prevHash = the head's hash). All or nothing: on any failure
   * nothing is written and a StoredChainError (or ExpectedSeqConflictError, when the head moved) is thrown.
   * @example await target.importStored('s1', texts)
   */
  importStored(sessionId: string, storedTexts: readonly string[]): Promise<ImportResult>;
  /**
   * Follows a session: yields its events from `fromSeq` (default 1) as stored, then each new event
   * as it is appended, in seq order, each once. Ends when `signal` aborts, the consumer stops, or
   * the log closes. Memory and LevelDB see appends made through the same log object; PostgreSQL
   * sees appends from any process.
   * @example for await (const event of log.subscribe('s1', { fromSeq: 1, signal })) render(event)
   */
  subscribe(sessionId: string, options?: SubscribeOptions): AsyncIterable<SessionEvent>;
}

export interface SubscribeOptions {
  /** First seq to yield (inclusive, default 1). */
  readonly fromSeq?: number;
  /** Aborting it ends the iteration (it finishes; it does not throw). */
  readonly signal?: AbortSignal;
}

export interface ImportResult {
  /** How many events were written. */
  readonly imported: number;
  /** The session's head after the import. */
  readonly head: number;
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
  /**
   * Keyed chain: each hash is HMAC-SHA256 with this key (use 32 random bytes) instead of plain sha256,
   * so someone without the key cannot rewrite events and recompute a chain that verifies. Open the log
   * with the same key every time: a session written with another key, or without one, does not verify.
   */
  readonly chainKey?: string | Uint8Array;
  /**
   * Redaction before append: `secretRedactor()` or your own `(event) => { event, redactions }`. Every
   * event goes through it before it is validated again, sealed and stored; the stored event lists
   * `redactions: [{ path, rule }]`. A redactor that throws fails that append with `RedactionError`.
   */
  readonly redact?: Redactor;
  /**
   * The chain version new sessions are written with: 2 (the default) hashes each event's envelope and
   * `contentDigest`, so `erase` keeps the chain verifiable; 1 is the chain of decision 0005. Existing
   * sessions keep the version they were written with.
   */
  readonly chainVersion?: 1 | 2;
  /**
   * Where each chain-version-2 event's `contentSalt` comes from (default: 16 random bytes per event). The salt is
   * hashed into `contentDigest` and erased with the payload, so the digest an erased event keeps cannot be matched
   * against guesses of a short secret. Inject `deterministicSalts()` (from `context-ledger/testing`) in tests that
   * compare stored bytes; never a predictable source in production.
   */
  readonly salt?: () => string;
}

export interface LevelLogOptions extends LogOptions {
  /** fsync every append batch (slower; survives an OS crash, not only a process crash). */
  readonly sync?: boolean;
}
