// AgentMemory: writes append events, reads come from the live fold of those events.
import type { MemorySnapshot, NewSessionEvent, SessionEvent } from '../events/index.js';
import { itemsOfInput, systemMessage, type MemoryItem } from '../items/index.js';
import { foldMemory } from './reducer.js';
import { initialMemoryState, type MemoryEntry, type MemoryState } from './state.js';

/** Compresses a snapshot after writes (the reference's old extension point); a session runs it through its compaction pipeline. */
export interface MemoryCompressor {
  compress(snapshot: MemorySnapshot): MemorySnapshot | Promise<MemorySnapshot>;
  /** Optional: how to name it in the `memory.compacted` event. */
  describe?(): { name: string; settings: Record<string, unknown> };
}

/** Appends events to one session (with the head the caller believes) and returns them as stored. */
export type EventAppender = (
  events: readonly NewSessionEvent[],
  options: { readonly expectedSeq: number },
) => Promise<readonly SessionEvent[]>;

export interface AgentMemory {
  readonly sessionId: string;
  /** A string becomes a user message; items are stored as given. */
  addUserInput(input: string | MemoryItem | readonly MemoryItem[]): Promise<readonly SessionEvent[]>;
  /** Assistant messages, function calls and reasoning the model produced. */
  addOutputItems(items: readonly MemoryItem[]): Promise<readonly SessionEvent[]>;
  addToolOutput(
    callId: string,
    output: string,
    options?: { readonly name?: string; readonly isError?: boolean },
  ): Promise<readonly SessionEvent[]>;
  /** Items as the model would see them: a non-blank summary first, as a system message. */
  getItems(): MemoryItem[];
  /** Items with their stable ids (the summary entry, when shown, first). */
  getEntries(): readonly MemoryEntry[];
  getSummary(): string | null;
  setSummary(summary: string | null): Promise<readonly SessionEvent[]>;
  /** Raw items, summary, facts since the last compaction, accumulated file lists. */
  snapshot(): MemorySnapshot;
  /** Replaces items and summary (a snapshot without a summary clears it). */
  restore(snapshot: MemorySnapshot): Promise<readonly SessionEvent[]>;
  clear(): Promise<readonly SessionEvent[]>;
  /** Appends any events (facts, runtime events) to the session; memory folds them. */
  record(events: readonly NewSessionEvent[]): Promise<readonly SessionEvent[]>;
  /** The folded state. */
  state(): MemoryState;
  /** The seq of the last event folded. */
  headSeq(): number;
}

export interface EventSourcedMemoryOptions {
  readonly sessionId: string;
  readonly appender: EventAppender;
  /** State already folded from the session's existing events. */
  readonly state?: MemoryState;
  readonly headSeq?: number;
  /**
   * After each write of items (user input, model output, tool output) has been stored, before the write resolves;
   * outside the write's lock, so it may write too (the session runs its compressor's compaction here).
   */
  readonly afterItemsWritten?: ((memory: AgentMemory) => Promise<void>) | undefined;
  /**
   * Runs after every append has been folded, inside the write (e.g. to store a checkpoint). Events it
   * returns are appended right after, in the same write (and folded, and passed to it in turn).
   */
  readonly afterAppend?:
    | ((stored: readonly SessionEvent[], state: MemoryState) => void | readonly NewSessionEvent[] | Promise<void | readonly NewSessionEvent[]>)
    | undefined;
  /**
   * Called when `afterAppend`, or appending what it returned, fails after the write's own events were stored: the
   * write still resolves with them (they are committed), and the failure is reported here instead.
   */
  readonly onAfterAppendError?: ((error: unknown) => void) | undefined;
}

// The summary message is one frozen object per (summary id, text), not per state: every append makes a
// new state, and a stable first item lets projectors reuse their per-history work from turn to turn.
const summaryItems = new Map<string, MemoryItem>();
const SUMMARY_ITEMS_KEPT = 64;
const summaryItemOf = (state: MemoryState): MemoryItem | undefined => {
  if (state.summary === null || state.summary.trim() === '') return undefined;
  const key = `${state.summaryId ?? ''}\u0000${state.summary}`;
  let item = summaryItems.get(key);
  if (!item) {
    item = Object.freeze(systemMessage(state.summary));
    if (summaryItems.size >= SUMMARY_ITEMS_KEPT) summaryItems.delete(summaryItems.keys().next().value as string);
    summaryItems.set(key, item);
  }
  return item;
};

/** Memory items as a prompt would carry them: the summary (when not blank) first. */
export const visibleEntries = (state: MemoryState): readonly MemoryEntry[] => {
  const summary = summaryItemOf(state);
  return summary ? [{ id: state.summaryId ?? 'summary', item: summary }, ...state.entries] : state.entries;
};

/**
 * An AgentMemory over an appender. Writes are serialised; each appends events with the head it
 * has folded as `expectedSeq`, so a second writer to the same session is detected, not merged.
 */
export const createEventSourcedMemory = (options: EventSourcedMemoryOptions): AgentMemory => {
  const { sessionId, appender } = options;
  let state = options.state ?? initialMemoryState;
  let head = options.headSeq ?? 0;
  let tail: Promise<unknown> = Promise.resolve();

  const serialised = <T>(op: () => Promise<T>): Promise<T> => {
    const run = tail.then(op, op);
    tail = run.catch(() => undefined);
    return run;
  };

  const appendNow = async (events: readonly NewSessionEvent[]): Promise<readonly SessionEvent[]> => {
    const stored = await appender(events, { expectedSeq: head });
    if (stored.length > 0) {
      state = foldMemory(stored, state);
      head = stored[stored.length - 1]!.seq;
      // The events are committed: what follows (a checkpoint) never turns the write into a rejection.
      try {
        const more = await options.afterAppend?.(stored, state);
        if (more && more.length > 0) await appendNow(more);
      } catch (error) {
        options.onAfterAppendError?.(error);
      }
    }
    return stored;
  };

  const write = async (events: readonly NewSessionEvent[], itemsWritten: boolean): Promise<readonly SessionEvent[]> => {
    const stored = await serialised(() => appendNow(events));
    if (itemsWritten && options.afterItemsWritten) await options.afterItemsWritten(memory);
    return stored;
  };

  const memory: AgentMemory = {
    sessionId,
    addUserInput(input) {
      return write([{ type: 'user.input', items: itemsOfInput(input) }], true);
    },
    addOutputItems(items) {
      return write([{ type: 'model.output', items: [...items] }], true);
    },
    addToolOutput(callId, output, toolOptions = {}) {
      return write(
        [
          {
            type: 'tool.result',
            callId,
            output,
            isError: toolOptions.isError ?? false,
            ...(toolOptions.name !== undefined ? { name: toolOptions.name } : {}),
          },
        ],
        true,
      );
    },
    getItems() {
      return visibleEntries(state).map((e) => e.item);
    },
    getEntries() {
      return visibleEntries(state);
    },
    getSummary() {
      return state.summary;
    },
    setSummary(summary) {
      return write([{ type: 'memory.summary-set', summary }], false);
    },
    snapshot() {
      return {
        items: state.entries.map((e) => e.item),
        summary: state.summary,
        facts: state.facts,
        readFiles: state.readFiles,
        modifiedFiles: state.modifiedFiles,
      };
    },
    restore(snapshot) {
      return write([{ type: 'memory.restored', items: [...snapshot.items], summary: snapshot.summary ?? null }], false);
    },
    clear() {
      return write([{ type: 'memory.cleared' }], false);
    },
    record(events) {
      return write(events, false);
    },
    state: () => state,
    headSeq: () => head,
  };
  return memory;
};
