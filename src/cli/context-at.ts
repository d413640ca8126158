// What the model saw at a step, for the CLI: replayContext (the exact items, checked against the recording)
// plus each memory item's recorded fate.
import { fatesOf, type ItemFateWithId, type RequestPrompt, type SessionEventOf } from '../events/index.js';
import type { MemoryItem } from '../items/index.js';
import type { SessionEventLog } from '../log/index.js';
import { visibleEntries, type MemoryEntry } from '../memory/index.js';
import { ReplayTargetError, replayContext } from '../replay/index.js';
import { CliError } from './errors.js';

export interface ContextAtStep {
  readonly step: number;
  readonly seq: number;
  readonly projected: SessionEventOf<'context.projected'>;
  readonly request?: SessionEventOf<'model.requested'>;
  readonly prompt?: RequestPrompt;
  /** Memory as the projection saw it, with each item's recorded fate. */
  readonly entries: readonly (MemoryEntry & { readonly fate: ItemFateWithId })[];
  /** The exact items sent (re-projected with the recorded projector and budget). */
  readonly sent: readonly MemoryItem[];
  /** Whether the re-projection equals the recording (digest, sent ids, fates, report). */
  readonly identical: boolean;
  readonly differences: readonly string[];
}

/** replayContext for the CLI: an unknown step is exit 2. */
export const contextAtStep = async (log: SessionEventLog, sessionId: string, step: number): Promise<ContextAtStep> => {
  let replayed;
  try {
    replayed = await replayContext(log, sessionId, { step });
  } catch (error) {
    if (ReplayTargetError.isInstance(error)) throw new CliError(error.message, 2);
    throw error;
  }
  const visible = visibleEntries(replayed.at.memory);
  const fates = fatesOf(replayed.recorded, visible.map((e) => e.id));
  const request = replayed.request;
  return {
    step,
    seq: replayed.seq,
    projected: replayed.recorded,
    ...(request ? { request, prompt: { ...(request.systemPrompt !== undefined ? { systemPrompt: request.systemPrompt } : {}), tools: request.tools ?? [] } } : {}),
    entries: visible.map((e, i) => ({ ...e, fate: fates[i] as ItemFateWithId })),
    sent: replayed.items,
    identical: replayed.identical,
    differences: replayed.differences,
  };
};
