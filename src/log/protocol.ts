// The SessionEventLog protocol, implemented once over an engine port (abstract-level's pattern): LevelDB, memory-level and PostgreSQL are engines.
import * as E from 'fp-ts/lib/Either.js';
import { EVENT_VERSIONS, EventDecodeError, InvalidEventError, decodeEvent, type NewSessionEvent, type SessionEvent, type UpcasterRegistry } from '../events/index.js';
import { ContextLedgerError, InvalidOptionsError } from '../base/errors.js';
import { anchorsBySeq, checkLink, createErasureCheck, rollbackOf, unclaimedProblem, validWithErasures } from './chain-check.js';
import { assertTipSealedWith, chainKeyId, keyedVerifyProblem } from './chain-key.js';
import type { EngineHead, EngineRow, HeldSession, SessionLogEngine, StoredRow } from './engine.js';
import { ChainBrokenError, ExpectedSeqConflictError, LogClosedError, LogWriteError, SeqLimitError } from './errors.js';
import { eraseOptionsOf, type EraseOptions, type EraseResult, type EraseSelector } from './erasure.js';
import { planErasure } from './erasure-plan.js';
import { followSession } from './follow.js';
import { CURRENT_CHAIN_VERSION, GENESIS_HASH, chainVersionOf, sealEventAs, type ChainKey, type ChainVersion } from './hash-chain.js';
import { assertSessionId, stampOf, validateBatch } from './input.js';
import { MAX_SEQ } from './session-key.js';
import { redactBatch, redactOption, type Redaction } from './redact.js';
import { saltFrom, saltOption } from './salt.js';
import { verifyStoredTexts } from './stored.js';
import type { AppendOptions, ImportResult, LogOptions, ReadOptions, SessionEventLog, StoredCheckpoint, VerifyResult } from './types.js';
import { checkCheckpointPut, checkpointQuerySeq, checkpointWithinHead, expectedSeqOption, parseStoredCheckpoint, readRange } from './validate.js';
import { registerWriterStates } from './writer-states.js';

/** What `createSessionEventLog` takes besides the engine: the log options of every store ({@link LogOptions}), upcasters and the group size. */
export type SessionEventLogOptions = { readonly [K in keyof LogOptions]?: LogOptions[K] | undefined } & {
  readonly upcasters?: UpcasterRegistry | undefined;
  /** Most queued appends to one session sealed and written as one group (group commit; default 1024). */
  readonly maxGroup?: number | undefined;
};

/** The default `maxEventBytes`: 64 MiB. */
export const DEFAULT_MAX_EVENT_BYTES = 64 * 1024 * 1024;

/** Idle per-session writer states kept to spare a head read on the next append; older idle ones are released. */
const MAX_IDLE_WRITERS = 256;

/** Lost races for a session's head in a row (other handles kept moving it) before the appends of a group give up. */
const MAX_LOST_RACES = 10_000;

interface Head {
  readonly seq: number;
  readonly hash: string;
}

interface PendingAppend {
  readonly events: readonly NewSessionEvent[];
  readonly expectedSeq: number | undefined;
  /** What the `redact` option replaced in each event (undefined where nothing). */
  readonly redactions?: readonly (readonly Redaction[] | undefined)[];
  /** Set for `importStored`: stored texts to verify against the tip and write as they are. */
  readonly imported?: readonly string[];
  /** The clock's reading, taken when the append is first sealed and kept when it is sealed again. */
  at: string | undefined;
  /** `tip` is the session's head once this append is written. */
  readonly resolve: (events: readonly SessionEvent[], tip: Head) => void;
  readonly reject: (error: unknown) => void;
}

interface SessionWriter {
  /** The head this log last read or wrote (undefined: read it from the engine before the next group). */
  head: Head | undefined;
  /** The chain version of the session's events (for a new session, the log's). Set with `head`. */
  chain: ChainVersion;
  queue: PendingAppend[];
  draining: Promise<void> | undefined;
  /** Writes in a row that found the head moved by another handle. */
  lostRaces: number;
}

/** One group of appends sealed onto a head, not yet written: what to write, and who is told what once it is. */
interface StagedGroup {
  /** Every append of the group, in queue order (put back in the queue if the group is dropped unwritten). */
  readonly pendings: PendingAppend[];
  /** The head the group is sealed onto. */
  readonly base: Head;
  /** The base was read from the engine for this group, or the engine is the single writer: a refusal against it stands. */
  readonly fresh: boolean;
  readonly rows: EngineRow[];
  readonly accepted: { pending: PendingAppend; stored: SessionEvent[]; tip: Head }[];
  /** Appends refused while sealing; told when the group is settled. */
  readonly rejected: { pending: PendingAppend; error: unknown }[];
  /** The head once the group is written, and the chain version there. */
  tip: Head;
  chain: ChainVersion;
}

const positiveIntegerOption = (name: string, value: number | undefined, fallback: number): number => {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new InvalidOptionsError('the log', [{ path: name, message: `must be a positive integer, got ${String(value)}` }]);
  }
  return value;
};

/** The `chainVersion` log option, checked (default: the current version). */
export const chainVersionOption = (value: unknown): ChainVersion => {
  if (value === undefined) return CURRENT_CHAIN_VERSION;
  if (value !== 1 && value !== 2) throw new InvalidOptionsError('the log', [{ path: 'chainVersion', message: `must be 1 or 2, got ${String(value)}` }]);
  return value;
};

/**
 * An event to seal, as `append` returns it: the envelope in the order `read` decodes it (hash, then
 * contentDigest and contentSalt in chain version 2, then redactions when any), then type and payload. `hash` (and
 * `contentDigest`) are undefined while it is sealed, so the canonical JSON leaves them out. `salt` (chain version 2
 * only) is the event's content salt.
 */
export const unsealedEvent = (
  sessionId: string,
  seq: number,
  at: string,
  v: number,
  prevHash: string,
  chain: ChainVersion,
  redactions: readonly Redaction[] | undefined,
  event: NewSessionEvent,
  salt?: string,
): Record<string, unknown> => {
  const base: Record<string, unknown> =
    chain === 2
      ? salt === undefined
        ? { sessionId, seq, at, v, prevHash, hash: undefined, contentDigest: undefined }
        : { sessionId, seq, at, v, prevHash, hash: undefined, contentDigest: undefined, contentSalt: salt }
      : { sessionId, seq, at, v, prevHash, hash: undefined };
  if (redactions !== undefined) base['redactions'] = redactions;
  return Object.assign(base, event as Record<string, unknown>);
};

/** The head of a session without events. */
const GENESIS: EngineHead = { seq: 0, hash: GENESIS_HASH };

/** The chain version of a stored text (1 when it cannot be read: such a tip fails its own checks). */
const chainOfText = (text: string | undefined): ChainVersion => {
  if (text === undefined) return 1;
  try {
    return chainVersionOf(JSON.parse(text) as Record<string, unknown>);
  } catch {
    return 1;
  }
};

/**
 * The SessionEventLog over an engine: everything the contract asks is done here, once, for every store.
 * @example const log = createSessionEventLog(createLevelEngine(db), { chainKey })
 */
export const createSessionEventLog = (engine: SessionLogEngine, options: SessionEventLogOptions = {}): SessionEventLog => {
  if (options.clock !== undefined && typeof options.clock !== 'function') {
    throw new InvalidOptionsError('the log', [{ path: 'clock', message: `must be a function, got ${typeof options.clock}` }]);
  }
  const clock = options.clock ?? (() => new Date());
  const maxGroup = positiveIntegerOption('maxGroup', options.maxGroup, 1024);
  const maxEventBytes = positiveIntegerOption('maxEventBytes', options.maxEventBytes, DEFAULT_MAX_EVENT_BYTES);
  const chainKey: ChainKey | undefined = options.chainKey;
  if (chainKey !== undefined && !((typeof chainKey === 'string' || chainKey instanceof Uint8Array) && chainKey.length > 0)) {
    throw new InvalidOptionsError('the log', [{ path: 'chainKey', message: 'must be a non-empty string or Uint8Array' }]);
  }
  const keyId = chainKey === undefined ? undefined : chainKeyId(chainKey);
  const redact = redactOption(options.redact);
  const defaultChain = chainVersionOption(options.chainVersion);
  const salt = saltOption(options.salt);
  const decodeOptions = options.upcasters ? { upcasters: options.upcasters } : {};
  const importOptions = chainKey === undefined ? decodeOptions : { ...decodeOptions, chainKey };
  const singleWriter = engine.singleWriter;
  const writers = new Map<string, SessionWriter>();
  let closed = false;

  const ensureOpen = (): void => {
    if (closed) throw new LogClosedError();
  };

  /** An engine error as the caller should see it: LogClosedError once `close()` has been called. */
  const closedOr = (error: unknown): unknown => (closed && !(error instanceof LogClosedError) ? new LogClosedError({ cause: error }) : error);

  /** A store error before anything was written (reading the head): named errors pass as they are. */
  const unwrittenFailure = (sessionId: string, error: unknown): unknown =>
    error instanceof ContextLedgerError ? error : closed ? new LogClosedError({ cause: error }) : new LogWriteError(sessionId, error, false);

  // ---- followers: subscribers of this log, woken after each write through it (engines with `watch` add other handles' writes) ----

  const followers = new Map<string, Set<() => void>>();
  const notifyFollowers = (sessionId: string): void => {
    const set = followers.get(sessionId);
    if (set) for (const changed of set) changed();
  };
  const watchHere = (sessionId: string, changed: () => void): (() => void) => {
    let set = followers.get(sessionId);
    if (!set) followers.set(sessionId, (set = new Set()));
    set.add(changed);
    return () => {
      set.delete(changed);
      if (set.size === 0 && followers.get(sessionId) === set) followers.delete(sessionId);
    };
  };

  // ---- heads ----

  const engineHead = async (sessionId: string, forWrite = false): Promise<EngineHead> => {
    try {
      return (await engine.head(sessionId, forWrite)) ?? GENESIS;
    } catch (error) {
      throw closedOr(error);
    }
  };

  /** The engine's pages of `fromSeq..toSeq`, checked open between pages, its errors LogClosedError after `close()`. */
  const pages = async function* (sessionId: string, fromSeq: number, toSeq: number): AsyncGenerator<readonly StoredRow[], number | undefined> {
    ensureOpen();
    const source = engine.rows(sessionId, fromSeq, toSeq);
    try {
      for (;;) {
        let result: IteratorResult<readonly StoredRow[], number | undefined>;
        try {
          result = await source.next();
        } catch (error) {
          throw closedOr(error); // close() during a read ends it with LogClosedError
        }
        if (result.done) return result.value;
        yield result.value;
        ensureOpen();
      }
    } finally {
      await source.return(undefined);
    }
  };

  /** The `hash` of the event stored at `seq`, or undefined when there is none (or it is damaged). */
  const storedHashAt = async (sessionId: string, seq: number): Promise<string | undefined> => {
    for await (const page of pages(sessionId, seq, seq)) {
      const row = page[0];
      if (row === undefined || row[0] !== seq) return undefined;
      try {
        const hash = (JSON.parse(row[1]) as { hash?: unknown } | null)?.hash;
        return typeof hash === 'string' ? hash : undefined;
      } catch {
        return undefined;
      }
    }
    return undefined;
  };

  /**
   * Reads the head an append chains onto (through `read`: the engine, or a held session) into the writer, refused with
   * ChainKeyMismatchError when its event was not sealed with this log's key.
   */
  const loadWriterHead = async (sessionId: string, writer: SessionWriter, read: () => Promise<EngineHead | undefined> = () => engineHead(sessionId, true)): Promise<Head> => {
    const head = (await read()) ?? GENESIS;
    if (head.seq > 0 && head.text !== undefined) assertTipSealedWith(sessionId, head.seq, head.text, chainKey);
    writer.chain = head.seq === 0 ? defaultChain : chainOfText(head.text);
    writer.head = { seq: head.seq, hash: head.hash };
    return writer.head;
  };

  /**
   * After a failed write, whether the store holds the group anyway: true when the event at its last seq has its hash
   * (a write is atomic), false when it does not, undefined when the store cannot be read to tell.
   */
  const writtenAfterFailure = async (sessionId: string, tip: Head): Promise<boolean | undefined> => {
    try {
      return (await storedHashAt(sessionId, tip.seq)) === tip.hash;
    } catch {
      return undefined;
    }
  };

  // ---- the write path: group commit per session, the next group sealed while the current one is written (decision 0003) ----

  const releaseIdle = (): void => {
    if (writers.size <= MAX_IDLE_WRITERS) return;
    for (const [id, other] of writers) {
      if (writers.size <= MAX_IDLE_WRITERS) break;
      if (!other.draining && other.queue.length === 0) writers.delete(id);
    }
  };

  const writerOf = (sessionId: string): SessionWriter => {
    let writer = writers.get(sessionId);
    if (!writer) {
      writer = { head: undefined, chain: defaultChain, queue: [], draining: undefined, lostRaces: 0 };
      writers.set(sessionId, writer);
    }
    return writer;
  };

  const tooLarge = (sessionId: string, index: number, type: string, detail: string): InvalidEventError =>
    new InvalidEventError({ sessionId, index, eventType: type, issues: [{ path: '', message: detail }] });

  /**
   * Seals `pendings` onto the staged group's tip and adds them to it. Nothing is settled here: an
   * append that cannot be sealed (a seq conflict, too large, any other error) goes to `rejected`
   * alone and is told when the group is settled, so a group sealed ahead of the write before it can
   * be dropped and sealed again if that write fails.
   */
  const stageAppends = (sessionId: string, staged: StagedGroup, pendings: readonly PendingAppend[]): void => {
    const { rows, accepted, rejected } = staged;
    let tip = staged.tip;
    let chain = staged.chain;
    for (const pending of pendings) {
      staged.pendings.push(pending);
      if (pending.imported) {
        try {
          const verified = verifyStoredTexts(sessionId, tip, pending.imported, importOptions);
          for (const entry of verified) rows.push(entry);
          const last = verified[verified.length - 1];
          if (last) {
            tip = { seq: last.seq, hash: last.hash };
            chain = chainOfText(last.text);
          }
          accepted.push({ pending, stored: [], tip });
        } catch (error) {
          rejected.push({ pending, error });
        }
        continue;
      }
      if (pending.expectedSeq !== undefined && pending.expectedSeq !== tip.seq) {
        rejected.push({ pending, error: new ExpectedSeqConflictError(sessionId, pending.expectedSeq, tip.seq) });
        continue;
      }
      if (tip.seq + pending.events.length > MAX_SEQ) {
        rejected.push({ pending, error: new SeqLimitError(sessionId) });
        continue;
      }
      const rowsBefore = rows.length;
      try {
        const at = (pending.at ??= stampOf(sessionId, clock));
        const stored: SessionEvent[] = [];
        let seq = tip.seq;
        let prevHash = tip.hash;
        for (let index = 0; index < pending.events.length; index++) {
          const event = pending.events[index] as NewSessionEvent;
          seq += 1;
          const type = event['type'] as keyof typeof EVENT_VERSIONS;
          // One object, the event as `append` returns it: the envelope in the order `read` decodes it
          // (hash after prevHash), then type and payload. Its `hash` is undefined while it is sealed, so
          // the canonical JSON leaves it out; sealEvent then sets it, in its place.
          const full = unsealedEvent(sessionId, seq, at, EVENT_VERSIONS[type], prevHash, chain, pending.redactions?.[index], event, chain === 2 ? saltFrom(sessionId, salt, index) : undefined);
          let sealed: { hash: string; text: string };
          try {
            sealed = sealEventAs(chain, prevHash, full, chainKey);
          } catch (cause) {
            // V8 refuses strings past its length limit (about 512 MiB): the event cannot be serialised.
            throw tooLarge(sessionId, index, type, `cannot be serialised (${cause instanceof Error ? cause.message : 'unknown error'}); maxEventBytes is ${maxEventBytes}`);
          }
          const { hash, text } = sealed;
          // UTF-8 takes at most 3 bytes per UTF-16 unit, so only long texts need counting.
          if (text.length * 3 > maxEventBytes) {
            const bytes = text.length > maxEventBytes ? text.length : Buffer.byteLength(text, 'utf8');
            if (bytes > maxEventBytes) {
              throw tooLarge(sessionId, index, type, `stored size is ${text.length > maxEventBytes ? 'at least ' : ''}${bytes} bytes, more than maxEventBytes (${maxEventBytes})`);
            }
          }
          rows.push({ seq, type, at, prevHash, hash, text });
          stored.push(full as unknown as SessionEvent);
          prevHash = hash;
        }
        if (seq !== tip.seq) tip = { seq, hash: prevHash };
        accepted.push({ pending, stored, tip });
      } catch (error) {
        rows.length = rowsBefore;
        rejected.push({ pending, error });
      }
    }
    staged.tip = tip;
    staged.chain = chain;
  };

  const stageGroup = (sessionId: string, base: Head, chain: ChainVersion, fresh: boolean, pendings: readonly PendingAppend[]): StagedGroup => {
    const staged: StagedGroup = { pendings: [], base, fresh: fresh || singleWriter, rows: [], accepted: [], rejected: [], tip: base, chain };
    stageAppends(sessionId, staged, pendings);
    return staged;
  };

  /** Seals `pendings` onto the writer's head, read from the engine first when the writer has none. */
  const stageOnHead = async (sessionId: string, writer: SessionWriter, pendings: readonly PendingAppend[]): Promise<StagedGroup> => {
    const fresh = writer.head === undefined;
    const head = writer.head ?? (await loadWriterHead(sessionId, writer));
    return stageGroup(sessionId, head, writer.chain, fresh, pendings);
  };

  const settle = (group: StagedGroup): void => {
    for (const { pending, error } of group.rejected) pending.reject(error);
    for (const { pending, stored, tip } of group.accepted) pending.resolve(stored, tip);
  };

  /**
   * Writes a staged group and settles its appends. While the engine writes it, the next group is
   * sealed onto its tip, and topped up with what was queued meanwhile once the write is done (so it
   * holds what one group would have held), and returned. If the write fails, every accepted append of
   * the group is rejected, the next group goes back to the queue unsettled, and the head is read from
   * the engine again; if the head moved (another handle wrote), both go back to be sealed on it.
   */
  const writeStaged = async (sessionId: string, writer: SessionWriter, staged: StagedGroup): Promise<StagedGroup | undefined> => {
    let current = staged;
    if (!current.fresh && current.rejected.length > 0) {
      // refused against the head this log remembers: seal again on the stored head, so a refusal is against the real one
      writer.head = undefined;
      try {
        current = await stageOnHead(sessionId, writer, current.pendings);
      } catch (error) {
        const failure = unwrittenFailure(sessionId, error);
        for (const pending of current.pendings) pending.reject(failure);
        return undefined;
      }
    }
    const { rows, tip, base } = current;
    if (current.accepted.length === 0 || tip.seq === base.seq) {
      settle(current); // only refusals and empty appends: nothing to write
      return undefined;
    }
    let writing: Promise<boolean | void>;
    try {
      writing = engine.write(sessionId, { base, tip, rows, keyId });
    } catch (error) {
      writing = Promise.reject(error);
    }
    let next: StagedGroup | undefined;
    if (writer.queue.length > 0) {
      const pendings = writer.queue.splice(0, maxGroup);
      try {
        next = stageGroup(sessionId, tip, current.chain, false, pendings);
      } catch {
        writer.queue.unshift(...pendings); // sealed again, and settled, once this write is done
      }
    }
    let moved: boolean;
    try {
      moved = (await writing) !== false;
    } catch (error) {
      writer.head = undefined; // re-read on the next group: the store is the truth
      const written = closed ? undefined : await writtenAfterFailure(sessionId, tip);
      if (written !== true) {
        const failure = closed ? new LogClosedError({ cause: error }) : new LogWriteError(sessionId, error, written);
        for (const { pending, error: own } of current.rejected) pending.reject(own);
        for (const { pending } of current.accepted) pending.reject(failure);
        if (next) writer.queue.unshift(...next.pendings); // sealed onto events that were not written
        return undefined;
      }
      moved = true; // the store reported a failure but holds the group: the appends are committed, so they resolve
    }
    if (!moved) {
      // Another handle moved the head: nothing was written. Seal the group again on the stored head.
      writer.head = undefined;
      writer.lostRaces += 1;
      if (writer.lostRaces > MAX_LOST_RACES) {
        writer.lostRaces = 0;
        const failure = new LogWriteError(sessionId, `gave up after ${MAX_LOST_RACES} lost races for the head`, false);
        for (const pending of current.pendings) pending.reject(failure);
        if (next) writer.queue.unshift(...next.pendings);
        return undefined;
      }
      writer.queue.unshift(...current.pendings, ...(next ? next.pendings : []));
      return undefined;
    }
    writer.lostRaces = 0;
    writer.head = tip;
    writer.chain = current.chain;
    settle(current);
    notifyFollowers(sessionId);
    if (next && writer.queue.length > 0 && next.pendings.length < maxGroup) {
      const before = next.pendings.length;
      const more = writer.queue.splice(0, maxGroup - before);
      try {
        stageAppends(sessionId, next, more);
      } catch {
        writer.queue.unshift(...next.pendings.slice(0, before), ...more); // sealed again from the head just written
        return undefined;
      }
    }
    return next;
  };

  // One drain loop per session: everything queued while a group is in flight goes into the next group.
  // `writer.draining` is cleared in the same synchronous step that finds the queue empty, so an append
  // made when its caller resumes (a microtask after its promise resolved) always starts a new drain.
  // (Clearing it in a `.finally` callback left a window in which an append queued behind a finished
  // drain and was never written.) The first `await` lets `append` store the promise before the
  // `finally` can run, and lets appends made in the same tick join the first group. The drain never
  // rejects: whatever goes wrong with a group rejects exactly the appends of that group.
  const drain = async (sessionId: string, writer: SessionWriter): Promise<void> => {
    await undefined;
    try {
      let staged: StagedGroup | undefined;
      while (staged !== undefined || writer.queue.length > 0) {
        if (staged === undefined) {
          const pendings = writer.queue.splice(0, maxGroup);
          try {
            // the head this log holds needs no await (the common case: one turn less per group)
            staged = writer.head ? stageGroup(sessionId, writer.head, writer.chain, false, pendings) : await stageOnHead(sessionId, writer, pendings);
          } catch (error) {
            writer.head = undefined;
            const failure = unwrittenFailure(sessionId, error);
            for (const pending of pendings) pending.reject(failure);
            continue;
          }
        }
        const current: StagedGroup = staged;
        try {
          staged = await writeStaged(sessionId, writer, current);
        } catch (error) {
          writer.head = undefined;
          staged = undefined;
          for (const pending of current.pendings) pending.reject(error); // a no-op for those already settled
        }
      }
    } finally {
      writer.draining = undefined;
      releaseIdle();
    }
  };

  const enqueue = (sessionId: string, pending: PendingAppend): void => {
    const writer = writerOf(sessionId);
    writer.queue.push(pending);
    if (!writer.draining) writer.draining = drain(sessionId, writer);
  };

  /** Runs `work` with the session's writer to itself: appends made meanwhile queue and run after it. */
  const exclusive = async <T>(sessionId: string, work: (writer: SessionWriter) => Promise<T>): Promise<T> => {
    let writer: SessionWriter;
    for (;;) {
      writer = writerOf(sessionId);
      if (!writer.draining) break;
      await writer.draining.catch(() => {});
    }
    let release!: () => void;
    writer.draining = new Promise<void>((resolve) => {
      release = resolve;
    });
    try {
      return await work(writer);
    } catch (error) {
      writer.head = undefined; // the next append reads the head again
      // named errors pass; a store error is a LogWriteError (whether the engine wrote is unknown)
      throw error instanceof ContextLedgerError ? error : closed ? new LogClosedError({ cause: error }) : new LogWriteError(sessionId, error);
    } finally {
      writer.draining = undefined;
      release();
      if (writer.queue.length > 0) writer.draining = drain(sessionId, writer);
    }
  };

  // ---- reads ----

  /** The event stored under `seq`, decoded (upcast) and checked to be that session's event at that seq. */
  const decodeRaw = (sessionId: string, seq: number, raw: unknown): SessionEvent => {
    const decoded = decodeEvent(raw, decodeOptions);
    if (E.isLeft(decoded)) {
      throw new EventDecodeError({ sessionId, seq, issues: decoded.left.issues });
    }
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

  const decodeStored = (sessionId: string, seq: number, value: string): SessionEvent => {
    let raw: unknown;
    try {
      raw = JSON.parse(value);
    } catch (cause) {
      throw new EventDecodeError({ sessionId, seq, issues: [{ path: '', message: `stored value is not JSON: ${(cause as Error).message}` }], cause });
    }
    return decodeRaw(sessionId, seq, raw);
  };

  /**
   * The iterator behind `read` and `readStored`. It behaves as an async generator would (checks on the first `next`,
   * done for good after an error or `return`, calls served in order), but hands out events from the current page
   * without the two promise turns per event that a generator's `yield` costs.
   */
  const readEvents = (sessionId: string, readOptions: ReadOptions, storedTexts = false): AsyncIterableIterator<SessionEvent> => {
    const verifying = readOptions.verify === true && !storedTexts;
    let expected = 1;
    // With `verify`: the stored hash of the event before the next one (undefined: that event is missing).
    let prevHash: string | undefined = GENESIS_HASH;
    const missing = (seq: number, detail: string): Error =>
      verifying ? new ChainBrokenError(sessionId, seq, `event ${seq} is missing`) : new EventDecodeError({ sessionId, seq, issues: [{ path: 'seq', message: `event ${seq} is missing (${detail})` }] });
    /** The next event, checked against the chain (read with `verify`). */
    const checkedEvent = (seq: number, value: string): SessionEvent => {
      if (prevHash === undefined) throw missing(seq - 1, '');
      const link = checkLink(sessionId, seq, value, prevHash, chainKey);
      if (typeof link === 'string') throw new ChainBrokenError(sessionId, seq, link);
      prevHash = link.hash;
      return decodeRaw(sessionId, seq, link.raw);
    };
    let chunks: AsyncGenerator<readonly StoredRow[], number | undefined> | undefined;
    let entries: readonly StoredRow[] = [];
    let index = 0;
    let finished = false;
    let refilling: Promise<void> | undefined;
    const done = (): IteratorResult<SessionEvent> => ({ done: true, value: undefined });
    const finish = async (): Promise<void> => {
      finished = true;
      entries = [];
      index = 0;
      if (chunks) await chunks.return(undefined);
    };
    const refill = async (): Promise<void> => {
      try {
        if (!chunks) {
          ensureOpen();
          assertSessionId(sessionId);
          const range = readRange(readOptions);
          if (range === undefined) {
            finished = true;
            return;
          }
          expected = range.fromSeq;
          if (verifying && range.fromSeq > 1) prevHash = await storedHashAt(sessionId, range.fromSeq - 1);
          chunks = pages(sessionId, range.fromSeq, range.toSeq);
        }
        const result = await chunks.next();
        if (result.done) {
          // an engine that bounded the read at its head: the events up to it must all have been there
          if (result.value !== undefined && expected <= result.value) throw missing(expected, `the head is ${result.value}`);
          finished = true;
          return;
        }
        entries = result.value;
        index = 0;
      } catch (error) {
        await finish();
        throw error;
      }
    };
    const iterator: AsyncIterableIterator<SessionEvent> = {
      async next() {
        for (;;) {
          if (index < entries.length) {
            const [seq, value] = entries[index++] as StoredRow;
            try {
              if (seq !== expected) throw missing(expected, `the next stored event is ${seq}`);
              if (verifying) {
                const event = checkedEvent(seq, value);
                expected += 1;
                return { done: false, value: event };
              }
              expected += 1;
              // `readStored` (storedTexts) hands out the texts undecoded; the seq checks above still apply.
              return { done: false, value: storedTexts ? (value as unknown as SessionEvent) : decodeStored(sessionId, seq, value) };
            } catch (error) {
              await finish();
              throw error;
            }
          }
          if (finished) return done();
          // Concurrent calls share one refill, so no page is skipped; its error goes to the call
          // that started it, and the others then find the iterator done.
          if (refilling) {
            await refilling.catch(() => {});
            continue;
          }
          refilling = refill().finally(() => {
            refilling = undefined;
          });
          await refilling;
        }
      },
      async return() {
        if (refilling) await refilling.catch(() => {});
        await finish();
        return done();
      },
      [Symbol.asyncIterator]() {
        return iterator;
      },
    };
    return iterator;
  };

  // ---- checkpoints ----

  // The newest checkpoint at or below `seq` that is readable and not past the head; a damaged one is
  // skipped, never trusted (callers still check its hash against the log).
  const checkpointAtOrBefore = async (sessionId: string, seq: number): Promise<StoredCheckpoint | undefined> => {
    ensureOpen();
    assertSessionId(sessionId);
    const wanted = checkpointQuerySeq(seq);
    const limit = Math.min(await log.head(sessionId), wanted);
    if (limit < 1) return undefined;
    for await (const text of engine.checkpoints(sessionId, limit)) {
      const parsed = parseStoredCheckpoint(text);
      if (parsed) return parsed;
    }
    return undefined;
  };

  /** Reads one async iterable of pages as `{ seq, text }` (what the erasure planner reads). */
  async function* storedEvents(source: AsyncIterable<readonly StoredRow[]>): AsyncIterable<{ seq: number; text: string }> {
    for await (const page of source) for (const [seq, text] of page) yield { seq, text };
  }

  /** One erase, with the session held: planned from the stored events, the `event.erased` event sealed on the head, written at once. */
  const eraseHeld = async (sessionId: string, writer: SessionWriter, held: HeldSession, selector: EraseSelector, options: EraseOptions): Promise<EraseResult> => {
    const head = await loadWriterHead(sessionId, writer, () => held.head());
    const seq = head.seq + 1;
    const at = stampOf(sessionId, clock);
    const plan = await planErasure({
      sessionId,
      selector,
      options,
      head: head.seq,
      erasedSeq: seq,
      at,
      chainKey,
      events: (fromSeq) => storedEvents(held.rows(fromSeq, head.seq)),
    });
    if (!plan) return { erased: [], seq: undefined };
    const chain = writer.chain;
    const full = unsealedEvent(sessionId, seq, at, EVENT_VERSIONS['event.erased'], head.hash, chain, undefined, plan.event, chain === 2 ? saltFrom(sessionId, salt) : undefined);
    const { hash, text } = sealEventAs(chain, head.hash, full, chainKey);
    await held.rewrite({
      replace: plan.writes,
      append: { seq, type: 'event.erased', at, prevHash: head.hash, hash, text },
      checkpointsFrom: Math.min(...plan.writes.map((w) => w.seq)),
      keyId,
    });
    writer.head = { seq, hash };
    return { erased: plan.erased, seq, ...(plan.copies.length > 0 ? { copies: plan.copies.map((c) => c.seq) } : {}) };
  };

  /** Runs `run` after the checks every call makes first (open, a valid id), as a rejected promise when they fail. */
  const checked = <R>(sessionId: string, run: () => Promise<R>): Promise<R> => {
    try {
      ensureOpen();
      assertSessionId(sessionId);
      return run();
    } catch (error) {
      return Promise.reject(error);
    }
  };

  const log: SessionEventLog = {
    erase(sessionId, selector, eraseOptions) {
      return checked(sessionId, () =>
        exclusive(sessionId, async (writer) => {
          const options = eraseOptionsOf(eraseOptions);
          writer.head = undefined;
          const result = await engine.hold(sessionId, (held) => eraseHeld(sessionId, writer, held, selector, options));
          if (result.seq !== undefined) notifyFollowers(sessionId); // once committed
          return result;
        }),
      );
    },

    deleteSession(sessionId) {
      return checked(sessionId, () =>
        exclusive(sessionId, async (writer) => {
          const deleted = await engine.hold(sessionId, (held) => held.remove());
          writer.head = undefined;
          notifyFollowers(sessionId);
          return { deleted };
        }),
      );
    },

    append(sessionId, events, appendOptions: AppendOptions = {}) {
      try {
        ensureOpen();
        assertSessionId(sessionId);
        const expectedSeq = expectedSeqOption(appendOptions.expectedSeq);
        let validated = validateBatch(sessionId, events) as unknown as NewSessionEvent[];
        let redactions: (readonly Redaction[] | undefined)[] | undefined;
        if (redact !== undefined) ({ events: validated, redactions } = redactBatch(sessionId, redact, validated));
        return new Promise<readonly SessionEvent[]>((resolve, reject) => {
          enqueue(sessionId, redactions ? { events: validated, expectedSeq, redactions, at: undefined, resolve, reject } : { events: validated, expectedSeq, at: undefined, resolve, reject });
        });
      } catch (error) {
        return Promise.reject(error);
      }
    },

    importStored(sessionId, storedTexts) {
      try {
        ensureOpen();
        assertSessionId(sessionId);
        const texts = Array.isArray(storedTexts) ? [...storedTexts] : storedTexts;
        return new Promise<ImportResult>((resolve, reject) => {
          enqueue(sessionId, { events: [], expectedSeq: undefined, imported: texts, at: undefined, resolve: (_events, tip) => resolve({ imported: texts.length, head: tip.seq }), reject });
        });
      } catch (error) {
        return Promise.reject(error);
      }
    },

    read(sessionId, readOptions: ReadOptions = {}) {
      return { [Symbol.asyncIterator]: () => readEvents(sessionId, readOptions) };
    },

    readStored(sessionId, readOptions: ReadOptions = {}) {
      return { [Symbol.asyncIterator]: () => readEvents(sessionId, readOptions, true) as unknown as AsyncIterableIterator<string> };
    },

    async head(sessionId) {
      ensureOpen();
      assertSessionId(sessionId);
      const cached = singleWriter ? writers.get(sessionId)?.head : undefined;
      return cached ? cached.seq : (await engineHead(sessionId)).seq;
    },

    async anchor(sessionId) {
      ensureOpen();
      assertSessionId(sessionId);
      const writer = writers.get(sessionId);
      if (writer?.draining) await writer.draining;
      const head = (singleWriter ? writers.get(sessionId)?.head : undefined) ?? (await engineHead(sessionId));
      return { seq: head.seq, hash: head.hash };
    },

    sessions() {
      return {
        [Symbol.asyncIterator]: async function* () {
          ensureOpen();
          const ids = engine.sessions()[Symbol.asyncIterator]();
          try {
            for (;;) {
              let result: IteratorResult<string>;
              try {
                result = await ids.next();
              } catch (error) {
                throw closedOr(error);
              }
              if (result.done) return;
              yield result.value;
              ensureOpen();
            }
          } finally {
            await ids.return?.();
          }
        },
      };
    },

    async verify(sessionId, verifyOptions = {}) {
      ensureOpen();
      assertSessionId(sessionId);
      const anchors = anchorsBySeq(verifyOptions.anchors);
      if (typeof anchors === 'string') throw new InvalidOptionsError('verify', [{ path: 'anchors', message: anchors }]);
      const writer = writers.get(sessionId);
      if (writer?.draining) await writer.draining;
      const broken = (seq: number, count: number, problem: string): VerifyResult => ({ valid: false, eventCount: count, firstBrokenSeq: seq, problem });
      const genesisAnchor = anchors.get(0);
      if (genesisAnchor !== undefined && genesisAnchor !== GENESIS_HASH) return broken(1, 0, 'the anchor at seq 0 is not the genesis hash');
      const readRecord = async (): Promise<{ record?: Head; problem?: string; keyId?: string }> => {
        if (!engine.headRecord) return {};
        let found: Awaited<ReturnType<NonNullable<SessionLogEngine['headRecord']>>>;
        try {
          found = await engine.headRecord(sessionId);
        } catch (error) {
          throw closedOr(error);
        }
        if (found === undefined) return {};
        if ('problem' in found) return { problem: found.problem };
        return { record: { seq: found.seq, hash: found.hash }, ...(found.keyId === undefined ? {} : { keyId: found.keyId }) };
      };
      // The head record is read before the events: it is written with a session's first batch, so the
      // events read after it include the ones it names.
      const first = await readRecord();
      let { record, problem } = first;
      let expected = 1;
      let prevHash = GENESIS_HASH;
      let count = 0;
      let hashAtRecord: string | undefined = record?.seq === 0 ? GENESIS_HASH : undefined;
      const erasures = createErasureCheck();
      for await (const page of pages(sessionId, 1, MAX_SEQ)) {
        for (const [seq, value] of page) {
          count += 1;
          if (seq !== expected) return broken(expected, count, `event ${expected} is missing`);
          const link = checkLink(sessionId, seq, value, prevHash, chainKey);
          if (typeof link === 'string') {
            const { problem: keyedProblem, keyed } = keyedVerifyProblem(seq, link, first.keyId, keyId);
            return keyed ? { ...broken(seq, count, keyedProblem), keyed } : broken(seq, count, keyedProblem);
          }
          const erasureProblem = erasures.add(seq, link.raw);
          if (erasureProblem !== undefined) return broken(seq, count, erasureProblem);
          const anchored = anchors.get(seq);
          if (anchored !== undefined && anchored !== link.hash) {
            return broken(seq, count, `event ${seq} does not match its anchor: the chain was rewritten at or before it`);
          }
          if (seq === record?.seq) hashAtRecord = link.hash;
          prevHash = link.hash;
          expected += 1;
        }
      }
      const rollback = rollbackOf(count, anchors);
      if (rollback) return rollback;
      const unclaimed = erasures.unclaimed();
      if (unclaimed !== undefined) return broken(unclaimed, count, unclaimedProblem(unclaimed, erasures.isCopy(unclaimed)));
      if (!engine.headRecord) return validWithErasures(count, erasures);
      if ((record === undefined || problem !== undefined) && count > 0) {
        // A first batch (or a repair) may have been written between reading the record and the events.
        const again = await readRecord();
        if (again.record !== undefined && again.record.seq <= count) {
          ({ record, problem } = again);
          hashAtRecord = record?.seq === 0 ? GENESIS_HASH : await storedHashAt(sessionId, again.record.seq);
        }
      }
      if (problem !== undefined) return broken(count + 1, count, `${problem} (the next append rewrites it)`);
      // The record is the session's stored anchor: the chain must hold its hash at its seq.
      if (record === undefined) {
        if (count > 0) return broken(count + 1, count, `the head record is missing but ${count} events are stored (the next append rewrites it)`);
      } else if (record.seq > count) {
        return {
          valid: false,
          eventCount: count,
          firstBrokenSeq: count + 1,
          problem: `rollback: the head record is at seq ${record.seq} but the session has ${count} events (acknowledged events were removed from its end)`,
          rollback: true,
        };
      } else if (hashAtRecord !== record.hash) {
        return broken(record.seq, count, `the head record does not match event ${record.seq}: the chain was rewritten at or before it`);
      }
      return validWithErasures(count, erasures);
    },

    async putCheckpoint(sessionId, checkpoint, putOptions = {}) {
      ensureOpen();
      assertSessionId(sessionId);
      checkCheckpointPut(sessionId, checkpoint, putOptions.band);
      checkpointWithinHead(sessionId, checkpoint.seq, await log.head(sessionId));
      await engine.putCheckpoint(sessionId, { seq: checkpoint.seq, hash: String(checkpoint.hash), text: JSON.stringify(checkpoint) }, putOptions.band);
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
        watch: async (changed) => {
          ensureOpen();
          assertSessionId(sessionId);
          const stopHere = watchHere(sessionId, changed);
          if (!engine.watch) return stopHere;
          let stopThere: () => void;
          try {
            stopThere = await engine.watch(sessionId, changed);
          } catch (error) {
            stopHere();
            throw error;
          }
          return () => {
            stopHere();
            stopThere();
          };
        },
        isClosed: () => closed,
      });
    },

    async close() {
      if (closed) return;
      closed = true;
      for (const set of followers.values()) for (const changed of set) changed();
      await Promise.all([...writers.values()].map((w) => w.draining));
      await engine.close();
    },
  };
  registerWriterStates(log, () => writers.size);
  return log;
};

