// Memory checkpoints: a folded state at seq N, tied to the hash of event N; never trusted blindly.
import { z } from 'zod';
import { CompactResultRecordSchema, ComponentDescriptionSchema, MemoryItemSchema, errorText, type SessionEvent } from '../events/index.js';
import type { SessionEventLog } from '../log/index.js';
import { foldMemoryAsync, initialMemoryState, type MemoryState } from '../memory/index.js';

const CHECKPOINT_FORMAT = 1;

const MemoryStateSchema = z.object({
  entries: z.array(z.object({ id: z.string(), item: MemoryItemSchema })),
  summary: z.string().nullable(),
  summaryId: z.string().nullable(),
  facts: z.array(z.looseObject({ type: z.string(), seq: z.number() })),
  readFiles: z.array(z.string()),
  modifiedFiles: z.array(z.string()),
  lastCompaction: z
    .object({ seq: z.number(), trigger: z.enum(['auto', 'manual']), policy: ComponentDescriptionSchema, result: CompactResultRecordSchema })
    .nullable(),
});

const CheckpointDataSchema = z.object({ format: z.literal(CHECKPOINT_FORMAT), state: MemoryStateSchema });

const deepFreeze = <T>(value: T): T => {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
    Object.freeze(value);
  }
  return value;
};

const eventAt = async (log: SessionEventLog, sessionId: string, seq: number): Promise<SessionEvent | undefined> => {
  for await (const event of log.read(sessionId, { fromSeq: seq, toSeq: seq })) return event;
  return undefined;
};

/** Stores the folded state at `seq` (whose event has `hash`). */
export const writeCheckpoint = (log: SessionEventLog, sessionId: string, seq: number, hash: string, state: MemoryState): Promise<void> =>
  log.putCheckpoint(sessionId, { seq, hash, data: { format: CHECKPOINT_FORMAT, state } });

export interface RebuiltState {
  readonly state: MemoryState;
  readonly headSeq: number;
  readonly headHash: string | null;
  /** How the state was rebuilt: from a checkpoint plus the tail, or by folding every event. */
  readonly from: { readonly checkpointSeq: number } | 'full-fold';
  /** Set when a stored checkpoint did not match the log and was ignored. */
  readonly rejectedCheckpoint?: string;
}

/**
 * Rebuilds a session's memory: from its latest checkpoint when that checkpoint's hash matches the log
 * at its seq, folding only the events after it; otherwise by folding every event.
 */
export const rebuildState = async (log: SessionEventLog, sessionId: string): Promise<RebuiltState> => {
  let rejected: string | undefined;
  let checkpoint: Awaited<ReturnType<SessionEventLog['latestCheckpoint']>>;
  try {
    checkpoint = await log.latestCheckpoint(sessionId);
  } catch (error) {
    rejected = `could not read the checkpoint: ${errorText(error)}`;
  }
  if (checkpoint) {
    const at = await eventAt(log, sessionId, checkpoint.seq);
    const data = CheckpointDataSchema.safeParse(checkpoint.data);
    if (!at || at.hash !== checkpoint.hash) rejected = `checkpoint at seq ${checkpoint.seq} does not match the log`;
    else if (!data.success) rejected = `checkpoint at seq ${checkpoint.seq} is not a valid state`;
    else {
      const base = deepFreeze(data.data.state as unknown as MemoryState);
      const tail = await foldMemoryAsync(log.read(sessionId, { fromSeq: checkpoint.seq + 1 }), base);
      return {
        state: tail.state,
        headSeq: tail.lastSeq || checkpoint.seq,
        headHash: tail.lastHash ?? checkpoint.hash,
        from: { checkpointSeq: checkpoint.seq },
      };
    }
  }
  const full = await foldMemoryAsync(log.read(sessionId), initialMemoryState);
  return {
    state: full.state,
    headSeq: full.lastSeq,
    headHash: full.lastHash,
    from: 'full-fold',
    ...(rejected !== undefined ? { rejectedCheckpoint: rejected } : {}),
  };
};
