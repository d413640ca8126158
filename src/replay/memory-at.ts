// memoryAt: the session state (memory and run) at any seq or at the start of any step, from the nearest checkpoint.
import type { SessionEvent, SessionEventOf } from '../events/index.js';
import type { SessionEventLog } from '../log/index.js';
import type { MemoryState } from '../memory/index.js';
import type { RunState, SessionState } from '../session/index.js';
import { rebuildState } from '../session/index.js';
import { InvalidOptionsError } from '../base/errors.js';
import { InvalidSessionIdError } from '../log/index.js';
import { ReplayTargetError } from './errors.js';

/** A point in a session: after the event at `seq` (0: before the first), or the start of `step` (just after its `step.started`). */
export type SessionPoint = { readonly seq: number } | { readonly step: number };

export interface SessionStateAt {
  readonly sessionId: string;
  /** The seq of the last event folded (0 for the empty state). */
  readonly seq: number;
  /** The hash of that event (null at seq 0). */
  readonly hash: string | null;
  readonly state: SessionState;
  readonly memory: MemoryState;
  readonly run: RunState;
  /** Where the fold started: a checkpoint at or below `seq`, or the first event. */
  readonly from: { readonly checkpointSeq: number } | 'full-fold';
  /** Events folded after the checkpoint (or from the start). */
  readonly eventsFolded: number;
  /** Set when a stored checkpoint was rejected on the way. */
  readonly rejectedCheckpoint?: string;
}

const checkSessionId = (sessionId: unknown): string => {
  if (typeof sessionId !== 'string' || sessionId.length === 0) throw new InvalidSessionIdError(sessionId);
  return sessionId;
};

/** The head of a session, or a ReplayTargetError for a session the log does not have. */
export const headOf = async (log: SessionEventLog, sessionId: string): Promise<number> => {
  const head = await log.head(checkSessionId(sessionId));
  if (head === 0) throw new ReplayTargetError(sessionId, 'no such session in the log');
  return head;
};

const checkCount = (name: string, value: unknown, min: number): number => {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw new InvalidOptionsError('memoryAt', [{ path: name, message: `must be an integer ≥ ${min}, got ${JSON.stringify(value)}` }]);
  }
  return value;
};

/**
 * The first event of a session that matches, scanning from the start (reads only). Events are decoded as they
 * stream; nothing is folded.
 */
export const findEvent = async <T extends SessionEvent>(
  log: SessionEventLog,
  sessionId: string,
  matches: (event: SessionEvent) => event is T,
): Promise<T | undefined> => {
  for await (const event of log.read(sessionId)) if (matches(event)) return event;
  return undefined;
};

/** The `step.started` event of step `step`. */
export const stepStartOf = async (log: SessionEventLog, sessionId: string, step: number): Promise<SessionEventOf<'step.started'>> => {
  checkCount('step', step, 1);
  const event = await findEvent(log, sessionId, (e): e is SessionEventOf<'step.started'> => e.type === 'step.started' && e.step === step);
  if (!event) throw new ReplayTargetError(sessionId, `no step ${step} was started`);
  return event;
};

/** The seq a point stands for (checked against the head). */
export const seqOfPoint = async (log: SessionEventLog, sessionId: string, at: SessionPoint, head: number): Promise<number> => {
  if (at === null || typeof at !== 'object') throw new InvalidOptionsError('memoryAt', [{ path: '', message: 'pass { seq } or { step }' }]);
  if ('seq' in at && 'step' in at) throw new InvalidOptionsError('memoryAt', [{ path: '', message: 'pass { seq } or { step }, not both' }]);
  if ('seq' in at) {
    const seq = checkCount('seq', at.seq, 0);
    if (seq > head) throw new ReplayTargetError(sessionId, `seq ${seq} is past the head (${head})`);
    return seq;
  }
  if ('step' in at) return (await stepStartOf(log, sessionId, at.step)).seq;
  throw new InvalidOptionsError('memoryAt', [{ path: '', message: 'pass { seq } or { step }' }]);
};

/** Folds the session up to `seq` from the newest vouched checkpoint at or below it (reads only). */
export const stateAtSeq = async (log: SessionEventLog, sessionId: string, seq: number): Promise<SessionStateAt> => {
  if (seq === 0) {
    const empty = await rebuildState(log, sessionId, { toSeq: 0 });
    return { sessionId, seq: 0, hash: null, state: empty.session, memory: empty.state, run: empty.run, from: 'full-fold', eventsFolded: 0 };
  }
  const rebuilt = await rebuildState(log, sessionId, { toSeq: seq });
  if (rebuilt.headSeq !== seq) throw new ReplayTargetError(sessionId, `event ${seq} could not be read (folded to ${rebuilt.headSeq})`);
  return {
    sessionId,
    seq,
    hash: rebuilt.headHash,
    state: rebuilt.session,
    memory: rebuilt.state,
    run: rebuilt.run,
    from: rebuilt.from,
    eventsFolded: rebuilt.eventsFolded,
    ...(rebuilt.rejectedCheckpoint !== undefined ? { rejectedCheckpoint: rebuilt.rejectedCheckpoint } : {}),
  };
};

/**
 * The session state after the event at `seq`, or at the start of `step` (after its `step.started`), folded from
 * the nearest checkpoint at or below it that the chain vouches for (its tail's hash chain verified). Equal to
 * folding the prefix. Reads only: never writes to the log or its checkpoints.
 * @example const { memory, run } = await memoryAt(log, 'task-42', { step: 7 })
 */
export const memoryAt = async (log: SessionEventLog, sessionId: string, at: SessionPoint): Promise<SessionStateAt> => {
  const head = await headOf(log, sessionId);
  return stateAtSeq(log, sessionId, await seqOfPoint(log, sessionId, at, head));
};
