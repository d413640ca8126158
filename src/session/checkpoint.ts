// Session checkpoints: the folded SessionState at the seq of a `checkpoint.taken` event whose digest vouches for it.
import * as E from 'fp-ts/lib/Either.js';
import { z } from 'zod';
import { upcastFrom, type SessionEvent } from '../events/index.js';
import { deepFreeze, digestOf, errorText } from '../base/index.js';
import { chainHash, ChainBrokenError, type SessionEventLog, type StoredCheckpoint } from '../log/index.js';
import { MemoryStateSchema, visibleEntries, type MemoryState } from '../memory/index.js';
import { initialRunState, runReducer, type RunState } from './run-state.js';
import { SessionStateSchema, createSessionFold, initialSessionState, type SessionState } from './session-state.js';
import { attachProjectionFacts, type AttachedProjectionFacts, type ProjectionFacts, type Tokenizer } from '../context/index.js';
import { SessionIntegrityError } from './errors.js';

/**
 * The checkpoint format written now: `{ format: 3, state: SessionState, projection?: ProjectionFacts }`. Format 1
 * held only memory. Format 2 had the same shape, from before the run state held the provider's usage
 * (`RunState.usage`, decision 0021): its state may lack usage the fold has, so it is not trusted and the session is
 * folded from the start (or from an older format-3 checkpoint) until the next checkpoint. `projection` (the per-item
 * facts of memory's items that projections derive, decision 0017) is optional: checkpoints without it are read as before.
 */
export const CHECKPOINT_FORMAT = 3;

export { MemoryStateSchema, SessionStateSchema };

// The projection facts are checked apart (attachProjectionFacts), so facts that do not fit never cost the state.
const CheckpointV2Schema = z.object({ format: z.union([z.literal(3), z.literal(2)]), state: SessionStateSchema, projection: z.unknown().optional() });
const CheckpointV1Schema = z.object({ format: z.literal(1), state: MemoryStateSchema });

/** A checkpoint's data, read as format 3; `run` is null when the format did not hold it (format 1). */
export interface DecodedCheckpoint {
  readonly format: number;
  readonly memory: MemoryState;
  readonly run: RunState | null;
  /** The projection facts saved with the state, as stored (not validated yet), when there are any. */
  readonly projection?: unknown;
}

/**
 * Decodes stored checkpoint data of any known format (format 1 → 3: the memory state becomes `state.memory`; its
 * run state is unknown; format 2 has format 3's shape, its `format` says which). Left: why it is not a valid checkpoint.
 */
export const decodeCheckpoint = (data: unknown): E.Either<string, DecodedCheckpoint> => {
  const v2 = CheckpointV2Schema.safeParse(data);
  if (v2.success) {
    const { projection } = v2.data;
    return E.right({
      format: v2.data.format,
      memory: v2.data.state.memory,
      run: v2.data.state.run,
      ...(projection !== undefined ? { projection } : {}),
    });
  }
  const v1 = CheckpointV1Schema.safeParse(data);
  if (v1.success) return E.right({ format: 1, memory: v1.data.state, run: null });
  return E.left(v2.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).slice(0, 3).join('; '));
};

/**
 * The digest a `checkpoint.taken` event carries for a state: of `{ memory, run }`, or of `{ memory, run,
 * projection }` when the checkpoint also saves projection facts (so a changed count fails the digest).
 */
export const sessionStateDigest = (state: SessionState, projection?: unknown): string => {
  const memory = digestedMemory(state.memory);
  const run = state.run;
  return digestOf(projection === undefined ? { memory, run } : { memory, run, projection });
};

/**
 * Memory fields added after checkpoints were first written (working memory) are digested only
 * when set, so a checkpoint written before them still matches its recorded digest once parsed (with their defaults).
 */
const digestedMemory = (memory: MemoryState): object => {
  if (memory.blocks.length > 0 || memory.blocksId !== null) return memory;
  const { blocks: _b, blocksId: _i, ...rest } = memory;
  return rest;
};


/** The `checkpoint.taken` event for a state and the projection facts stored with it (append it; then store the checkpoint at its seq). */
export const checkpointEventFor = (
  state: SessionState,
  checkpointEvery: number,
  projection?: ProjectionFacts,
): { type: 'checkpoint.taken'; digest: string; checkpointEvery: number } => ({
  type: 'checkpoint.taken',
  digest: sessionStateDigest(state, projection),
  checkpointEvery,
});

/**
 * Stores the state at `event` (a stored `checkpoint.taken` whose digest is the state's, with `projection` when
 * it was digested with it).
 * @example await writeCheckpoint(log, id, takenEvent, state, { band: 10_000 })
 */
export const writeCheckpoint = (
  log: SessionEventLog,
  sessionId: string,
  event: Pick<SessionEvent, 'seq' | 'hash'>,
  state: SessionState,
  options: { readonly band?: number; readonly projection?: ProjectionFacts } = {},
): Promise<void> => {
  const { projection, ...putOptions } = options;
  const data = { format: CHECKPOINT_FORMAT, state: { memory: state.memory, run: state.run }, ...(projection !== undefined ? { projection } : {}) };
  return log.putCheckpoint(sessionId, { seq: event.seq, hash: event.hash, data }, putOptions);
};

const eventAt = async (log: SessionEventLog, sessionId: string, seq: number, verify = false): Promise<SessionEvent | undefined> => {
  for await (const event of log.read(sessionId, { fromSeq: seq, toSeq: seq, verify })) return event;
  return undefined;
};

/**
 * Whether a decoded event's content matches its hash. An event stored at an older version (upcast on read)
 * is not what was hashed: it is checked with its stored version when its upcasters only raised `v`, and
 * otherwise only by its link (the next event's prevHash), since its stored bytes are not at hand here.
 */
export const contentMatches = (event: SessionEvent): boolean => {
  const record = event as unknown as Record<string, unknown>;
  if (chainHash(event.prevHash, record) === event.hash) return true;
  const storedAt = upcastFrom(event);
  if (typeof storedAt !== 'number') return false;
  return chainHash(event.prevHash, { ...record, v: storedAt }) === event.hash || !identityUpcast(event.type);
};

/** Event types whose upcasters only raise `v` (the decoded form is the stored one with another version). */
const identityUpcast = (type: SessionEvent['type']): boolean => type === 'session.started' || type === 'run.started';

/** A checkpoint the chain vouches for: its state, and its projection facts as stored (validated when attached). */
interface TrustedCheckpoint {
  readonly state: SessionState;
  readonly projection?: unknown;
}

/** Checks a checkpoint against the chain; the trusted state, or why it is rejected. */
const trustCheckpoint = async (
  log: SessionEventLog,
  sessionId: string,
  checkpoint: StoredCheckpoint,
): Promise<E.Either<string, TrustedCheckpoint>> => {
  let at: SessionEvent | undefined;
  try {
    // Checked by the log (with its chain key, over the stored bytes), not recomputed here.
    at = await eventAt(log, sessionId, checkpoint.seq, true);
  } catch (error) {
    if (ChainBrokenError.isInstance(error)) return E.left(`the event at seq ${checkpoint.seq} does not match its hash (${error.problem})`);
    throw error;
  }
  if (!at || at.hash !== checkpoint.hash) return E.left(`checkpoint at seq ${checkpoint.seq} does not match the log`);
  const decoded = decodeCheckpoint(checkpoint.data);
  if (E.isLeft(decoded)) return E.left(`checkpoint at seq ${checkpoint.seq} is not a valid state (${decoded.left})`);
  if (at.type !== 'checkpoint.taken') {
    return E.left(
      `checkpoint at seq ${checkpoint.seq} has no checkpoint.taken event vouching for it` +
        (decoded.right.format === 1 ? ' (format 1, written before checkpoint digests)' : ''),
    );
  }
  if (decoded.right.run === null) return E.left(`checkpoint at seq ${checkpoint.seq} has no run state`);
  if (decoded.right.format === 2) {
    return E.left(`checkpoint at seq ${checkpoint.seq} is format 2, written before the run state held the provider's usage (it may lack what the fold has)`);
  }
  const state: SessionState = { memory: decoded.right.memory, run: decoded.right.run };
  const { projection } = decoded.right;
  if (sessionStateDigest(state, projection) !== at.digest) {
    return E.left(
      `checkpoint at seq ${checkpoint.seq} does not match the digest recorded in the chain` +
        (projection !== undefined ? ' (its state and projection facts)' : ''),
    );
  }
  return E.right({ state: deepFreeze(state), ...(projection !== undefined ? { projection } : {}) });
};

export interface RebuiltState {
  /** The session state (memory and run) at `headSeq`. */
  readonly session: SessionState;
  /** `session.memory`. */
  readonly state: MemoryState;
  readonly run: RunState;
  readonly headSeq: number;
  readonly headHash: string | null;
  /** How the state was rebuilt: from a checkpoint plus the tail, or by folding every event. */
  readonly from: { readonly checkpointSeq: number } | 'full-fold';
  /** Set when a stored checkpoint was rejected (and the next older one or the full fold used). */
  readonly rejectedCheckpoint?: string;
  /** Events folded after the checkpoint (all of them for a full fold). */
  readonly eventsFolded: number;
  /**
   * What was done with the projection facts saved in the checkpoint used (absent when it had none): attached
   * to its memory's items, or ignored, and why (session id and seq named).
   */
  readonly projectionFacts?: AttachedProjectionFacts;
}

export interface RebuildOptions {
  /** Fold up to this seq (default: the head). */
  readonly toSeq?: number;
  /** Fold at most to the seq just before the first event that matches (used for "the start of step N"). */
  readonly stopBefore?: (event: SessionEvent) => boolean;
  /** The tokenizer whose token counts, saved with the checkpoint, are attached to its items (by name). */
  readonly tokenizer?: Tokenizer;
}

const MAX_REJECTED = 3;

/**
 * Rebuilds a session's state: from the newest checkpoint at or below the target seq that the chain vouches
 * for (a `checkpoint.taken` event at its seq, whose digest matches its state), folding only the events after
 * it and verifying their hash chain from the checkpoint's hash on; otherwise by folding every event. Reads only.
 * Throws {@link SessionIntegrityError} when the events folded do not chain.
 * @example const { session, headSeq } = await rebuildState(log, 'task-42')
 */
export const rebuildState = async (log: SessionEventLog, sessionId: string, options: RebuildOptions = {}): Promise<RebuiltState> => {
  const target = options.toSeq ?? Number.MAX_SAFE_INTEGER;
  const rejected: string[] = [];
  let base: SessionState = initialSessionState;
  let baseSeq = 0;
  let baseHash: string | null = null;
  let projectionFacts: AttachedProjectionFacts | undefined;
  let below = target;
  for (let attempt = 0; attempt < MAX_REJECTED && below > 0; attempt++) {
    let checkpoint: StoredCheckpoint | undefined;
    try {
      checkpoint = await log.checkpointAtOrBefore(sessionId, below);
    } catch (error) {
      rejected.push(`could not read the checkpoint: ${errorText(error)}`);
      break;
    }
    if (!checkpoint) break;
    const trusted = await trustCheckpoint(log, sessionId, checkpoint);
    if (E.isRight(trusted)) {
      base = trusted.right.state;
      baseSeq = checkpoint.seq;
      baseHash = checkpoint.hash;
      if (trusted.right.projection !== undefined) {
        // By position: the facts were taken of this very memory's items (the digest vouches for both).
        const items = visibleEntries(base.memory).map((entry) => entry.item);
        const attached = attachProjectionFacts(items, trusted.right.projection, options.tokenizer);
        projectionFacts =
          attached.ignored === undefined
            ? attached
            : { ...attached, ignored: `session ${JSON.stringify(sessionId)}, checkpoint at seq ${checkpoint.seq}: ${attached.ignored}` };
      }
      break;
    }
    rejected.push(trusted.left);
    below = checkpoint.seq - 1;
  }
  const fold = createSessionFold(base);
  let prevHash = baseHash;
  let headSeq = baseSeq;
  let folded = 0;
  // The log checks each event's hash (with its chain key, over the stored bytes) and its link to the one before.
  const stream = log.read(sessionId, { fromSeq: baseSeq + 1, verify: true, ...(options.toSeq !== undefined ? { toSeq: options.toSeq } : {}) });
  try {
    for await (const event of stream) {
      if (options.stopBefore?.(event)) break;
      if (prevHash !== null && event.prevHash !== prevHash) {
        throw new SessionIntegrityError(sessionId, event.seq, 'its prevHash does not match the previous event');
      }
      fold.add(event);
      prevHash = event.hash;
      headSeq = event.seq;
      folded += 1;
    }
  } catch (error) {
    if (ChainBrokenError.isInstance(error)) throw new SessionIntegrityError(sessionId, error.seq, error.problem);
    throw error;
  }
  const session = fold.result();
  return {
    session,
    state: session.memory,
    run: session.run,
    headSeq,
    headHash: prevHash,
    from: baseSeq > 0 ? { checkpointSeq: baseSeq } : 'full-fold',
    ...(rejected.length > 0 ? { rejectedCheckpoint: rejected.join('; ') } : {}),
    eventsFolded: folded,
    ...(projectionFacts !== undefined ? { projectionFacts } : {}),
  };
};

/** Folds only the run part of a list of events onto a run state. */
export const foldRun = (events: readonly SessionEvent[], run: RunState = initialRunState): RunState => events.reduce(runReducer, run);

