// AgentMemory: writes append events, reads come from the live fold of those events (a façade over the session's
// writer, session/live.ts).
import { InvalidEventError, type MemorySnapshot, type NewSessionEvent, type SessionEvent } from '../events/index.js';
import { itemsOfInput, systemMessage, type MemoryItem } from '../items/index.js';
import { MemoryStateSchema, type MemoryEntry, type MemoryState, type WorkingMemoryBlock } from './state.js';

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
export const checkRewinds = (sessionId: string, events: readonly NewSessionEvent[]): void => {
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

/** What memory needs of the session's writer: writes, and the live state they fold into (`createLiveSession`). */
export interface MemoryWriter {
  readonly sessionId: string;
  /** Appends `events` and resolves with them as stored; `itemsWritten` tells the writer's listeners that items were written. */
  write(events: readonly NewSessionEvent[], itemsWritten?: boolean): Promise<readonly SessionEvent[]>;
  /** Memory as folded from the events stored. */
  state(): MemoryState;
  /** The seq of the last event folded. */
  head(): number;
}

/**
 * AgentMemory as a façade over a session's writer: each method is an event written there, each read reads the
 * writer's live state. The session's writer (`session/live.ts`) serialises, folds, checkpoints and notifies.
 */
export const memoryOver = (writer: MemoryWriter): AgentMemory => {
  const { sessionId, write } = writer;
  const current = (): MemoryState => writer.state();
  return {
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
      return write([{ type: 'memory.summary-set', summary }]);
    },
    snapshot() {
      const state = current();
      // The items are listed on first read (an O(items) copy): a policy's trigger gets their number from its context.
      let items: readonly MemoryItem[] | undefined;
      return {
        get items() {
          return (items ??= state.entries.map((e) => e.item));
        },
        summary: state.summary,
        facts: state.facts,
        readFiles: state.readFiles,
        modifiedFiles: state.modifiedFiles,
      };
    },
    restore(snapshot) {
      return write([{ type: 'memory.restored', items: [...snapshot.items], summary: snapshot.summary ?? null }]);
    },
    clear() {
      return write([{ type: 'memory.cleared' }]);
    },
    record(events) {
      return write(events);
    },
    state: current,
    headSeq: () => writer.head(),
  };
};
