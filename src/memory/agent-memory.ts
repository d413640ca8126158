// AgentMemory: writes append events, reads come from the live fold of those events.
import { InvalidEventError, type MemorySnapshot, type NewSessionEvent, type SessionEvent } from '../events/index.js';
import { itemsOfInput, systemMessage, type MemoryItem } from '../items/index.js';
import { createMemoryFold } from './reducer.js';
import { MemoryStateSchema, initialMemoryState, type MemoryEntry, type MemoryState, type WorkingMemoryBlock } from './state.js';

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
   * returns are appended right after, in the same write (and folded, and passed to it in turn). `state()` gives the
   * folded state: ask for it only when it is needed (building it settles the appends folded since it was last built).
   */
  readonly afterAppend?:
    | ((stored: readonly SessionEvent[], state: () => MemoryState) => void | readonly NewSessionEvent[] | Promise<void | readonly NewSessionEvent[]>)
    | undefined;
  /**
   * Called when `afterAppend`, or appending what it returned, fails after the write's own events were stored: the
   * write still resolves with them (they are committed), and the failure is reported here instead.
   */
  readonly onAfterAppendError?: ((error: unknown) => void) | undefined;
  /**
   * Whether `afterAppend` would append events (a checkpoint) after an append of the seqs `first..last`. Deferred
   * events ({@link deferWrite}) are never merged into one append across such a point, so merging never moves what
   * `afterAppend` appends. Absent: it never does.
   */
  readonly appendsAfter?: ((first: number, last: number) => boolean) | undefined;
}

/** Events put off until the memory's next write (see {@link deferWrite}), and what to call once they are stored. */
interface DeferredGroup {
  readonly events: readonly NewSessionEvent[];
  readonly onStored?: ((stored: readonly SessionEvent[]) => void) | undefined;
  /** When it was deferred: a write takes only the groups deferred before it was asked for. */
  readonly ticket: number;
}

/** The deferral side of an event-sourced memory (not part of AgentMemory: the runtime's step uses it). */
interface Deferral {
  defer(events: readonly NewSessionEvent[], onStored?: (stored: readonly SessionEvent[]) => void): void;
  flush(): Promise<void>;
  pending(): number;
  /** Whether `afterAppend` would append events (a checkpoint) after one of the groups waiting, were they appended now. */
  reachesAppendsAfter(): boolean;
}
const deferrals = new WeakMap<AgentMemory, Deferral>();

/**
 * Puts `events` off until `memory`'s next write (or {@link flushDeferred}), which appends them first, in order, in
 * the same append as its own events unless a checkpoint falls between: a step's bookkeeping events then share one
 * append instead of one each. Only for events that change nothing a read of memory or of the session's state would
 * see before then (a step's start and end, its projection record): until stored they are not folded. `onStored`
 * runs once they are stored (after the listeners of those events). Returns false when `memory` cannot defer (it is
 * not an event-sourced memory): append them yourself.
 * @example if (!deferWrite(session.memory, [{ type: 'step.started', runId, step }])) await session.record([...])
 */
export const deferWrite = (
  memory: AgentMemory,
  events: readonly NewSessionEvent[],
  onStored?: (stored: readonly SessionEvent[]) => void,
): boolean => {
  const deferral = deferrals.get(memory);
  if (!deferral) return false;
  deferral.defer(events, onStored);
  return true;
};

/** Appends what {@link deferWrite} put off for `memory` now (nothing when nothing waits). */
export const flushDeferred = (memory: AgentMemory): Promise<void> => deferrals.get(memory)?.flush() ?? Promise.resolve();

/**
 * Whether events `memory` put off would be followed by a checkpoint were they appended now: store them now then
 * ({@link flushDeferred}), so the checkpoint is taken where it would have been without deferral, before anything else
 * happens (its projection facts are those known at that point).
 */
export const deferredReachCheckpoint = (memory: AgentMemory): boolean => deferrals.get(memory)?.reachesAppendsAfter() ?? false;

/** How many groups of events wait in `memory` for its next write (a work count for tests). */
export const deferredGroups = (memory: AgentMemory): number => deferrals.get(memory)?.pending() ?? 0;

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

/**
 * The text of the working-memory item: one section per block, its name, size against its limit and description,
 * then its text.
 * @example renderWorkingMemory([{ name: 'plan', text: '1. read', maxChars: 500 }])
 */
export const renderWorkingMemory = (blocks: readonly WorkingMemoryBlock[]): string => {
  const parts = ['Working memory (your own notes; edit them with the working_memory tool):'];
  for (const block of blocks) {
    const size = block.maxChars !== undefined ? `${block.text.length}/${block.maxChars} chars` : `${block.text.length} chars`;
    parts.push('', `## ${block.name} (${size})${block.description ? ` ${block.description}` : ''}`, block.text === '' ? '(empty)' : block.text);
  }
  return parts.join('\n');
};

const blocksItems = new Map<string, MemoryItem>();
const blocksItemOf = (state: MemoryState): MemoryItem | undefined => {
  if (state.blocks.length === 0) return undefined;
  const text = renderWorkingMemory(state.blocks);
  let item = blocksItems.get(text);
  if (!item) {
    item = Object.freeze(systemMessage(text));
    if (blocksItems.size >= SUMMARY_ITEMS_KEPT) blocksItems.delete(blocksItems.keys().next().value as string);
    blocksItems.set(text, item);
  }
  return item;
};

/**
 * Memory items as a prompt would carry them: the summary (when not blank) first, then the working-memory blocks
 * (when any) as one system item, then the items.
 */
export const visibleEntries = (state: MemoryState): readonly MemoryEntry[] => {
  const summary = summaryItemOf(state);
  const blocks = blocksItemOf(state);
  if (!summary && !blocks) return state.entries;
  const head: MemoryEntry[] = [];
  if (summary) head.push({ id: state.summaryId ?? 'summary', item: summary });
  if (blocks) head.push({ id: state.blocksId ?? 'memory', item: blocks });
  return [...head, ...state.entries];
};

/** The index of the working-memory item among `visibleEntries(state)`, or -1 when memory holds no blocks. */
export const workingMemoryIndex = (state: MemoryState): number =>
  state.blocks.length === 0 ? -1 : summaryItemOf(state) ? 1 : 0;

/** A `session.rewound` whose memory is not a MemoryState would break every later fold: refused before it is appended. */
const checkRewinds = (sessionId: string, events: readonly NewSessionEvent[]): void => {
  events.forEach((event, index) => {
    if (event.type !== 'session.rewound') return;
    const parsed = MemoryStateSchema.safeParse(event.memory);
    if (parsed.success) return;
    throw new InvalidEventError({
      sessionId,
      index,
      eventType: event.type,
      issues: parsed.error.issues.slice(0, 3).map((issue) => ({ path: ['memory', ...issue.path].join('.'), message: issue.message })),
    });
  });
};

/**
 * An AgentMemory over an appender. Writes are serialised; each appends events with the head it
 * has folded as `expectedSeq`, so a second writer to the same session is detected, not merged.
 */
export const createEventSourcedMemory = (options: EventSourcedMemoryOptions): AgentMemory => {
  const { sessionId, appender } = options;
  // The state as last built, and the appends folded on top of it since: built when someone reads it. Many appends in a
  // row (a step's tool results, one append each) then copy memory's entry list once, not once per append, which made a
  // step with thousands of results quadratic (and, past V8's large-object size, every copy a GC burden).
  let built = options.state ?? initialMemoryState;
  let folding: ReturnType<typeof createMemoryFold> | undefined;
  const current = (): MemoryState => {
    if (folding) {
      built = folding.result();
      folding = undefined;
    }
    return built;
  };
  let head = options.headSeq ?? 0;
  let tail: Promise<unknown> = Promise.resolve();

  const serialised = <T>(op: () => Promise<T>): Promise<T> => {
    const run = tail.then(op, op);
    tail = run.catch(() => undefined);
    return run;
  };

  /** Folds events just stored (one append's, or one deferred group's of a merged append) and runs `afterAppend`. */
  const settle = async (stored: readonly SessionEvent[]): Promise<void> => {
    if (stored.length === 0) return;
    folding ??= createMemoryFold(built);
    for (const event of stored) folding.add(event);
    head = stored[stored.length - 1]!.seq;
    // The events are committed: what follows (a checkpoint) never turns the write into a rejection.
    try {
      const more = await options.afterAppend?.(stored, current);
      if (more && more.length > 0) await appendNow(more);
    } catch (error) {
      options.onAfterAppendError?.(error);
    }
  };

  const appendNow = async (events: readonly NewSessionEvent[]): Promise<readonly SessionEvent[]> => {
    const stored = await appender(events, { expectedSeq: head });
    await settle(stored);
    return stored;
  };

  // Deferred groups, oldest first, and the ticket the next deferred group gets.
  let deferred: DeferredGroup[] = [];
  let tickets = 0;

  /** Removes and returns the groups deferred before `ticket`. */
  const takeDeferred = (ticket: number): DeferredGroup[] => {
    let n = 0;
    while (n < deferred.length && deferred[n]!.ticket < ticket) n++;
    const taken = deferred.slice(0, n);
    deferred = deferred.slice(n);
    return taken;
  };

  /**
   * Appends groups in order, as few appends as it takes: groups are merged unless `appendsAfter` says events would
   * follow one of them (a checkpoint), where the append ends. Each group is folded, told to `afterAppend` and to its
   * `onStored` as if it had been appended alone. A merged append that fails is tried again group by group, so what
   * is stored, and the error, are what appending them one by one gives. Returns the last group's stored events.
   */
  const told = (group: Omit<DeferredGroup, 'ticket'>, stored: readonly SessionEvent[]): void => {
    try {
      group.onStored?.(stored);
    } catch {
      // a listener must not break the write: its events are stored
    }
  };

  const appendGroups = async (groups: readonly Omit<DeferredGroup, 'ticket'>[]): Promise<readonly SessionEvent[]> => {
    let last: readonly SessionEvent[] = [];
    let i = 0;
    while (i < groups.length) {
      let end = i + 1;
      let first = head + 1;
      let lastSeq = head + groups[i]!.events.length;
      while (end < groups.length && !(options.appendsAfter?.(first, lastSeq) ?? false)) {
        first = lastSeq + 1;
        lastSeq += groups[end]!.events.length;
        end++;
      }
      const chunk = groups.slice(i, end);
      i = end;
      if (chunk.length === 1) {
        last = await appendNow(chunk[0]!.events);
        told(chunk[0]!, last);
        continue;
      }
      let stored: readonly SessionEvent[];
      try {
        stored = await appender(chunk.flatMap((group) => group.events), { expectedSeq: head });
      } catch {
        // Nothing of it is stored: one group at a time, the first that fails throws its own error.
        for (const group of chunk) {
          last = await appendNow(group.events);
          told(group, last);
        }
        continue;
      }
      let offset = 0;
      for (const group of chunk) {
        last = stored.slice(offset, offset + group.events.length);
        offset += group.events.length;
        await settle(last);
        told(group, last);
      }
    }
    return last;
  };

  const write = async (events: readonly NewSessionEvent[], itemsWritten: boolean): Promise<readonly SessionEvent[]> => {
    checkRewinds(sessionId, events);
    const ticket = tickets;
    const stored = await serialised(() => {
      const groups = takeDeferred(ticket);
      return groups.length === 0 ? appendNow(events) : appendGroups([...groups, { events }]);
    });
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
      return visibleEntries(current()).map((e) => e.item);
    },
    getEntries() {
      return visibleEntries(current());
    },
    getSummary() {
      return current().summary;
    },
    setSummary(summary) {
      return write([{ type: 'memory.summary-set', summary }], false);
    },
    snapshot() {
      const state = current();
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
    state: current,
    headSeq: () => head,
  };
  deferrals.set(memory, {
    defer(events, onStored) {
      checkRewinds(sessionId, events);
      if (events.length > 0) deferred.push({ events, onStored, ticket: tickets++ });
      else told({ events, onStored }, []);
    },
    flush() {
      if (deferred.length === 0) return Promise.resolve();
      const ticket = tickets;
      return serialised(async () => {
        const groups = takeDeferred(ticket);
        if (groups.length > 0) await appendGroups(groups);
      });
    },
    pending: () => deferred.length,
    reachesAppendsAfter() {
      if (!options.appendsAfter) return false;
      let first = head + 1;
      for (const group of deferred) {
        const last = first + group.events.length - 1;
        if (options.appendsAfter(first, last)) return true;
        first = last + 1;
      }
      return false;
    },
  });
  return memory;
};
