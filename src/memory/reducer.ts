// memoryReducer and foldMemory: the only way memory changes, as a pure fold over events.
import { produce, type Draft } from 'immer';
import type { RecordedFact, SessionEvent } from '../events/index.js';
import type { MemoryItem } from '../items/index.js';
import { initialMemoryState, itemId, summaryIdOf, type MemoryEntry, type MemoryState } from './state.js';

const assertNever = (value: never): never => {
  throw new Error(`unhandled event ${JSON.stringify(value)}`);
};

const pushItems = (draft: Draft<MemoryState>, seq: number, items: readonly MemoryItem[]): void => {
  for (let i = 0; i < items.length; i++) {
    draft.entries.push({ id: itemId(seq, i), item: items[i] as Draft<MemoryItem> });
  }
};

/** Does this event change memory? Events that do not leave the state untouched (same reference). */
export const changesMemory = (event: SessionEvent): boolean => {
  switch (event.type) {
    case 'user.input':
    case 'model.output':
    case 'model.responded':
      return event.items.length > 0;
    case 'tool.result':
    case 'command.failed':
    case 'test.result':
    case 'approval.recorded':
    case 'sandbox.state':
    case 'artifact.changed':
    case 'memory.summary-set':
    case 'memory.restored':
    case 'memory.cleared':
    case 'memory.compacted':
      return true;
    case 'session.started':
    case 'compaction.failed':
    case 'hook.failed':
    case 'context.projected':
    case 'model.requested':
    case 'plan.created':
    case 'run.started':
    case 'step.started':
    case 'step.ended':
    case 'run.finished':
    case 'run.failed':
      return false;
    default:
      return assertNever(event);
  }
};

/** Applies one event to a draft. Events that do not change memory are filtered out before. */
const applyEvent = (draft: Draft<MemoryState>, event: SessionEvent): void => {
  switch (event.type) {
    case 'user.input':
    case 'model.output':
    case 'model.responded':
      pushItems(draft, event.seq, event.items);
      return;
    case 'tool.result':
      pushItems(draft, event.seq, [{ type: 'function_call_output', call_id: event.callId, output: event.output }]);
      return;
    case 'command.failed':
    case 'test.result':
    case 'approval.recorded':
    case 'sandbox.state':
    case 'artifact.changed':
      draft.facts.push(event as Draft<RecordedFact>);
      return;
    case 'memory.summary-set':
      draft.summary = event.summary;
      draft.summaryId = event.summary === null ? null : summaryIdOf(event.seq);
      return;
    case 'memory.restored': {
      draft.entries = event.items.map((item, i) => ({ id: itemId(event.seq, i), item })) as Draft<MemoryEntry>[];
      const summary = event.summary ?? null;
      draft.summary = summary;
      draft.summaryId = summary === null ? null : summaryIdOf(event.seq);
      return;
    }
    case 'memory.cleared':
      draft.entries = [];
      draft.summary = null;
      draft.summaryId = null;
      return;
    case 'memory.compacted': {
      const byId = new Map<string, Draft<MemoryEntry>>();
      for (const entry of draft.entries) byId.set(entry.id, entry);
      const next: Draft<MemoryEntry>[] = [];
      event.layout.forEach((slot, i) => {
        if ('keep' in slot) {
          const kept = byId.get(slot.keep);
          if (kept) next.push(kept);
        } else {
          next.push({ id: itemId(event.seq, i), item: slot.item as Draft<MemoryItem> });
        }
      });
      draft.entries = next;
      draft.summary = event.summary;
      draft.summaryId = event.summary === null ? null : summaryIdOf(event.seq);
      draft.facts = [];
      draft.readFiles = [...event.result.readFiles];
      draft.modifiedFiles = [...event.result.modifiedFiles];
      draft.lastCompaction = {
        seq: event.seq,
        trigger: event.trigger,
        policy: event.policy,
        result: event.result,
      } as Draft<MemoryState['lastCompaction']>;
      return;
    }
    case 'session.started':
    case 'compaction.failed':
    case 'hook.failed':
    case 'context.projected':
    case 'model.requested':
    case 'plan.created':
    case 'run.started':
    case 'step.started':
    case 'step.ended':
    case 'run.finished':
    case 'run.failed':
      return;
    default:
      assertNever(event);
  }
};

/**
 * The reducer: `(state, event) => state`. Frozen results; an event that does not change memory
 * returns the same reference.
 * @example const next = memoryReducer(initialMemoryState, event)
 */
export const memoryReducer = (state: MemoryState, event: SessionEvent): MemoryState =>
  changesMemory(event) ? produce(state, (draft) => applyEvent(draft, event)) : state;

/**
 * Folds events into memory: equal to `events.reduce(memoryReducer, initial)`, in one immer pass.
 * @example const memory = foldMemory(eventsFromLog)
 */
export const foldMemory = (events: Iterable<SessionEvent>, initial: MemoryState = initialMemoryState): MemoryState => {
  let pending: SessionEvent[] | undefined;
  for (const event of events) {
    if (!changesMemory(event)) continue;
    (pending ??= []).push(event);
  }
  if (!pending) return initial;
  const changing = pending;
  return produce(initial, (draft) => {
    for (const event of changing) applyEvent(draft, event);
  });
};

/** Folds an async stream of events (e.g. `log.read(id)`) in chunks, with bounded buffering. */
export const foldMemoryAsync = async (
  events: AsyncIterable<SessionEvent>,
  initial: MemoryState = initialMemoryState,
  chunkSize = 4096,
): Promise<{ state: MemoryState; lastSeq: number; lastHash: string | null }> => {
  let state = initial;
  let chunk: SessionEvent[] = [];
  let lastSeq = 0;
  let lastHash: string | null = null;
  for await (const event of events) {
    chunk.push(event);
    lastSeq = event.seq;
    lastHash = event.hash;
    if (chunk.length >= chunkSize) {
      state = foldMemory(chunk, state);
      chunk = [];
    }
  }
  if (chunk.length > 0) state = foldMemory(chunk, state);
  return { state, lastSeq, lastHash };
};
