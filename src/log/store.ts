// The one SessionEventLog implementation, over any abstract-level store (LevelDB on disk or memory-level).
import type { AbstractLevel } from 'abstract-level';
import * as E from 'fp-ts/lib/Either.js';
import {
  EventDecodeError,
  InvalidEventError,
  decodeEvent,
  validateNewEvent,
  EVENT_VERSIONS,
  type NewSessionEvent,
  type SessionEvent,
  type UpcasterRegistry,
} from '../events/index.js';
import { sortKeysInPlace } from '../events/canonical.js';
import { ContextLedgerError, InvalidOptionsError } from '../errors.js';
import {
  ChainBrokenError,
  ExpectedSeqConflictError,
  InvalidCheckpointError,
  InvalidSessionIdError,
  LogClosedError,
  LogWriteError,
  MAX_SESSION_ID_LENGTH,
  SeqLimitError,
} from './errors.js';
import { anchorsBySeq, checkLink, createErasureCheck, rollbackOf, unclaimedProblem, validWithErasures } from './chain-check.js';
import { CURRENT_CHAIN_VERSION, GENESIS_HASH, chainVersionOf, sealEventAs, type ChainKey, type ChainVersion } from './hash-chain.js';
import { redactBatch, redactOption, type Redaction, type Redactor } from './redact.js';
import { createErasure } from './store-erase.js';
import { saltFrom, saltOption, type SaltSource } from './salt.js';
import { assertTipSealedWith, chainKeyId, keyedVerifyProblem } from './chain-key.js';
import {
  MAX_SEQ,
  checkpointKey,
  checkpointRange,
  encodeSeq,
  eventKey,
  eventRange,
  headKey,
  headRange,
  seqOfKey,
  sessionIdOfHeadKey,
} from './keys.js';
import type {
  AppendOptions,
  Clock,
  PutCheckpointOptions,
  ReadOptions,
  SessionEventLog,
  StoredCheckpoint,
  VerifyOptions,
  VerifyResult,
} from './types.js';
import { followSession } from './follow.js';
import { registerWriterStates } from './writer-states.js';
import { verifyStoredTexts } from './stored.js';
import { expectedSeqOption, seqOption } from './validate.js';

export type StringLevel = AbstractLevel<string | Buffer | Uint8Array, string, string>;

interface Head {
  readonly seq: number;
  readonly hash: string;
  /** The chain version of the event at `seq` (set where the head is read from the store). */
  readonly chain?: ChainVersion;
}

interface PendingAppend {
  readonly events: readonly NewSessionEvent[];
  readonly expectedSeq: number | undefined;
  /** What the `redact` option replaced in each event (undefined where nothing). */
  readonly redactions?: readonly (readonly Redaction[] | undefined)[];
  /** Set for `importStored`: stored texts to verify against the tip and write as they are. */
  readonly imported?: readonly string[];
  /** `tip` is the session's head once this append is written. */
  readonly resolve: (events: readonly SessionEvent[], tip: Head) => void;
  readonly reject: (error: unknown) => void;
}

interface SessionWriter {
  /** `eventKey(sessionId, seq)` is `keyPrefix + encodeSeq(seq)`: the session part is encoded once. */
  readonly keyPrefix: string;
  readonly headKey: string;
  head: Head | undefined;
  /**
   * Whether the session's head record is stored and holds against the chain (read with `head`). When
   * false, the next batch writes it at its tip: the first batch of a session, or a repair.
   */
  recordHolds: boolean;
  /** The session's chain version (of its events so far; for a new session, the log's). Set with `head`. */
  chain: ChainVersion;
  queue: PendingAppend[];
  draining: Promise<void> | undefined;
}

/** One group of appends sealed onto a head, not yet written: what to write, and who is told what once it is. */
interface StagedGroup {
  /** Every append of the group, in queue order (put back in the queue if the group is dropped unwritten). */
  readonly pendings: PendingAppend[];
  /** The head the group is sealed onto. */
  readonly base: Head;
  readonly ops: { type: 'put'; key: string; value: string }[];
  readonly accepted: { pending: PendingAppend; stored: SessionEvent[]; tip: Head }[];
  /** Appends refused while sealing; told when the group is written. */
  readonly rejected: { pending: PendingAppend; error: unknown }[];
  /** The head once the group is written. */
  tip: Head;
}

export interface StoreOptions {
  readonly clock?: Clock | undefined;
  readonly sync?: boolean | undefined;
  /** Keyed chain (HMAC-SHA256 with this key); see LogOptions. */
  readonly chainKey?: ChainKey | undefined;
  readonly upcasters?: UpcasterRegistry | undefined;
  /** Most appends folded into one batch (group commit). */
  readonly maxGroup?: number | undefined;
  /** Largest stored size of one event in UTF-8 bytes (default {@link DEFAULT_MAX_EVENT_BYTES}). */
  readonly maxEventBytes?: number | undefined;
  /** Redaction before append; see LogOptions. */
  readonly redact?: Redactor | undefined;
  /** The chain version new sessions are written with (default 2); see LogOptions. */
  readonly chainVersion?: ChainVersion | undefined;
  /** Where chain-version-2 content salts come from (default random); see LogOptions. */
  readonly salt?: SaltSource | undefined;
  /** Called once when `close()` has closed the store (openLevelLog releases the directory). */
  readonly onClose?: (() => void) | undefined;
}

/** The default `maxEventBytes`: 64 MiB. */
export const DEFAULT_MAX_EVENT_BYTES = 64 * 1024 * 1024;

export { seqOption };

const READ_CHUNK = 512;

/** A clock reading as an ISO string (no validation: see stampOf). */
export const toIso = (value: Date | string | number): string =>
  typeof value === 'string' ? value : (value instanceof Date ? value : new Date(value)).toISOString();

/** The `at` stamp of a clock reading; an empty string, an invalid date or anything else is an InvalidEventError. */
export const stampOf = (sessionId: string, read: () => unknown): string => {
  let value: unknown;
  let problem: string;
  try {
    value = read();
    if (typeof value === 'string') {
      if (value.length > 0) return value;
      problem = 'the clock returned an empty string';
    } else if (value instanceof Date || typeof value === 'number') {
      const date = value instanceof Date ? value : new Date(value);
      if (!Number.isNaN(date.getTime())) return date.toISOString();
      problem = `the clock returned an invalid date (${String(value)})`;
    } else {
      problem = `the clock returned ${typeof value}; expected a Date, an ISO string or epoch milliseconds`;
    }
  } catch (cause) {
    problem = `the clock threw: ${cause instanceof Error ? cause.message : 'a non-Error value'}`;
  }
  throw new InvalidEventError({ sessionId, index: 0, issues: [{ path: 'at', message: problem }] });
};

export const assertSessionId = (sessionId: unknown): string => {
  if (typeof sessionId !== 'string' || sessionId.length === 0 || sessionId.length > MAX_SESSION_ID_LENGTH) {
    throw new InvalidSessionIdError(sessionId);
  }
  return sessionId;
};

const eventKeyPrefix = (sessionId: string): string => {
  const key = eventKey(sessionId, 0);
  return key.slice(0, key.length - encodeSeq(0).length);
};

/** The stored head record: absent, valid, or what is wrong with it (it is never trusted unchecked). */
type HeadRecord = { readonly head: Head | undefined; readonly problem?: string; readonly keyId?: string };

const parseHeadRecord = (text: string | undefined): HeadRecord => {
  if (text === undefined) return { head: undefined };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { head: undefined, problem: 'the head record is not JSON' };
  }
  const seq = (raw as { seq?: unknown } | null)?.seq;
  const hash = (raw as { hash?: unknown } | null)?.hash;
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0 || typeof hash !== 'string' || !/^[0-9a-f]{64}$/.test(hash)) {
    return { head: undefined, problem: `the head record is not { seq: a non-negative integer, hash: 64 hex digits }: ${text.slice(0, 120)}` };
  }
  const keyId = (raw as { keyId?: unknown }).keyId;
  return { head: { seq, hash }, ...(typeof keyId === 'string' ? { keyId } : {}) };
};

/** The stored head record: the head, and for a keyed log its chain key id (the session says it is keyed). */
const headRecordText = (tip: Head, keyId: string | undefined): string => JSON.stringify(keyId === undefined ? tip : { ...tip, keyId });


const NOT_PLAIN: unique symbol = Symbol('not plain JSON');
const MAX_PLAIN_DEPTH = 64;

/**
 * `JSON.parse(JSON.stringify(value))` made directly for a value that is plain JSON already (plain
 * objects and arrays, strings, finite numbers, booleans, null), as events nearly always are: no text
 * is built and parsed, and the copy is the same (same keys in the same order). Anything
 * the round trip would change or reject (undefined, functions, symbols, bigints, non-finite numbers,
 * -0, holes, toJSON, class instances, boxed values, a '__proto__' key, deep nesting or a cycle)
 * gives NOT_PLAIN, and the caller takes the round trip itself.
 */
const copyPlainJson = (value: unknown, depth: number): unknown => {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0) ? value : NOT_PLAIN;
    case 'object':
      break;
    default:
      return NOT_PLAIN;
  }
  if (value === null) return null;
  if (depth > MAX_PLAIN_DEPTH || typeof (value as { toJSON?: unknown }).toJSON === 'function') return NOT_PLAIN;
  const proto: unknown = Object.getPrototypeOf(value);
  if (Array.isArray(value)) {
    if (proto !== Array.prototype) return NOT_PLAIN;
    const out: unknown[] = [];
    for (let i = 0; i < value.length; i++) {
      if (!(i in value)) return NOT_PLAIN;
      const v = copyPlainJson(value[i], depth + 1);
      if (v === NOT_PLAIN) return NOT_PLAIN;
      out.push(v);
    }
    return out;
  }
  if (proto !== Object.prototype && proto !== null) return NOT_PLAIN;
  const obj = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  const keys = Object.keys(obj);
  // Keys in sorted order, as `read` gives them back (the stored text is canonical JSON), so what `append`
  // returns and what `read` returns are deep-equal, key order included (law 10).
  sortKeysInPlace(keys);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    if (key === '__proto__') return NOT_PLAIN;
    const v = copyPlainJson(obj[key], depth + 1);
    if (v === NOT_PLAIN) return NOT_PLAIN;
    out[key] = v;
  }
  return out;
};

const MAX_JSON_DEPTH = 1000;

/** Why `value` is not JSON, in words, for a value the fast copy refused. */
const notJsonReason = (value: unknown): string => {
  switch (typeof value) {
    case 'number':
      return `${String(value)} is not a JSON number`;
    case 'undefined':
      return 'undefined is not JSON (in an array it would turn into null)';
    case 'function':
      return 'a function is not JSON';
    case 'symbol':
      return 'a symbol is not JSON';
    case 'bigint':
      return 'a bigint is not JSON (write it as a string)';
    default:
      break;
  }
  if (value instanceof Date) return 'a Date is not JSON (write it as an ISO string)';
  const name = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  return `${typeof name === 'string' && name !== '' ? `a ${name}` : 'an object that is not a plain object'} is not JSON`;
};

class NotJson extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(reason);
  }
}

const joinPath = (path: string, key: string | number): string => (path === '' ? String(key) : `${path}.${key}`);

/**
 * The slow path behind copyPlainJson: the same copy for values that are JSON but that the fast path
 * leaves to it (-0, a property whose value is undefined, which JSON leaves out, a '__proto__' key, deep
 * nesting), and a NotJson error with the path for anything else: non-finite numbers, undefined in an
 * array, functions, symbols, bigints, holes, Dates and other class instances, boxed values, cycles.
 */
const normalizeJson = (value: unknown, path: string, ancestors: object[]): unknown => {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (!Number.isFinite(value)) throw new NotJson(path, notJsonReason(value));
      return Object.is(value, -0) ? 0 : value;
    case 'object':
      break;
    default:
      throw new NotJson(path, notJsonReason(value));
  }
  if (value === null) return null;
  if (ancestors.includes(value)) throw new NotJson(path, 'a circular reference is not JSON');
  if (ancestors.length >= MAX_JSON_DEPTH) throw new NotJson(path, `nested deeper than ${MAX_JSON_DEPTH} levels`);
  const proto: unknown = Object.getPrototypeOf(value);
  ancestors.push(value);
  try {
    if (Array.isArray(value) && proto === Array.prototype) {
      const out: unknown[] = [];
      for (let i = 0; i < value.length; i++) {
        if (!(i in value)) throw new NotJson(joinPath(path, i), 'an array hole is not JSON');
        out.push(normalizeJson(value[i], joinPath(path, i), ancestors));
      }
      return out;
    }
    if ((proto !== Object.prototype && proto !== null) || typeof (value as { toJSON?: unknown }).toJSON === 'function') {
      throw new NotJson(path, typeof (value as { toJSON?: unknown }).toJSON === 'function' && !(value instanceof Date) ? 'an object with toJSON is not plain JSON' : notJsonReason(value));
    }
    const out: Record<string, unknown> = {};
    // sorted, as copyPlainJson gives them and `read` gives them back (law 10)
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v === undefined) continue; // JSON leaves the property out
      const copy = normalizeJson(v, joinPath(path, key), ancestors);
      if (key === '__proto__') Object.defineProperty(out, key, { value: copy, enumerable: true, writable: true, configurable: true });
      else out[key] = copy;
    }
    return out;
  } finally {
    ancestors.pop();
  }
};

/** Validates and copies a batch as JSON; throws InvalidEventError (with index and path) on the first bad one. */
export const validateBatch = (sessionId: string, events: readonly NewSessionEvent[]): Record<string, unknown>[] => {
  if (!Array.isArray(events)) {
    throw new InvalidEventError({ sessionId, index: 0, issues: [{ path: '', message: 'expected an array of events' }] });
  }
  return events.map((event, index) => {
    let plain: unknown;
    try {
      plain = copyPlainJson(event, 0);
      if (plain === NOT_PLAIN) plain = normalizeJson(event, '', []);
    } catch (error) {
      // a getter or a proxy that throws while the value is copied: the event cannot be read as JSON
      const issue =
        error instanceof NotJson
          ? { path: error.path, message: error.reason }
          : { path: '', message: `reading the value threw: ${error instanceof Error ? error.message : 'a non-Error value'}` };
      let eventType: string | undefined;
      try {
        const type = (event as { type?: unknown } | null)?.type;
        eventType = typeof type === 'string' ? type : undefined;
      } catch {
        eventType = undefined;
      }
      throw new InvalidEventError({ sessionId, index, eventType, issues: [issue] });
    }
    const result = validateNewEvent(plain, index, sessionId);
    if (E.isLeft(result)) throw result.left;
    return result.right as Record<string, unknown>;
  });
};

/** Idle per-session writer states kept to spare a head read on the next append; older idle ones are released. */
const MAX_IDLE_WRITERS = 256;

export { writerStateCount } from './writer-states.js';

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

/** Builds a SessionEventLog over an opened abstract-level store with utf8 keys and values. */
export const createStoreLog = (db: StringLevel, options: StoreOptions = {}): SessionEventLog => {
  const clock: Clock = options.clock ?? (() => new Date());
  const sync = options.sync === true;
  const maxGroup = positiveIntegerOption('maxGroup', options.maxGroup, 1024);
  const maxEventBytes = positiveIntegerOption('maxEventBytes', options.maxEventBytes, DEFAULT_MAX_EVENT_BYTES);
  if (options.clock !== undefined && typeof options.clock !== 'function') {
    throw new InvalidOptionsError('the log', [{ path: 'clock', message: `must be a function, got ${typeof options.clock}` }]);
  }
  const chainKey: ChainKey | undefined = options.chainKey;
  if (chainKey !== undefined && !((typeof chainKey === 'string' || chainKey instanceof Uint8Array) && chainKey.length > 0)) {
    throw new InvalidOptionsError('the log', [{ path: 'chainKey', message: 'must be a non-empty string or Uint8Array' }]);
  }
  const keyId = chainKey === undefined ? undefined : chainKeyId(chainKey);
  // `sync` is a classic-level write option (fsync); memory-level ignores it. It is only set when on:
  // abstract-level copies the batch options into every operation.
  const writeOptions = (sync ? { sync } : {}) as object;
  const redact = redactOption(options.redact);
  const defaultChain = chainVersionOption(options.chainVersion);
  const salt = saltOption(options.salt);
  const writers = new Map<string, SessionWriter>();
  let closed = false;

  // ---- importStored and subscribe (moving and following sessions) ----

  /** In-process subscribers per session, called after each written batch and on close. */
  const followers = new Map<string, Set<() => void>>();
  const notifyFollowers = (sessionId: string): void => {
    const set = followers.get(sessionId);
    if (set) for (const changed of set) changed();
  };
  const watchSession = (sessionId: string, changed: () => void): (() => void) => {
    let set = followers.get(sessionId);
    if (!set) followers.set(sessionId, (set = new Set()));
    set.add(changed);
    return () => {
      set.delete(changed);
      if (set.size === 0 && followers.get(sessionId) === set) followers.delete(sessionId);
    };
  };

  /** A store error as the caller should see it: LogClosedError once `close()` has been called. */
  const closedOr = (error: unknown): unknown => (closed && !(error instanceof LogClosedError) ? new LogClosedError({ cause: error }) : error);

  /** The head record as stored, checked. */
  const readHeadRecord = async (sessionId: string): Promise<HeadRecord> => {
    try {
      return parseHeadRecord(await db.get(headKey(sessionId)));
    } catch (error) {
      throw closedOr(error);
    }
  };

  /**
   * The head appends chain onto: the last stored event (one reverse seek), never the head record
   * alone, so a head record that is missing, damaged or ahead of the events (a store that lost its
   * tail) can neither make an append overwrite an event nor leave a gap. `verify` reports such a record.
   */
  const loadHead = async (sessionId: string, onTip?: (seq: number, text: string) => void): Promise<Head> => {
    let last: [string, string] | undefined;
    try {
      [last] = (await db.iterator({ ...eventRange(sessionId, 1, MAX_SEQ), reverse: true, limit: 1 }).all()) as [string, string][];
    } catch (error) {
      throw closedOr(error);
    }
    if (!last) return { seq: 0, hash: GENESIS_HASH };
    const seq = seqOfKey(last[0]);
    let raw: unknown;
    try {
      raw = JSON.parse(last[1]);
    } catch {
      raw = undefined;
    }
    const hash = (raw as { hash?: unknown } | undefined)?.hash;
    if ((raw as { seq?: unknown } | undefined)?.seq === seq && typeof hash === 'string') {
      onTip?.(seq, last[1]);
      return { seq, hash, chain: chainVersionOf(raw as Record<string, unknown>) };
    }
    throw new EventDecodeError({
      sessionId,
      seq,
      issues: [{ path: 'hash', message: 'the last stored event is damaged: there is no hash to chain an append onto' }],
    });
  };

  /**
   * Loads a writer's head, and whether the head record holds: it is stored, readable, at or below
   * the head, and the chain has its hash at its seq. The record is written once, with a session's
   * first batch (a legacy store has it at an older head); one that does not hold is rewritten by the
   * next batch, at its tip.
   */
  const loadWriterHead = async (sessionId: string, writer: SessionWriter): Promise<Head> => {
    const [head, { head: record }] = await Promise.all([loadHead(sessionId, (seq, text) => assertTipSealedWith(sessionId, seq, text, chainKey)), readHeadRecord(sessionId)]);
    let holds = false;
    if (record !== undefined && record.seq <= head.seq) {
      const hashThere = record.seq === head.seq ? head.hash : record.seq === 0 ? GENESIS_HASH : await storedHashAt(sessionId, record.seq);
      holds = hashThere === record.hash;
    }
    writer.recordHolds = holds;
    writer.chain = head.seq === 0 ? defaultChain : (head.chain ?? 1);
    writer.head = head;
    return head;
  };

  /**
   * After a failed write, whether the store holds the batch anyway: true when its last event is the batch's tip,
   * false when it is still the head the batch was sealed onto, undefined when the store cannot say.
   */
  const writtenAfterFailure = async (sessionId: string, base: Head, tip: Head): Promise<boolean | undefined> => {
    try {
      const now = await loadHead(sessionId);
      if (now.seq === tip.seq && now.hash === tip.hash) return true;
      if (now.seq === base.seq && now.hash === base.hash) return false;
      return undefined;
    } catch {
      return undefined;
    }
  };

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
      writer = {
        keyPrefix: eventKeyPrefix(sessionId),
        headKey: headKey(sessionId),
        head: undefined,
        recordHolds: false,
        chain: defaultChain,
        queue: [],
        draining: undefined,
      };
      writers.set(sessionId, writer);
    }
    return writer;
  };

  const tooLarge = (sessionId: string, index: number, type: string, detail: string): InvalidEventError =>
    new InvalidEventError({ sessionId, index, eventType: type, issues: [{ path: '', message: detail }] });

  /**
   * Seals `pendings` onto the staged group's tip and adds them to it. Nothing is settled here: an
   * append that cannot be sealed (a seq conflict, too large, any other error) goes to `rejected`
   * alone and is told when the group is written, so a group sealed ahead of the write before it can
   * be dropped and sealed again if that write fails.
   */
  const stageAppends = (sessionId: string, writer: SessionWriter, staged: StagedGroup, pendings: readonly PendingAppend[]): void => {
    const { ops, accepted, rejected } = staged;
    let tip = staged.tip;
    let chain = writer.chain;
    for (const pending of pendings) {
      staged.pendings.push(pending);
      if (pending.imported) {
        try {
          const verified = verifyStoredTexts(sessionId, tip, pending.imported, chainKey === undefined ? decodeOptions : { ...decodeOptions, chainKey });
          for (const entry of verified) ops.push({ type: 'put', key: writer.keyPrefix + encodeSeq(entry.seq), value: entry.text });
          const last = verified[verified.length - 1];
          if (last) tip = { seq: last.seq, hash: last.hash };
          if (last) writer.chain = chain = chainVersionOf(JSON.parse(last.text) as Record<string, unknown>);
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
      const opsBefore = ops.length;
      const tipBefore = tip;
      try {
        const at = stampOf(sessionId, clock);
        const stored: SessionEvent[] = [];
        let seq = tip.seq;
        let prevHash = tip.hash;
        for (let index = 0; index < pending.events.length; index++) {
          const event = pending.events[index] as NewSessionEvent;
          seq += 1;
          const type = event['type'] as keyof typeof EVENT_VERSIONS;
          const v = EVENT_VERSIONS[type];
          // One object, the event as `append` returns it: the envelope in the order `read` decodes it
          // (hash after prevHash), then type and payload. Its `hash` is undefined while it is sealed, so
          // the canonical JSON leaves it out; sealEvent then sets it, in its place.
          const full = unsealedEvent(sessionId, seq, at, v, prevHash, chain, pending.redactions?.[index], event, chain === 2 ? saltFrom(sessionId, salt, index) : undefined);
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
          ops.push({ type: 'put', key: writer.keyPrefix + encodeSeq(seq), value: text });
          stored.push(full as unknown as SessionEvent);
          prevHash = hash;
        }
        if (seq !== tip.seq) tip = { seq, hash: prevHash };
        accepted.push({ pending, stored, tip });
      } catch (error) {
        ops.length = opsBefore;
        tip = tipBefore;
        rejected.push({ pending, error });
      }
    }
    staged.tip = tip;
  };

  const stageGroup = (sessionId: string, writer: SessionWriter, base: Head, pendings: readonly PendingAppend[]): StagedGroup => {
    const staged: StagedGroup = { pendings: [], base, ops: [], accepted: [], rejected: [], tip: base };
    stageAppends(sessionId, writer, staged, pendings);
    return staged;
  };

  /**
   * Writes a staged group (one put for one event, else one batch) and settles its appends. While the
   * store writes it, the next group is sealed onto its tip, and topped up with what was queued
   * meanwhile once the write is done (so it holds what one group would have held), and returned. If
   * the write fails, every append of the group is rejected, the next group goes back to the queue
   * unsettled, and the head is read from the store again.
   */
  const writeStaged = async (sessionId: string, writer: SessionWriter, current: StagedGroup): Promise<StagedGroup | undefined> => {
    for (const { pending, error } of current.rejected) pending.reject(error);
    if (current.accepted.length === 0) return undefined;
    const { ops, tip } = current;
    if (tip.seq === current.base.seq) {
      // Only empty appends were accepted: nothing to write.
      for (const { pending, stored, tip: after } of current.accepted) pending.resolve(stored, after);
      return undefined;
    }
    // The head record goes with the session's first batch (or repairs one that does not hold); after
    // that a batch is only its events, and a one-event append is a plain put.
    const writesRecord = !writer.recordHolds;
    if (writesRecord) ops.push({ type: 'put', key: writer.headKey, value: headRecordText(tip, keyId) });
    let writing: Promise<void>;
    try {
      if (ops.length === 1) {
        const op = ops[0] as { key: string; value: string };
        writing = db.put(op.key, op.value, writeOptions);
      } else {
        writing = db.batch(ops, writeOptions);
      }
    } catch (error) {
      writing = Promise.reject(error);
    }
    let next: StagedGroup | undefined;
    if (writer.queue.length > 0) {
      const pendings = writer.queue.splice(0, maxGroup);
      try {
        next = stageGroup(sessionId, writer, tip, pendings);
      } catch {
        writer.queue.unshift(...pendings); // sealed again, and settled, once this write is done
      }
    }
    try {
      await writing;
    } catch (error) {
      writer.head = undefined; // re-read on the next group: the store is the truth
      const written = closed ? undefined : await writtenAfterFailure(sessionId, current.base, tip);
      if (written !== true) {
        const failure = closed ? new LogClosedError({ cause: error }) : new LogWriteError(sessionId, error, written);
        for (const { pending } of current.accepted) pending.reject(failure);
        if (next) writer.queue.unshift(...next.pendings); // sealed onto events that were not written
        return undefined;
      }
      // The store reported a failure but holds the batch: the appends are committed, so they resolve.
    }
    writer.head = tip;
    if (writesRecord) writer.recordHolds = true;
    for (const { pending, stored, tip: after } of current.accepted) pending.resolve(stored, after);
    notifyFollowers(sessionId);
    if (next && writer.queue.length > 0 && next.pendings.length < maxGroup) {
      const before = next.pendings.length;
      const more = writer.queue.splice(0, maxGroup - before);
      try {
        stageAppends(sessionId, writer, next, more);
      } catch {
        writer.queue.unshift(...next.pendings.slice(0, before), ...more); // sealed again from the head just written
        return undefined;
      }
    }
    return next;
  };

  // One drain loop per session: everything queued while a batch is in flight goes into the next batch.
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
            const head = writer.head ?? (await loadWriterHead(sessionId, writer));
            staged = stageGroup(sessionId, writer, head, pendings);
          } catch (error) {
            writer.head = undefined;
            // Reading the head failed before anything was written: a store error says so; named errors pass as they are.
            const failure = error instanceof ContextLedgerError ? error : closed ? new LogClosedError({ cause: error }) : new LogWriteError(sessionId, error, false);
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

  const ensureOpen = (): void => {
    if (closed) throw new LogClosedError();
  };

  // Yields stored entries a chunk at a time (one async step per chunk, not per event), and asks the
  // store for the next chunk before handing out the current one, so reading overlaps decoding.
  const readChunks = async function* (sessionId: string, fromSeq: number, toSeq: number): AsyncGenerator<[string, string][]> {
    ensureOpen();
    const iterator = db.iterator(eventRange(sessionId, fromSeq, toSeq));
    try {
      let next = iterator.nextv(READ_CHUNK);
      for (;;) {
        let entries: [string, string][];
        try {
          entries = (await next) as [string, string][];
        } catch (error) {
          throw closedOr(error); // close() during a read ends it with LogClosedError
        }
        if (entries.length === 0) break;
        next = iterator.nextv(READ_CHUNK);
        next.catch(() => {}); // observed by the next `await`; this only keeps an early exit from leaving it unhandled
        yield entries;
        ensureOpen();
      }
    } finally {
      // waits for a read still in flight; after close() the store has closed it already
      await iterator.close().catch((error: unknown) => {
        if (!closed) throw error;
      });
    }
  };

  const decodeOptions = options.upcasters ? { upcasters: options.upcasters } : {};

  /** The `hash` of the event stored at `seq`, or undefined when there is none (or it is damaged). */
  const storedHashAt = async (sessionId: string, seq: number): Promise<string | undefined> => {
    let text: string | undefined;
    try {
      text = await db.get(eventKey(sessionId, seq));
    } catch (error) {
      throw closedOr(error);
    }
    if (text === undefined) return undefined;
    try {
      const hash = (JSON.parse(text) as { hash?: unknown } | null)?.hash;
      return typeof hash === 'string' ? hash : undefined;
    } catch {
      return undefined;
    }
  };

  /** The event stored under `seq` (the seq its key says). */
  const decodeStored = (sessionId: string, seq: number, value: string): SessionEvent => {
    let raw: unknown;
    try {
      raw = JSON.parse(value);
    } catch (cause) {
      throw new EventDecodeError({ sessionId, seq, issues: [{ path: '', message: `stored value is not JSON: ${(cause as Error).message}` }], cause });
    }
    return decodeRaw(sessionId, seq, raw);
  };

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

  /**
   * The iterator behind `read`. It behaves as an async generator would (checks on the first `next`,
   * done for good after an error or `return`, calls served in order), but hands out events from the
   * current chunk without the two promise turns per event that a generator's `yield` costs.
   */
  const readEvents = (sessionId: string, readOptions: ReadOptions, storedTexts = false): AsyncIterableIterator<SessionEvent> => {
    /** The next event, checked against the chain (read with `verify`). */
    const checkedEvent = (key: string, value: string): SessionEvent => {
      const keySeq = seqOfKey(key);
      if (keySeq !== expected || prevHash === undefined) {
        const missing = keySeq !== expected ? expected : expected - 1;
        throw new ChainBrokenError(sessionId, missing, `event ${missing} is missing`);
      }
      const link = checkLink(sessionId, keySeq, value, prevHash, chainKey);
      if (typeof link === 'string') throw new ChainBrokenError(sessionId, keySeq, link);
      expected += 1;
      prevHash = link.hash;
      return decodeRaw(sessionId, keySeq, link.raw);
    };
    let chunks: AsyncGenerator<[string, string][]> | undefined;
    let entries: [string, string][] = [];
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
    let expected = 1;
    const verifying = readOptions.verify === true && !storedTexts;
    // With `verify`: the stored hash of the event before the next one (undefined: that event is missing).
    let prevHash: string | undefined = GENESIS_HASH;
    const refill = async (): Promise<void> => {
      try {
        if (!chunks) {
          ensureOpen();
          assertSessionId(sessionId);
          const fromSeq = Math.max(1, seqOption('fromSeq', readOptions.fromSeq) ?? 1);
          const toSeq = Math.min(MAX_SEQ, seqOption('toSeq', readOptions.toSeq) ?? MAX_SEQ);
          expected = fromSeq;
          if (toSeq < fromSeq) {
            finished = true;
            return;
          }
          if (verifying && fromSeq > 1) prevHash = await storedHashAt(sessionId, fromSeq - 1);
          chunks = readChunks(sessionId, fromSeq, toSeq);
        }
        const result = await chunks.next();
        if (result.done) {
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
            const [key, value] = entries[index++] as [string, string];
            try {
              if (verifying) return { done: false, value: checkedEvent(key, value) };
              const seq = seqOfKey(key);
              if (seq !== expected) {
                throw new EventDecodeError({
                  sessionId,
                  seq: expected,
                  issues: [{ path: 'seq', message: `event ${expected} is missing (the next stored event is ${seq})` }],
                });
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
          // Concurrent calls share one refill, so no chunk is skipped; its error goes to the call
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

  // The newest checkpoint at or below `seq` that is readable and not past the head; a damaged one is
  // skipped, never trusted (callers still check its hash against the log).
  const checkpointAtOrBefore = async (sessionId: string, seq: number): Promise<StoredCheckpoint | undefined> => {
    ensureOpen();
    assertSessionId(sessionId);
    if (typeof seq !== 'number' || Number.isNaN(seq) || seq < 0) {
      throw new InvalidOptionsError('checkpointAtOrBefore', [{ path: 'seq', message: `must be a non-negative number, got ${String(seq)}` }]);
    }
    const head = await log.head(sessionId);
    const limit = Math.min(head, Math.floor(Math.min(seq, MAX_SEQ)));
    if (limit < 1) return undefined;
    const iterator = db.iterator({ gte: checkpointRange(sessionId).gte, lte: checkpointKey(sessionId, limit), reverse: true });
    try {
      for (;;) {
        const entries = await iterator.nextv(8);
        if (entries.length === 0) return undefined;
        for (const [, value] of entries) {
          try {
            const parsed = JSON.parse(value as string) as StoredCheckpoint;
            if (parsed && typeof parsed === 'object' && typeof parsed.seq === 'number' && typeof parsed.hash === 'string') return parsed;
          } catch {
            // skip it
          }
        }
      }
    } finally {
      await iterator.close();
    }
  };

  const erasure = createErasure({
    db,
    chainKey,
    writeOptions,
    writerOf,
    startDrain: (sessionId, writer) => {
      if (!writer.draining) writer.draining = drain(sessionId, writer);
    },
    loadWriterHead,
    stamp: (sessionId) => stampOf(sessionId, clock),
    salt: (sessionId) => saltFrom(sessionId, salt),
    unsealedEvent,
    version: (type) => EVENT_VERSIONS[type],
    afterWrite: notifyFollowers,
    isClosed: () => closed,
  });

  const log: SessionEventLog = {
    erase(sessionId, selector, eraseOptions) {
      try {
        ensureOpen();
        assertSessionId(sessionId);
        return erasure.erase(sessionId, selector, eraseOptions);
      } catch (error) {
        return Promise.reject(error);
      }
    },

    deleteSession(sessionId) {
      try {
        ensureOpen();
        assertSessionId(sessionId);
        return erasure.deleteSession(sessionId);
      } catch (error) {
        return Promise.reject(error);
      }
    },

    append(sessionId, events, appendOptions: AppendOptions = {}) {
      try {
        ensureOpen();
        assertSessionId(sessionId);
        const expectedSeq = expectedSeqOption(appendOptions.expectedSeq);
        let validated = validateBatch(sessionId, events) as unknown as NewSessionEvent[];
        let redactions: (readonly Redaction[] | undefined)[] | undefined;
        if (redact !== undefined) ({ events: validated, redactions } = redactBatch(sessionId, redact, validated));
        const writer = writerOf(sessionId);
        const promise = new Promise<readonly SessionEvent[]>((resolve, reject) => {
          writer.queue.push(redactions ? { events: validated, expectedSeq, redactions, resolve, reject } : { events: validated, expectedSeq, resolve, reject });
        });
        if (!writer.draining) {
          writer.draining = drain(sessionId, writer);
        }
        return promise;
      } catch (error) {
        return Promise.reject(error);
      }
    },

    read(sessionId, readOptions: ReadOptions = {}) {
      return { [Symbol.asyncIterator]: () => readEvents(sessionId, readOptions) };
    },

    async head(sessionId) {
      ensureOpen();
      assertSessionId(sessionId);
      const writer = writers.get(sessionId);
      if (writer?.head) return writer.head.seq;
      return (await loadHead(sessionId)).seq;
    },

    sessions() {
      return {
        [Symbol.asyncIterator]: async function* () {
          ensureOpen();
          const iterator = db.keys(headRange);
          try {
            for (;;) {
              let keys: string[];
              try {
                keys = (await iterator.nextv(READ_CHUNK)) as string[];
              } catch (error) {
                throw closedOr(error);
              }
              if (keys.length === 0) break;
              for (const key of keys) yield sessionIdOfHeadKey(key);
              ensureOpen();
            }
          } finally {
            await iterator.close().catch((error: unknown) => {
              if (!closed) throw error;
            });
          }
        },
      };
    },

    async verify(sessionId, verifyOptions: VerifyOptions = {}) {
      ensureOpen();
      assertSessionId(sessionId);
      const anchors = anchorsBySeq(verifyOptions.anchors);
      if (typeof anchors === 'string') throw new InvalidOptionsError('verify', [{ path: 'anchors', message: anchors }]);
      const writer = writers.get(sessionId);
      if (writer?.draining) await writer.draining;
      const broken = (seq: number, count: number, problem: string): VerifyResult => ({
        valid: false,
        eventCount: count,
        firstBrokenSeq: seq,
        problem,
      });
      const genesisAnchor = anchors.get(0);
      if (genesisAnchor !== undefined && genesisAnchor !== GENESIS_HASH) return broken(1, 0, 'the anchor at seq 0 is not the genesis hash');
      // The head record is read before the events: it is written with a session's first batch, so the
      // events read after it include the ones it names.
      const firstRecord = await readHeadRecord(sessionId);
      let { head: record, problem } = firstRecord;
      let expected = 1;
      let prevHash = GENESIS_HASH;
      let count = 0;
      let hashAtRecord: string | undefined = record?.seq === 0 ? GENESIS_HASH : undefined;
      const erasures = createErasureCheck();
      for await (const entries of readChunks(sessionId, 1, MAX_SEQ)) {
        for (const [key, value] of entries) {
          const keySeq = seqOfKey(key);
          count += 1;
          if (keySeq !== expected) return broken(expected, count, `event ${expected} is missing`);
          const link = checkLink(sessionId, keySeq, value, prevHash, chainKey);
          if (typeof link === 'string') {
            const { problem: keyedProblem, keyed } = keyedVerifyProblem(keySeq, link, firstRecord.keyId, keyId);
            return keyed ? { ...broken(keySeq, count, keyedProblem), keyed } : broken(keySeq, count, keyedProblem);
          }
          const erasureProblem = erasures.add(keySeq, link.raw);
          if (erasureProblem !== undefined) return broken(keySeq, count, erasureProblem);
          const anchored = anchors.get(keySeq);
          if (anchored !== undefined && anchored !== link.hash) {
            return broken(keySeq, count, `event ${keySeq} does not match its anchor: the chain was rewritten at or before it`);
          }
          if (keySeq === record?.seq) hashAtRecord = link.hash;
          prevHash = link.hash;
          expected += 1;
        }
      }
      const rollback = rollbackOf(count, anchors);
      if (rollback) return rollback;
      const unclaimed = erasures.unclaimed();
      if (unclaimed !== undefined) return broken(unclaimed, count, unclaimedProblem(unclaimed, erasures.isCopy(unclaimed)));
      if ((record === undefined || problem !== undefined) && count > 0) {
        // A first batch (or a repair) may have been written between reading the record and the events.
        const again = await readHeadRecord(sessionId);
        if (again.head !== undefined && again.head.seq <= count) {
          ({ head: record, problem } = again);
          hashAtRecord = record?.seq === 0 ? GENESIS_HASH : await storedHashAt(sessionId, again.head.seq);
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

    async anchor(sessionId) {
      ensureOpen();
      assertSessionId(sessionId);
      const writer = writers.get(sessionId);
      if (writer?.draining) await writer.draining;
      const head = writers.get(sessionId)?.head ?? (await loadHead(sessionId));
      return { seq: head.seq, hash: head.hash };
    },

    async putCheckpoint(sessionId, checkpoint: StoredCheckpoint, putOptions: PutCheckpointOptions = {}) {
      ensureOpen();
      assertSessionId(sessionId);
      if (!Number.isInteger(checkpoint.seq) || checkpoint.seq < 1) throw new InvalidCheckpointError(sessionId, checkpoint.seq, 'seq must be a positive integer');
      const band = putOptions.band;
      if (band !== undefined && (!Number.isInteger(band) || band < 1)) {
        throw new InvalidOptionsError('putCheckpoint', [{ path: 'band', message: `must be a positive integer, got ${String(band)}` }]);
      }
      const head = await log.head(sessionId);
      if (checkpoint.seq > head) {
        throw new InvalidCheckpointError(sessionId, checkpoint.seq, `it is past the head (${head})`);
      }
      // Sparse older checkpoints: with a band, one per band (older ones in the new one's band go); without,
      // the newest older one (a fallback). Removed in the same batch as the put.
      const older = ((await db.keys({ ...checkpointRange(sessionId), reverse: true }).all()) as string[]).filter(
        (key) => seqOfKey(key) < checkpoint.seq,
      );
      const stale =
        band === undefined
          ? older.slice(1)
          : older.filter((key) => Math.floor(seqOfKey(key) / band) === Math.floor(checkpoint.seq / band));
      await db.batch(
        [
          { type: 'put', key: checkpointKey(sessionId, checkpoint.seq), value: JSON.stringify(checkpoint) },
          ...stale.map((key) => ({ type: 'del' as const, key })),
        ],
        writeOptions,
      );
    },

    latestCheckpoint(sessionId) {
      return checkpointAtOrBefore(sessionId, MAX_SEQ);
    },

    checkpointAtOrBefore(sessionId, seq) {
      return checkpointAtOrBefore(sessionId, seq);
    },

    readStored(sessionId, readOptions: ReadOptions = {}) {
      return { [Symbol.asyncIterator]: () => readEvents(sessionId, readOptions, true) as unknown as AsyncIterableIterator<string> };
    },

    importStored(sessionId, storedTexts) {
      try {
        ensureOpen();
        assertSessionId(sessionId);
        const texts = Array.isArray(storedTexts) ? [...storedTexts] : storedTexts;
        const writer = writerOf(sessionId);
        const promise = new Promise<{ imported: number; head: number }>((resolve, reject) => {
          writer.queue.push({
            events: [],
            expectedSeq: undefined,
            imported: texts,
            resolve: (_events, tip) => resolve({ imported: texts.length, head: tip.seq }),
            reject,
          });
        });
        if (!writer.draining) writer.draining = drain(sessionId, writer);
        return promise;
      } catch (error) {
        return Promise.reject(error);
      }
    },

    subscribe(sessionId, subscribeOptions = {}) {
      return followSession(sessionId, subscribeOptions, {
        readFrom: (fromSeq) => log.read(sessionId, { fromSeq }),
        watch: (changed) => watchSession(sessionId, changed),
        isClosed: () => closed,
      });
    },

    async close() {
      if (closed) return;
      closed = true;
      for (const set of followers.values()) for (const changed of set) changed();
      await Promise.all([...writers.values()].map((w) => w.draining));
      try {
        await db.close();
      } finally {
        options.onClose?.();
      }
    },
  };
  registerWriterStates(log, () => writers.size);
  return log;
};
