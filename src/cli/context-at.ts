// What the model saw at a step: the recorded projection, re-projected from memory with the recorded projector
// and budget, checked against the recorded digest; and what was dropped.
import { contextProjectorFromDescription, type ContextBudget } from '../context/index.js';
import { createPromptResolver, digestOf, fatesOf, type ItemFateWithId, type RequestPrompt, type SessionEventOf } from '../events/index.js';
import type { MemoryItem } from '../items/index.js';
import type { SessionEventLog } from '../log/index.js';
import { initialMemoryState, memoryReducer, visibleEntries, type MemoryEntry, type MemoryState } from '../memory/index.js';
import { CliError } from './errors.js';

export interface ContextAtStep {
  readonly step: number;
  readonly seq: number;
  readonly projected: SessionEventOf<'context.projected'>;
  readonly request?: SessionEventOf<'model.requested'>;
  readonly prompt?: RequestPrompt;
  /** Memory as the projection saw it, with each item's fate. */
  readonly entries: readonly (MemoryEntry & { readonly fate: ItemFateWithId })[];
  /** The exact items sent (re-projected), or undefined when the recorded projector cannot be rebuilt. */
  readonly sent?: readonly MemoryItem[];
  /** Whether the re-projection's digest equals the recorded one. */
  readonly identical?: boolean;
  readonly rebuildError?: string;
}

/** Reads a session up to step N's model request and rebuilds what the model was sent. Exit 2 when the step has no projection. */
export const contextAtStep = async (log: SessionEventLog, sessionId: string, step: number): Promise<ContextAtStep> => {
  let memory: MemoryState = initialMemoryState;
  let found: { projected: SessionEventOf<'context.projected'>; before: MemoryState } | undefined;
  let request: SessionEventOf<'model.requested'> | undefined;
  let prompt: RequestPrompt | undefined;
  const prompts = createPromptResolver();
  for await (const event of log.read(sessionId)) {
    if (event.type === 'model.requested') {
      const resolved = prompts.resolve(event);
      if (found && event.step === step) {
        request = event;
        prompt = resolved;
        break;
      }
    }
    if (found && (event.type === 'step.started' || event.type === 'context.projected')) break;
    if (!found && event.type === 'context.projected' && event.step === step) found = { projected: event, before: memory };
    memory = memoryReducer(memory, event);
  }
  if (!found) throw new CliError(`session ${JSON.stringify(sessionId)} recorded no projection at step ${step}`, 2);
  const visible = visibleEntries(found.before);
  const fates = fatesOf(found.projected, visible.map((e) => e.id));
  const entries = visible.map((e, i) => ({ ...e, fate: fates[i] as ItemFateWithId }));
  const base = {
    step,
    seq: found.projected.seq,
    projected: found.projected,
    ...(request ? { request } : {}),
    ...(prompt ? { prompt } : {}),
    entries,
  };
  try {
    const projector = contextProjectorFromDescription(found.projected.projector);
    const projection = projector.project(
      visible.map((e) => e.item),
      found.projected.budget as ContextBudget,
    );
    return { ...base, sent: projection.items, identical: digestOf(projection.items) === found.projected.digest };
  } catch (error) {
    return { ...base, rebuildError: error instanceof Error ? error.message : String(error) };
  }
};
