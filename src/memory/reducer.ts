// memoryReducer and foldMemory: the only way memory changes, as a pure fold over events.
import { assertNever } from '../base/assert-never.js';
import { freeze, isDraft, produce, type Draft } from 'immer';
import { InternalError } from '../base/errors.js';
import { isFactEvent, type RecordedFact, type SessionEvent, type SessionEventOf } from '../events/index.js';
import type { MemoryItem } from '../items/index.js';
import { MemoryStateSchema, blocksIdOf, factOf, initialMemoryState, itemId, summaryIdOf, type MemoryEntry, type MemoryState } from './state.js';

/** Copies of a memory's entry list made to append to it, by the reducer and by the folds (see entryListCopyCount). */
let entryListCopies = 0;

const pushItems = (draft: Draft<MemoryState>, seq: number, items: readonly MemoryItem[]): void => {
  for (let i = 0; i < items.length; i++) {
    draft.entries.push({ id: itemId(seq, i), item: items[i] as Draft<MemoryItem> });
  }
};

/** The memory item a tool result brings in. */
const toolResultItems = (event: SessionEventOf<'tool.result'>): MemoryItem[] => [
  { type: 'function_call_output', call_id: event.callId, output: event.output },
];

/** Parses the memory a `session.rewound` carries (a broken one is a broken invariant: the event was written from the log). */
export const rewoundMemoryOf = (event: SessionEventOf<'session.rewound'>): MemoryState => {
  const parsed = MemoryStateSchema.safeParse(event.memory);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InternalError(`session.rewound at seq ${event.seq} carries no valid memory state (${issue?.path.join('.') || '(root)'}: ${issue?.message ?? '?'})`);
  }
  return parsed.data as MemoryState;
};

const applyRewound = (draft: Draft<MemoryState>, event: SessionEventOf<'session.rewound'>): void => {
  const memory = rewoundMemoryOf(event);
  for (const key of Object.keys(memory) as (keyof MemoryState)[]) {
    (draft as Record<string, unknown>)[key] = memory[key] as unknown;
  }
};

/** Memory's entries become `layout`: a kept item by id (its entry as it was), an inline item with the id `<seq>:<index in layout>`. */
const applyLayout = (draft: Draft<MemoryState>, seq: number, layout: SessionEventOf<'memory.compacted'>['layout']): void => {
  const byId = new Map<string, Draft<MemoryEntry>>();
  for (const entry of draft.entries) byId.set(entry.id, entry);
  const next: Draft<MemoryEntry>[] = [];
  layout.forEach((slot, i) => {
    if ('keep' in slot) {
      const kept = byId.get(slot.keep);
      if (kept) next.push(kept);
    } else {
      next.push({ id: itemId(seq, i), item: slot.item as Draft<MemoryItem> });
    }
  });
  draft.entries = next;
};

/** Does this event change memory? Events that do not leave the state untouched (same reference). */
export const changesMemory = (event: SessionEvent): boolean => {
  switch (event.type) {
    case 'user.input':
    case 'model.output':
    case 'model.responded':
      return event.items.length > 0;
    case 'tool.result':
      // A nested call (made from inside another tool, e.g. CodeAct) is audit-only: its output reaches
      // the model through the outer call's result, and an output without its call would be an orphan.
      return event.parentCallId === undefined;
    case 'command.failed':
    case 'test.result':
    case 'approval.recorded':
    case 'sandbox.state':
    case 'artifact.changed':
    case 'memory.summary-set':
    case 'memory.restored':
    case 'memory.cleared':
    case 'memory.compacted':
    case 'memory.noted':
    case 'session.rewound':
      return true;
    case 'memory.edited':
      return event.layout !== undefined;
    case 'memory.recalled':
    case 'compaction.requested':
    case 'session.started':
    case 'compaction.failed':
    case 'compaction.skipped':
    case 'checkpoint.taken':
    case 'hook.failed':
    case 'context.projected':
    case 'model.requested':
    case 'model.failed':
    case 'plan.created':
    case 'run.started':
    case 'step.started':
    case 'step.ended':
    case 'run.finished':
    case 'run.failed':
    case 'approval.requested':
    case 'approval.call-started':
    case 'event.erased':
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
      pushItems(draft, event.seq, toolResultItems(event));
      return;
    case 'command.failed':
    case 'test.result':
    case 'approval.recorded':
    case 'sandbox.state':
    case 'artifact.changed':
      draft.facts.push(factOf(event) as Draft<RecordedFact>);
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
      draft.blocks = [];
      draft.blocksId = null;
      return;
    case 'memory.noted': {
      const block = {
        name: event.block,
        text: event.text,
        ...(event.description !== undefined ? { description: event.description } : {}),
        ...(event.maxChars !== undefined ? { maxChars: event.maxChars } : {}),
      };
      const at = draft.blocks.findIndex((b) => b.name === event.block);
      if (at >= 0) draft.blocks[at] = block;
      else draft.blocks.push(block);
      draft.blocksId = blocksIdOf(event.seq);
      return;
    }
    case 'session.rewound':
      // The state the event carries is memory as it was after `toSeq` (written by session.rewind from the log).
      applyRewound(draft, event);
      return;
    case 'memory.edited':
      // An edit changes the items only: the summary, facts, file lists and last compaction stay.
      if (event.layout) applyLayout(draft, event.seq, event.layout);
      return;
    case 'memory.compacted': {
      applyLayout(draft, event.seq, event.layout);
      draft.summary = event.summary;
      draft.summaryId = event.summary === null ? null : summaryIdOf(event.seq);
      // Only the facts the compaction's snapshot held: facts recorded while the policy ran stay for the next one.
      {
        const through = event.factsThroughSeq;
        draft.facts = through === undefined ? [] : draft.facts.filter((fact) => fact.seq > through);
      }
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
    case 'memory.recalled':
    case 'compaction.requested':
    case 'session.started':
    case 'compaction.failed':
    case 'compaction.skipped':
    case 'checkpoint.taken':
    case 'hook.failed':
    case 'context.projected':
    case 'model.requested':
    case 'model.failed':
    case 'plan.created':
    case 'run.started':
    case 'step.started':
    case 'step.ended':
    case 'run.finished':
    case 'run.failed':
    case 'approval.requested':
    case 'approval.call-started':
    case 'event.erased':
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
export const memoryReducer = (state: MemoryState, event: SessionEvent): MemoryState => {
  if (!changesMemory(event)) return state;
  // Appending through the draft copies memory's entry list (counted as the folds' copies are).
  if (appendedItems(event) !== undefined) entryListCopies += 1;
  return produce(state, (draft) => applyEvent(draft, event));
};

/** The items an event appends to memory, for the event types that append items. */
const appendedItems = (event: SessionEvent): readonly MemoryItem[] | undefined => {
  switch (event.type) {
    case 'user.input':
    case 'model.output':
    case 'model.responded':
      return event.items;
    case 'tool.result':
      return toolResultItems(event);
    default:
      return undefined;
  }
};

/** Events that replace the entry list wholesale; every other memory-changing event only appends or sets the summary. */
const replacesEntries = (event: SessionEvent): boolean =>
  event.type === 'memory.restored' ||
  event.type === 'memory.cleared' ||
  event.type === 'memory.compacted' ||
  event.type === 'memory.edited' ||
  event.type === 'memory.noted' ||
  event.type === 'session.rewound';

/**
 * Deep-freezes `list` (a copy of `base` with new elements appended) as immer would: when `base` is
 * frozen its elements are taken as frozen already (immer's rule for a frozen base), so only the new
 * elements are walked; otherwise everything is.
 */
const freezeAppended = <T>(list: T[], base: readonly T[]): readonly T[] => {
  if (!Object.isFrozen(base)) return freeze(list, true);
  for (let i = base.length; i < list.length; i++) freezeLikeImmer(list[i]);
  return Object.freeze(list);
};

/**
 * immer's `freeze(value, true)`, walking plain objects and arrays (all that events decoded from the
 * log contain) directly; anything else (drafts, class instances, Map, Set) goes to immer's own.
 */
const freezeLikeImmer = (value: unknown): void => {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'function') freeze(value, true);
    return;
  }
  if (Object.isFrozen(value)) return;
  const proto: unknown = Object.getPrototypeOf(value);
  if ((proto !== Object.prototype && proto !== Array.prototype && proto !== null) || isDraft(value)) {
    freeze(value, true);
    return;
  }
  Object.freeze(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) freezeLikeImmer(value[i]);
  } else {
    const obj = value as Record<string, unknown>;
    const keys = Object.keys(obj);
    for (let i = 0; i < keys.length; i++) freezeLikeImmer(obj[keys[i] as string]);
  }
};

/**
 * An incremental fold. Events that append items or facts or set the summary (nearly all of a
 * session) go straight into plain working arrays, copied from the state once and frozen and assigned
 * in one `produce` when the fold ends or meets an event that replaces the entry list (restore, clear,
 * compaction), which goes through `applyEvent` on an immer draft like `memoryReducer`. The result is
 * the same as applying every event on a draft: pushing through immer's array proxy and finalizing
 * each pushed object cost several microseconds per item, and copying and freezing the whole list
 * once per chunk made long folds quadratic.
 */
/** How many times folds have copied a memory's entry list (to append to it) in this process: a work count for tests. */
export const entryListCopyCount = (): number => entryListCopies;

/**
 * Lines of entry lists, each list the one before it with entries appended: the fold puts a list it builds by appending
 * to `base` on base's line when base is the newest list of that line, and starts a new line otherwise (two folds that
 * extend one list differently never share a line). So every list of a line starts with every shorter list of the same
 * line (the same entry objects, in order), and a reader that derived something from one list learns in O(1) whether
 * a later list only appended to it. Lists are held weakly: a line is a number and costs nothing once its lists are gone.
 */
interface EntryLine {
  newest: number;
}
const entryLines = new WeakMap<readonly MemoryEntry[], { readonly line: EntryLine; readonly length: number }>();

const extendLine = (base: readonly MemoryEntry[], extended: readonly MemoryEntry[]): void => {
  let mark = entryLines.get(base);
  if (!mark) {
    mark = { line: { newest: base.length }, length: base.length };
    entryLines.set(base, mark);
  }
  const line = mark.line.newest === base.length ? mark.line : { newest: base.length };
  line.newest = extended.length;
  entryLines.set(extended, { line, length: extended.length });
};

/**
 * `earlier.length` when `later` is `earlier` with entries appended (or the same list), so what was derived from
 * `earlier` can be extended with `later.slice(earlier.length)`; -1 when that is not known (entries were replaced by a
 * compaction, restore, clear or rewind, or the lists were not built by appending): derive it again from `later`. O(1).
 * @example const from = entriesAppendedFrom(seen, memory.state().entries); // -1: start over
 */
export const entriesAppendedFrom = (earlier: readonly MemoryEntry[], later: readonly MemoryEntry[]): number => {
  if (earlier === later) return earlier.length;
  const a = entryLines.get(earlier);
  const b = entryLines.get(later);
  return a !== undefined && b !== undefined && a.line === b.line && b.length >= a.length ? a.length : -1;
};

export const createMemoryFold = (initial: MemoryState) => {
  let state = initial;
  let entries: MemoryEntry[] | undefined;
  let facts: RecordedFact[] | undefined;
  let summary: { summary: string | null; summaryId: string | null } | undefined;
  let replacing: SessionEvent[] = [];

  const flushAppends = (): void => {
    if (!entries && !facts && !summary) return;
    const newEntries = entries && freezeAppended(entries, state.entries);
    const newFacts = facts && freezeAppended(facts, state.facts);
    const newSummary = summary;
    entries = undefined;
    facts = undefined;
    summary = undefined;
    const base = state.entries;
    state = produce(state, (draft) => {
      if (newEntries) draft.entries = newEntries as Draft<MemoryEntry>[];
      if (newFacts) draft.facts = newFacts as Draft<RecordedFact>[];
      if (newSummary) {
        draft.summary = newSummary.summary;
        draft.summaryId = newSummary.summaryId;
      }
    });
    if (newEntries) extendLine(base, state.entries);
  };

  const flushReplacing = (): void => {
    if (replacing.length === 0) return;
    const pending = replacing;
    replacing = [];
    state = produce(state, (draft) => {
      for (const event of pending) applyEvent(draft, event);
    });
  };

  return {
    add(event: SessionEvent): void {
      if (!changesMemory(event)) return;
      if (replacesEntries(event)) {
        flushAppends();
        replacing.push(event);
        return;
      }
      flushReplacing();
      const items = appendedItems(event);
      if (items) {
        // Spread, not slice: V8's slice of a frozen array takes a slow path (about 80 times slower per element).
        if (!entries) {
          entries = [...state.entries];
          entryListCopies += 1;
        }
        for (let i = 0; i < items.length; i++) entries.push({ id: itemId(event.seq, i), item: items[i] as MemoryItem });
      } else if (isFactEvent(event)) {
        (facts ??= [...state.facts]).push(factOf(event));
      } else if (event.type === 'memory.summary-set') {
        summary = { summary: event.summary, summaryId: event.summary === null ? null : summaryIdOf(event.seq) };
      }
    },
    result(): MemoryState {
      flushReplacing();
      flushAppends();
      return state;
    },
  };
};

/**
 * Folds events into memory: equal to `events.reduce(memoryReducer, initial)`, in linear time (see
 * `createMemoryFold`). Events that do not change memory leave it untouched: the same reference comes back.
 * @example const memory = foldMemory(eventsFromLog)
 */
export const foldMemory = (events: Iterable<SessionEvent>, initial: MemoryState = initialMemoryState): MemoryState => {
  const fold = createMemoryFold(initial);
  for (const event of events) fold.add(event);
  return fold.result();
};

/**
 * Folds an async stream of events (e.g. `log.read(id)`) as it arrives: no events are buffered, only
 * the memory being built.
 */
export const foldMemoryAsync = async (
  events: AsyncIterable<SessionEvent>,
  initial: MemoryState = initialMemoryState,
): Promise<{ state: MemoryState; lastSeq: number; lastHash: string | null }> => {
  const fold = createMemoryFold(initial);
  let lastSeq = 0;
  let lastHash: string | null = null;
  for await (const event of events) {
    fold.add(event);
    lastSeq = event.seq;
    lastHash = event.hash;
  }
  return { state: fold.result(), lastSeq, lastHash };
};
