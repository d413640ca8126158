// The engine port: the few primitives a store gives `createSessionEventLog`, which implements the SessionEventLog contract once over them.

/** A session's head as an engine stores it: the seq and hash of its last event. */
export interface EngineHead {
  readonly seq: number;
  readonly hash: string;
  /**
   * The stored text of the event at `seq`, when `head` was asked `forWrite` (the log checks the chain key on it and
   * reads its chain version); undefined when the engine's head names an event it does not hold.
   */
  readonly text?: string | undefined;
}

/**
 * What an engine keeps beside the events to say where a session's chain was (LevelDB's head record, PostgreSQL's head
 * row): `verify` checks that the chain holds `hash` at `seq` and that the session is not shorter. `keyId` is the chain
 * key id the session was first written with (`chainKeyId`), when it was keyed. A record the engine cannot read is a
 * `problem`.
 */
export type EngineHeadRecord =
  | { readonly seq: number; readonly hash: string; readonly keyId?: string | undefined }
  | { readonly problem: string };

/**
 * One event to store: its seq, the fields an engine may keep in columns, and its stored text (the sealed canonical JSON,
 * exactly as hashed: an engine stores it byte for byte, and may also index it as JSON).
 */
export interface EngineRow {
  readonly seq: number;
  readonly type: string;
  readonly at: string;
  readonly prevHash: string;
  readonly hash: string;
  readonly text: string;
}

/** A stored event as an engine reads it back: its seq and its stored text. Engines may hand out fresh arrays they built. */
export type StoredRow = [seq: number, text: string];

/** One group commit: rows that chain onto `base` and end at `tip`. */
export interface EngineWrite {
  /** The head the rows chain onto, as the log last saw it (the write is conditional on it). */
  readonly base: { readonly seq: number; readonly hash: string };
  /** The session's head once the rows are written. */
  readonly tip: { readonly seq: number; readonly hash: string };
  /** At least one row, seqs `base.seq + 1` to `tip.seq`. */
  readonly rows: readonly EngineRow[];
  /** The log's chain key id (`chainKeyId`), undefined without a key: an engine records it with a session's first write. */
  readonly keyId: string | undefined;
}

/** What an erase writes, in one atomic step: payloads rewritten in place, the `event.erased` event appended, stale checkpoints removed. */
export interface EngineRewrite {
  /** New stored texts of existing events (erased or scrubbed): envelope and hash unchanged. */
  readonly replace: readonly { readonly seq: number; readonly text: string }[];
  /** The event appended on the head (its `prevHash` is the head's hash). */
  readonly append: EngineRow;
  /** Checkpoints at or after this seq are removed (they were taken from content the rewrite changed). */
  readonly checkpointsFrom: number;
  /** As in {@link EngineWrite}. */
  readonly keyId: string | undefined;
}

/** A session held by {@link SessionLogEngine.hold}: no other writer (this process or another) changes it until the work ends. */
export interface HeldSession {
  /** The session's head, with the stored text of its last event (as `head(id, true)`); undefined when it has no events. */
  head(): Promise<EngineHead | undefined>;
  /** As {@link SessionLogEngine.rows}, inside the hold. */
  rows(fromSeq: number, toSeq: number): AsyncIterable<readonly StoredRow[]>;
  /** Writes an erase atomically (all of it or nothing) and moves the head to `append`. */
  rewrite(change: EngineRewrite): Promise<void>;
  /** Removes the session's events, checkpoints and head record atomically; gives how many events there were. */
  remove(): Promise<number>;
}

/**
 * A store under the SessionEventLog protocol (`createSessionEventLog`). The protocol does everything the contract asks
 * (validation, redaction, sealing in both chain versions, the chain key, group commit with the next group sealed
 * while the current one is written, verified and paged reads, upcasting, anchors, import, checkpoint bands, erasure,
 * subscribe); an engine only stores and finds texts by session and seq. Session ids are any non-empty string of at
 * most 512 UTF-16 code units (NUL and lone surrogates included): an engine must keep them apart losslessly.
 * `describeLogEngineContract` (context-ledger/testing) checks an engine against this port.
 */
export interface SessionLogEngine {
  /**
   * True when this handle is the only writer of its store (LevelDB's directory lock): the log then trusts the head it
   * last wrote, and `write` need not check `base`. False (PostgreSQL: any number of processes): `head` is read from the
   * store whenever it matters, and `write` must be conditional.
   */
  readonly singleWriter: boolean;
  /**
   * The session's head: its last event's seq and hash, or undefined when it has none. With `forWrite`, the log is about
   * to append onto it: give the stored text of that event too (an engine may check its own records then).
   */
  head(sessionId: string, forWrite?: boolean): Promise<EngineHead | undefined>;
  /** The session's head record, when the engine keeps one (undefined: none stored). Without this member, verify checks the chain alone. */
  headRecord?(sessionId: string): Promise<EngineHeadRecord | undefined>;
  /**
   * Stores the rows atomically (all or none) and moves the head to `tip`. Resolves false, having written nothing, when the
   * session's head is no longer `base` (another writer moved it); a `singleWriter` engine may skip that check. Resolves
   * anything else (true, or nothing) once written. A rejection means the store failed: the log then reads the stored
   * hash at `tip.seq` to tell whether the rows landed.
   */
  write(sessionId: string, write: EngineWrite): Promise<boolean | void>;
  /**
   * The stored events from `fromSeq` to `toSeq` (inclusive), in seq order, a page at a time. A page is never empty. An
   * engine that bounds the read at the head it saw when the read started may return that head's seq: the log then
   * names a missing event at the end too.
   */
  rows(sessionId: string, fromSeq: number, toSeq: number): AsyncGenerator<readonly StoredRow[], number | undefined, undefined>;
  /** Every session with at least one event (its head record present), in one stable order. */
  sessions(): AsyncIterable<string>;
  /**
   * Stores a checkpoint's text at its seq (replacing one there) and removes older ones of the session: with `band`, those
   * in the new one's band (`Math.floor(seq / band)` equal); without, all but the newest older one. Atomically.
   */
  putCheckpoint(sessionId: string, checkpoint: { readonly seq: number; readonly hash: string; readonly text: string }, band: number | undefined): Promise<void>;
  /** The stored checkpoint texts at or below `atOrBefore`, newest first. */
  checkpoints(sessionId: string, atOrBefore: number): AsyncIterable<string>;
  /**
   * Runs `work` with the session held against every other writer (PostgreSQL: a transaction that locks its head row; a
   * `singleWriter` engine: nothing more, the log already keeps its own appends out). What `work` writes is committed
   * when it resolves and undone when it rejects; a `singleWriter` engine may instead commit each `rewrite` or `remove`
   * at once as one atomic batch (the log calls one of them last, and nothing that can fail after it).
   */
  hold<T>(sessionId: string, work: (session: HeldSession) => Promise<T>): Promise<T>;
  /**
   * Calls `changed` whenever another handle may have appended to the session, resolving once it listens; the function
   * it resolves to stops it. Optional: appends through the same log reach its subscribers without it.
   */
  watch?(sessionId: string, changed: () => void): Promise<() => void>;
  /** Releases the store (after the log has finished its writes). */
  close(): Promise<void>;
}
