// Audit from the log alone: every item's life (entered, fate at each step, left), per step and per compaction.
import { ContextLedgerError, InvalidOptionsError } from '../base/errors.js';
import { approxTokenizer, itemTokenCount, tokenizerFromName, type Tokenizer } from '../context/index.js';
import { decodeFateRuns, fatesOf, type Fate, type FateRule, type SessionEvent, type SessionEventOf } from '../events/index.js';
import { oneLine } from '../base/index.js';
import { textOf, type MemoryItem } from '../items/index.js';
import type { SessionEventLog } from '../log/index.js';
import { headOf } from './memory-at.js';
import { createApprovalAudit, type ApprovalAudit } from './approvals.js';
import { SessionAccounting, parsePriceTable, type AccountTotals, type CompactionAccount, type PriceTable, type StepAccount } from './accounting.js';
import { changesMemory, createMemoryFold, initialMemoryState, memoryReducer, visibleEntries, type MemoryEntry, type MemoryState } from '../memory/index.js';

export interface AuditOptions {
  /** First step to report (inclusive). Items are reported when they were in memory at a reported step or entered or left during one. */
  readonly fromStep?: number;
  /** Last step to report (inclusive); reading stops at the next step. */
  readonly toStep?: number;
  /** Called every 1,000 events with the seq reached and the session's head. */
  readonly onProgress?: (seq: number, head: number) => void;
  /** Prices per model per million tokens: each step's and compaction's `account` gets a `cost`. */
  readonly prices?: PriceTable;
}

/** A stretch of consecutive projected steps at which an item had one fate and rule. */
export interface FateSpan {
  readonly fromStep: number;
  readonly toStep: number;
  readonly fate: Fate;
  readonly rule: FateRule;
}

/** How an item left memory. */
export interface ItemExit {
  readonly seq: number;
  readonly eventType: 'memory.compacted' | 'memory.edited' | 'memory.restored' | 'memory.cleared' | 'memory.summary-set' | 'memory.noted' | 'session.rewound';
  readonly step?: number;
  /** memory.compacted: its trigger and policy. */
  readonly trigger?: 'auto' | 'manual';
  readonly policy?: string;
  /** The summary that replaced it (memory.compacted with a summary, memory.summary-set). */
  readonly summaryId?: string;
  /** The placeholder written in its place (`replaces` names it). */
  readonly placeholderId?: string;
}

/** One item's life in memory. */
export interface ItemAudit {
  readonly id: string;
  /** `user message`, `assistant message`, `function_call read_file`, `function_call_output`, `reasoning`, `summary`… */
  readonly kind: string;
  /** The first 120 characters of its text (or of its JSON). */
  readonly preview: string;
  readonly entered: { readonly seq: number; readonly eventType: SessionEvent['type']; readonly step?: number };
  /** For a placeholder a compaction wrote: the id of the item it stands for. */
  readonly replaces?: string;
  /** Its fate at each projected step it was in memory, as spans of steps. */
  readonly fates: readonly FateSpan[];
  /** Absent while still in memory at the end of what was read. */
  readonly left?: ItemExit;
  /** Set when `log.erase` removed the content of the event it came from: when, why, by whom, and the `event.erased` seq. */
  readonly erased?: { readonly seq: number; readonly at: string; readonly reason: string; readonly by?: string | undefined };
  /** When the agent read it back with the recall tool (`memory.recalled`), in order; absent when never. */
  readonly recalled?: readonly { readonly seq: number; readonly step?: number; readonly callId?: string }[];
}

export interface FateCounts {
  readonly kept: number;
  readonly cleared: number;
  readonly trimmed: number;
  readonly dropped: number;
}

/** One projected step: what memory held and what was sent. */
export interface StepAudit {
  readonly step: number;
  /** The seq of its context.projected event. */
  readonly seq: number;
  readonly runId?: string;
  readonly memory: { readonly items: number; readonly tokens?: number };
  readonly sent: { readonly items: number; readonly tokens?: number };
  readonly budget: Record<string, unknown>;
  readonly fates: FateCounts;
  readonly notes: readonly string[];
  /** Whether memory was compacted in this step (before the projection). */
  readonly compacted: boolean;
  readonly digest: string;
  /** The step's model call: usage, cost (with prices) and the prefix it shares with the previous request. */
  readonly account?: StepAccount;
  /** The working-memory blocks the prompt carried (each block's text, size and limit), when memory held any. */
  readonly workingMemory?: {
    readonly id: string;
    readonly blocks: readonly { readonly name: string; readonly text: string; readonly chars: number; readonly maxChars?: number; readonly description?: string }[];
  };
  /** Set when a later `session.rewound` went back to before this step: what it did no longer counts for memory. */
  readonly rewound?: { readonly bySeq: number };
}

/** A working-memory edit (`memory.noted`). */
export interface NoteAudit {
  readonly seq: number;
  readonly step?: number;
  readonly block: string;
  /** The block's length after the edit, and before it (0 for a new block). */
  readonly chars: number;
  readonly previousChars: number;
  readonly callId?: string;
}

/** A rewind (`session.rewound`): back to the state after `toSeq`; the events after it up to `seq` were rewound. */
export interface RewindAudit {
  readonly seq: number;
  readonly toSeq: number;
  readonly reason?: string;
  /** The steps whose projections fall in the rewound stretch. */
  readonly steps: readonly number[];
}

/** A recall (`memory.recalled`): the items read back, by id or as a query's hits. */
export interface RecallAudit {
  readonly seq: number;
  readonly step?: number;
  readonly ids: readonly string[];
  readonly query?: string;
  readonly callId?: string;
}

export interface CompactionAudit {
  readonly seq: number;
  readonly step?: number;
  readonly trigger: 'auto' | 'manual';
  readonly policy: string;
  readonly items: { readonly before: number; readonly after: number };
  readonly tokens: { readonly before: number; readonly after: number; readonly tokenizer: string; readonly recorded: boolean };
  readonly kept: number;
  readonly dropped: number;
  readonly placeholders: number;
  readonly summaryId?: string;
  /** The compaction's own model calls (a summarizer's usage and cost). */
  readonly account?: CompactionAccount;
}

export interface AuditTotals {
  readonly events: number;
  readonly steps: number;
  readonly compactions: number;
  readonly itemsEntered: number;
  readonly itemsLeft: number;
  /** Items that were cleared (Tier-1), trimmed (Tier-2) or dropped by projection at least once. */
  readonly itemsCleared: number;
  readonly itemsTrimmed: number;
  readonly itemsDropped: number;
  /** Sum over steps of memory tokens minus tokens sent (steps that recorded both). */
  readonly tokensSavedByProjection: number;
  /** Sum over compactions of tokens before minus after. */
  readonly tokensSavedByCompaction: number;
}

/** What the streaming audit yields, in log order; `end` comes last. */
export type AuditRecord =
  | { readonly kind: 'step'; readonly step: StepAudit }
  | { readonly kind: 'compaction'; readonly compaction: CompactionAudit }
  | { readonly kind: 'item'; readonly item: ItemAudit }
  | { readonly kind: 'approval'; readonly approval: ApprovalAudit }
  | { readonly kind: 'note'; readonly note: NoteAudit }
  | { readonly kind: 'recall'; readonly recall: RecallAudit }
  | { readonly kind: 'rewind'; readonly rewind: RewindAudit }
  | { readonly kind: 'end'; readonly totals: AuditTotals; readonly headSeq: number; readonly account: AccountTotals };

export interface SessionAudit {
  readonly sessionId: string;
  readonly headSeq: number;
  readonly steps: readonly StepAudit[];
  readonly compactions: readonly CompactionAudit[];
  /** In the order they entered memory. An item a rewind brought back has a second record (entered by `session.rewound`). */
  readonly items: readonly ItemAudit[];
  /** Every call that asked for approval: pending or decided, who decided and why (in the order they were asked for). */
  readonly approvals: readonly ApprovalAudit[];
  readonly totals: AuditTotals;
  /** Working-memory edits, in order. */
  readonly notes: readonly NoteAudit[];
  /** Recalls, in order. */
  readonly recalls: readonly RecallAudit[];
  /** Rewinds, in order. */
  readonly rewinds: readonly RewindAudit[];
  /** Usage, cost and cacheable prefix over the session, steps' and compactions' calls apart. */
  readonly account: AccountTotals;
}

/** What cannot be audited: an unknown session or item, or a recorded projection that does not fit memory. */
export class AuditError extends ContextLedgerError {
  static override readonly code = 'AUDIT';
  constructor(
    readonly sessionId: string,
    message: string,
    readonly seq?: number,
  ) {
    super(`session ${JSON.stringify(sessionId)}${seq !== undefined ? ` seq ${seq}` : ''}: ${message}`);
  }
}
/** @deprecated use AuditError.isInstance */ export const isAuditError = (e: unknown): e is AuditError => AuditError.isInstance(e);

interface LiveItem {
  id: string;
  /** The item itself (memory holds it anyway), to count memory's tokens at a step. */
  item: MemoryItem;
  kind: string;
  preview: string;
  entered: { seq: number; eventType: SessionEvent['type']; step?: number };
  replaces?: string;
  erased?: ItemAudit['erased'];
  fates: { fromStep: number; toStep: number; fate: Fate; rule: FateRule }[];
  everCleared: boolean;
  everTrimmed: boolean;
  everDropped: boolean;
  /** Entered or left during a reported step. */
  touchedInRange: boolean;
}

const kindOf = (item: MemoryItem, isSummary: boolean): string => {
  if (isSummary) return 'summary';
  const record = item as Record<string, unknown>;
  if (item.type === 'message') {
    const calls = Array.isArray(record['tool_calls']) ? ` (+${(record['tool_calls'] as unknown[]).length} tool call(s))` : '';
    return `${String(record['role'])} message${calls}`;
  }
  if (item.type === 'function_call') return `function_call ${String(record['name'])}`;
  return item.type;
};

const previewOf = (item: MemoryItem): string => {
  const record = item as Record<string, unknown>;
  let text = item.type === 'message' ? textOf(item) : typeof record['output'] === 'string' ? (record['output'] as string) : '';
  if (text === '' && item.type === 'function_call') text = `${String(record['name'])}(${String(record['arguments'] ?? '')})`;
  if (text === '') text = JSON.stringify(item);
  return oneLine(text, 120);
};

const tokensOf = (entries: readonly MemoryEntry[], tokenizer: Tokenizer): number => {
  let total = 0;
  for (const e of entries) total += itemTokenCount(e.item, tokenizer);
  return total;
};

const toItemAudit = (live: LiveItem, left: ItemExit | undefined): ItemAudit => ({
  id: live.id,
  kind: live.kind,
  preview: live.preview,
  entered: live.entered,
  ...(live.replaces !== undefined ? { replaces: live.replaces } : {}),
  fates: live.fates,
  ...(left ? { left } : {}),
  ...(live.erased ? { erased: live.erased } : {}),
});

/** Events that replace the entry list or the summary; every other memory-changing event only appends items or facts. */
const replacesVisibleEntries = (event: SessionEvent): boolean =>
  event.type === 'memory.compacted' ||
  event.type === 'memory.edited' ||
  event.type === 'memory.restored' ||
  event.type === 'memory.cleared' ||
  event.type === 'memory.summary-set' ||
  event.type === 'memory.noted' ||
  event.type === 'session.rewound';

const checkStep = (name: string, value: number | undefined): void => {
  if (value !== undefined && (!Number.isInteger(value) || value < 0)) throw new InvalidOptionsError('the audit', [{ path: name, message: `must be a non-negative integer, got ${String(value)}` }]);
};

/** The totals as the audit counts them. */
type Totals = { -readonly [K in keyof AuditTotals]: number };

/**
 * Memory as the audit reads it. Events that only append items or facts (nearly all of a session) go into two
 * incremental folds: one of memory (looked at only when a compaction, restore, clear or summary replaces it) and one of
 * the appends alone, whose items are registered as live when the next step, replacement or the end needs them.
 * `visible` holds the live items in memory's order, so that a step's fates are matched by position. Applying every
 * event through the reducer and comparing memory before and after it cost time in proportion to memory for every event.
 */
interface MemoryRead {
  /** Memory as of the last replacement, or of the last catch-up (`catchUpMemory`). */
  state: MemoryState;
  fold: ReturnType<typeof createMemoryFold>;
  foldDirty: boolean;
  appends: ReturnType<typeof createMemoryFold>;
  readonly appendedBy: Map<number, { eventType: SessionEvent['type']; step: number | undefined }>;
  /** The marks `log.erase` left, by seq: an item is erased when the event it came from was (or, scrubbed of copies, names it). */
  readonly erasedMarks: Map<number, NonNullable<SessionEvent['erased']>>;
  /** The items in memory, by id; an item's record is yielded when it leaves or at the end. */
  readonly live: Map<string, LiveItem>;
  visible: (LiveItem | undefined)[];
}

/** What the audit's stages share while it reads the log: its options, the steps read so far, memory as read, the totals. */
interface AuditRead {
  readonly sessionId: string;
  readonly options: AuditOptions;
  readonly head: number;
  /** The reported steps (`fromStep`, `toStep`), open-ended when not given. */
  readonly from: number;
  readonly to: number;
  readonly accounting: SessionAccounting;
  readonly approvals: ReturnType<typeof createApprovalAudit>;
  readonly totals: Totals;
  /** A step's record waits for its model call's answer, so that it carries the call's usage and cost. */
  pending: StepAudit | undefined;
  /** The step `step.started` last opened. */
  currentStep: number | undefined;
  /** The step of the last compaction (a step's record says whether memory was compacted in it). */
  compactedInStep: number | undefined;
  /** The last projected step: a fate span goes on only across consecutive projected steps. */
  previousStep: number | undefined;
  /** Numbers the projections of older events that recorded no step. */
  ordinal: number;
  lastSeq: number;
  /** The tokenizer the last projection named (approx until one does), to count memory's tokens. */
  tokenizer: Tokenizer;
  /** Each projected step's seq, so a rewind can name the steps it went back over. */
  readonly projectedSteps: { seq: number; step: number }[];
  readonly memory: MemoryRead;
}

/** Whether the audit covers the whole session (no `fromStep`, no `toStep`). */
const auditsAll = (options: AuditOptions): boolean => options.fromStep === undefined && options.toStep === undefined;

const inRange = (a: AuditRead, step: number | undefined): boolean => step !== undefined && step >= a.from && step <= a.to;

const countItem = (totals: Totals, item: LiveItem): void => {
  if (item.everCleared) totals.itemsCleared += 1;
  if (item.everTrimmed) totals.itemsTrimmed += 1;
  if (item.everDropped) totals.itemsDropped += 1;
};

const reported = (options: AuditOptions, item: LiveItem): boolean => auditsAll(options) || item.fates.length > 0 || item.touchedInRange;

/** `{ step }`: the event's own step, else the step being read, else none. */
const stepOf = (own: number | undefined, current: number | undefined): { step?: number } => (own !== undefined ? { step: own } : current !== undefined ? { step: current } : {});

const erasureOf = (memory: MemoryRead, id: string): ItemAudit['erased'] | undefined => {
  const mark = memory.erasedMarks.get(Number(id.slice(0, id.indexOf(':'))));
  if (!mark || (mark.copy === true && !(mark.items ?? []).includes(id))) return undefined;
  return { seq: mark.seq, at: mark.at, reason: mark.reason, ...(mark.by !== undefined ? { by: mark.by } : {}) };
};

/** A memory entry that entered, as a live item with no fate yet. */
const liveItem = (memory: MemoryRead, entry: MemoryEntry, kind: string, entered: LiveItem['entered'], touchedInRange: boolean, replaces?: string): LiveItem => {
  const erased = erasureOf(memory, entry.id);
  return {
    id: entry.id,
    item: entry.item,
    kind,
    preview: previewOf(entry.item),
    entered,
    ...(replaces !== undefined ? { replaces } : {}),
    ...(erased ? { erased } : {}),
    fates: [],
    everCleared: false,
    everTrimmed: false,
    everDropped: false,
    touchedInRange,
  };
};

/** Start: the options checked, the session's head read (an unknown session is an AuditError), nothing read yet. */
const startAudit = async (log: SessionEventLog, sessionId: string, options: AuditOptions): Promise<AuditRead> => {
  checkStep('fromStep', options.fromStep);
  checkStep('toStep', options.toStep);
  const accounting = new SessionAccounting(options.prices !== undefined ? parsePriceTable(options.prices) : undefined);
  const head = await log.head(sessionId);
  if (head === 0) throw new AuditError(sessionId, 'no such session in the log');
  return {
    sessionId, options, head, from: options.fromStep ?? -Infinity, to: options.toStep ?? Infinity, accounting, approvals: createApprovalAudit(),
    totals: {
      events: 0, steps: 0, compactions: 0, itemsEntered: 0, itemsLeft: 0,
      itemsCleared: 0, itemsTrimmed: 0, itemsDropped: 0, tokensSavedByProjection: 0, tokensSavedByCompaction: 0,
    },
    pending: undefined, currentStep: undefined, compactedInStep: undefined, previousStep: undefined, ordinal: 0, lastSeq: 0, tokenizer: approxTokenizer, projectedSteps: [],
    memory: {
      state: initialMemoryState, fold: createMemoryFold(initialMemoryState), foldDirty: false, appends: createMemoryFold(initialMemoryState),
      appendedBy: new Map(), erasedMarks: new Map(), live: new Map(), visible: [],
    },
  };
};

/** Every event: its erasure mark kept, the approvals told, counted, and the progress told every 1,000 seqs. */
const countEvent = (a: AuditRead, event: SessionEvent): void => {
  if (event.erased !== undefined) a.memory.erasedMarks.set(event.seq, event.erased);
  a.approvals.add(event);
  a.lastSeq = event.seq;
  a.totals.events += 1;
  if (a.options.onProgress && event.seq % 1000 === 0) a.options.onProgress(event.seq, a.head);
};

/** The record of a recall, a working-memory edit (the block's size before it from memory before it) or a rewind. */
const factRecordOf = (a: AuditRead, event: SessionEvent): AuditRecord | undefined => {
  if (event.type === 'memory.recalled') {
    return {
      kind: 'recall',
      recall: {
        seq: event.seq,
        ...(event.step !== undefined ? { step: event.step } : {}),
        ids: event.ids,
        ...(event.query !== undefined ? { query: event.query } : {}),
        ...(event.callId !== undefined ? { callId: event.callId } : {}),
      },
    };
  }
  if (event.type === 'memory.noted') {
    const previous = a.memory.state.blocks.find((b) => b.name === event.block);
    return {
      kind: 'note',
      note: {
        seq: event.seq,
        ...stepOf(event.step, a.currentStep),
        block: event.block,
        chars: event.text.length,
        previousChars: previous?.text.length ?? 0,
        ...(event.callId !== undefined ? { callId: event.callId } : {}),
      },
    };
  }
  if (event.type === 'session.rewound') {
    const steps = a.projectedSteps.filter((p) => p.seq > event.toSeq).map((p) => p.step);
    return { kind: 'rewind', rewind: { seq: event.seq, toSeq: event.toSeq, ...(event.reason !== undefined ? { reason: event.reason } : {}), steps } };
  }
  return undefined;
};

/** The items the appends since the last look brought into memory, registered as live (after the others, in memory's order). */
const registerAppended = (a: AuditRead): void => {
  const memory = a.memory;
  if (memory.appendedBy.size === 0) return;
  for (const entry of memory.appends.result().entries) {
    const seq = Number(entry.id.slice(0, entry.id.indexOf(':')));
    const origin = memory.appendedBy.get(seq);
    if (!origin) throw new AuditError(a.sessionId, `memory holds an item ${JSON.stringify(entry.id)} that no event read appended`);
    a.totals.itemsEntered += 1;
    const entered = { seq, eventType: origin.eventType, ...(origin.step !== undefined ? { step: origin.step } : {}) };
    const item = liveItem(memory, entry, kindOf(entry.item, false), entered, inRange(a, origin.step));
    memory.live.set(entry.id, item);
    memory.visible.push(item);
  }
  memory.appends = createMemoryFold(initialMemoryState);
  memory.appendedBy.clear();
};

/** The waiting step's record, with its call's account (then released); none when no step waits. */
const takePending = (a: AuditRead): AuditRecord | undefined => {
  const step = a.pending;
  if (!step) return undefined;
  const account = a.accounting.step(step.step);
  a.accounting.release(step.step);
  a.pending = undefined;
  return { kind: 'step', step: account ? { ...step, account } : step };
};

/** A projection's step (its own, or numbered for older events), kept for rewinds; the tokenizer it names counts from now on. */
const projectedStepOf = (a: AuditRead, event: SessionEventOf<'context.projected'>): number => {
  const step = event.step ?? ++a.ordinal;
  a.projectedSteps.push({ seq: event.seq, step });
  if (event.tokenizer) a.tokenizer = tokenizerFromName(event.tokenizer) ?? a.tokenizer;
  return step;
};

const visibleTokens = (visible: readonly (LiveItem | undefined)[], counter: Tokenizer): number => {
  let total = 0;
  for (const item of visible) if (item) total += itemTokenCount(item.item, counter);
  return total;
};

/** A projected step's record: each item's fate added to its spans (matched by position in memory), the fates counted, memory's tokens against those sent. */
const stepRecordOf = (a: AuditRead, event: SessionEventOf<'context.projected'>, step: number, compacted: boolean): StepAudit => {
  const { visible, state } = a.memory;
  let runs;
  try {
    runs = decodeFateRuns(event.fateRuns);
    // fatesOf says why the runs do not cover memory.
    if (runs.reduce((n, run) => n + run.count, 0) !== visible.length) fatesOf(event, visible.map((item) => item?.id ?? ''));
  } catch (error) {
    throw new AuditError(a.sessionId, `context.projected does not fit memory: ${(error as Error).message}`, event.seq);
  }
  const counts = { kept: 0, cleared: 0, trimmed: 0, dropped: 0 };
  for (const { start, count, fate, rule } of runs) {
    counts[fate] += count;
    for (let index = start; index < start + count; index++) {
      const item = visible[index];
      if (!item) continue;
      if (fate === 'cleared') item.everCleared = true;
      else if (fate === 'trimmed') item.everTrimmed = true;
      else if (fate === 'dropped') item.everDropped = true;
      const last = item.fates[item.fates.length - 1];
      if (last && last.fate === fate && last.rule === rule && last.toStep === a.previousStep) {
        // The live item's own span (no one has seen it yet: an item's record is yielded when it leaves or at the end).
        last.toStep = step;
      } else {
        item.fates.push({ fromStep: step, toStep: step, fate, rule });
      }
    }
  }
  // A span goes on only across consecutive projected steps.
  a.totals.steps += 1;
  a.previousStep = step;
  const report = event.report;
  // The projection counts all of memory only when it had to; otherwise count it here (per-item counts are memoized).
  const memoryTokens =
    report.sourceTokens ?? (report.projectedTokens !== undefined ? visibleTokens(visible, a.tokenizer) : undefined);
  if (memoryTokens !== undefined && report.projectedTokens !== undefined) {
    a.totals.tokensSavedByProjection += Math.max(0, memoryTokens - report.projectedTokens);
  }
  return {
    step,
    seq: event.seq,
    ...(event.runId !== undefined ? { runId: event.runId } : {}),
    memory: { items: visible.length, ...(memoryTokens !== undefined ? { tokens: memoryTokens } : {}) },
    sent: { items: visible.length - counts.dropped, ...(report.projectedTokens !== undefined ? { tokens: report.projectedTokens } : {}) },
    budget: event.budget,
    fates: counts,
    notes: report.notes,
    compacted,
    digest: event.digest,
    ...(state.blocks.length > 0 && state.blocksId !== null
      ? {
          workingMemory: {
            id: state.blocksId,
            blocks: state.blocks.map((b) => ({
              name: b.name,
              text: b.text,
              chars: b.text.length,
              ...(b.maxChars !== undefined ? { maxChars: b.maxChars } : {}),
              ...(b.description !== undefined ? { description: b.description } : {}),
            })),
          },
        }
      : {}),
  };
};

/** A projected step: its call accounted over memory as it is; in range, its record waits for the call's answer, else the previous step's account is released. */
const openStep = (a: AuditRead, event: SessionEventOf<'context.projected'>, step: number): void => {
  a.accounting.projected(step, event, a.memory.visible, a.tokenizer);
  if (inRange(a, step)) a.pending = stepRecordOf(a, event, step, a.compactedInStep === step);
  else a.accounting.release(step - 1);
};

/** The model's answer: accounted; the record of the step that waited for it goes out. */
const answeredStep = (a: AuditRead, event: SessionEventOf<'model.responded'>): AuditRecord | undefined => {
  a.accounting.responded(event, a.tokenizer);
  return a.pending && a.pending.step === (event.step ?? a.pending.step) ? takePending(a) : undefined;
};

/** An event that only appends items or facts: into both folds, its items registered when next needed. */
const appendToMemory = (a: AuditRead, event: SessionEvent): void => {
  a.memory.fold.add(event);
  a.memory.foldDirty = true;
  a.memory.appends.add(event);
  a.memory.appendedBy.set(event.seq, { eventType: event.type, step: a.currentStep });
};

const catchUpMemory = (memory: MemoryRead): void => {
  if (!memory.foldDirty) return;
  memory.state = memory.fold.result();
  memory.foldDirty = false;
};

/** An event that replaces memory's entries or summary, with memory's visible entries before and after it. */
interface Replacement {
  readonly event: SessionEvent;
  readonly before: readonly MemoryEntry[];
  readonly next: MemoryState;
  readonly after: readonly MemoryEntry[];
  /** The placeholder written for each item a compaction or edit replaced, by the replaced item's id. */
  readonly placeholders: ReadonlyMap<string, string>;
}

const replacementOf = (state: MemoryState, event: SessionEvent): Replacement => {
  const before = visibleEntries(state);
  const next = memoryReducer(state, event);
  const after = visibleEntries(next);
  const placeholders = new Map<string, string>();
  if (event.type === 'memory.compacted' || event.type === 'memory.edited') {
    (event.layout ?? []).forEach((slot, i) => {
      if ('item' in slot && slot.replaces !== undefined) placeholders.set(slot.replaces, `${event.seq}:${i}`);
    });
  }
  return { event, before, next, after, placeholders };
};

/** The items a replacement took out of memory: no longer live, counted, and reported with how they left. */
function* itemsThatLeft(a: AuditRead, { event, before, next, after, placeholders }: Replacement): Generator<AuditRecord> {
  const afterIds = new Set(after.map((e) => e.id));
  const summaryId = next.summaryId !== a.memory.state.summaryId && next.summaryId !== null ? next.summaryId : undefined;
  for (const entry of before) {
    if (afterIds.has(entry.id)) continue;
    const item = a.memory.live.get(entry.id);
    if (!item) continue;
    a.memory.live.delete(entry.id);
    a.totals.itemsLeft += 1;
    countItem(a.totals, item);
    const exit = exitOf(event, a.currentStep, summaryId, placeholders.get(entry.id));
    if (inRange(a, a.currentStep)) item.touchedInRange = true;
    if (reported(a.options, item)) yield { kind: 'item', item: toItemAudit(item, exit) };
  }
}

/** The items a replacement put into memory (a summary, placeholders, working memory, restored items), live from its seq. */
const itemsThatEntered = (a: AuditRead, { event, before, next, after }: Replacement): void => {
  const beforeIds = new Set(before.map((e) => e.id));
  for (const entry of after) {
    if (beforeIds.has(entry.id)) continue;
    a.totals.itemsEntered += 1;
    const replaces = event.type === 'memory.compacted' || event.type === 'memory.edited' ? replacesOf(event.layout ?? [], entry.id) : undefined;
    const kind = entry.id === next.blocksId ? 'working memory' : kindOf(entry.item, entry.id === next.summaryId);
    const entered = { seq: event.seq, eventType: event.type, ...(a.currentStep !== undefined ? { step: a.currentStep } : {}) };
    a.memory.live.set(entry.id, liveItem(a.memory, entry, kind, entered, inRange(a, a.currentStep), replaces));
  }
};

/** A compaction: counted, and its record (when in range) with items and tokens before and after and its own model calls. */
const compactionRecordOf = (a: AuditRead, event: SessionEventOf<'memory.compacted'>, { before, next, after, placeholders }: Replacement): AuditRecord | undefined => {
  a.totals.compactions += 1;
  const tokens = event.tokens
    ? { ...event.tokens, recorded: true }
    : { before: tokensOf(before, a.tokenizer), after: tokensOf(after, a.tokenizer), tokenizer: a.tokenizer.name, recorded: false };
  a.totals.tokensSavedByCompaction += tokens.before - tokens.after;
  a.compactedInStep = event.step ?? a.currentStep;
  if (!(auditsAll(a.options) || inRange(a, event.step ?? a.currentStep))) return undefined;
  return {
    kind: 'compaction',
    compaction: {
      seq: event.seq,
      ...stepOf(event.step, a.currentStep),
      trigger: event.trigger,
      policy: event.policy.name,
      items: { before: before.length, after: after.length },
      tokens,
      kept: event.keptIds.length,
      dropped: event.droppedIds.length,
      placeholders: placeholders.size,
      ...(next.summaryId !== null ? { summaryId: next.summaryId } : {}),
      ...accountOf(a.accounting.compacted(event)),
    },
  };
};

/**
 * A compaction, edit, restore, clear, summary, note or rewind: the appends registered and the waiting step sent first,
 * memory caught up and replaced; the items that left are reported, those that entered are live, a compaction is reported.
 */
function* replaceMemory(a: AuditRead, event: SessionEvent): Generator<AuditRecord> {
  registerAppended(a);
  const waiting = takePending(a);
  if (waiting) yield waiting;
  catchUpMemory(a.memory);
  const replacement = replacementOf(a.memory.state, event);
  yield* itemsThatLeft(a, replacement);
  itemsThatEntered(a, replacement);
  const compaction = event.type === 'memory.compacted' ? compactionRecordOf(a, event, replacement) : undefined;
  if (compaction) yield compaction;
  a.memory.state = replacement.next;
  a.memory.fold = createMemoryFold(replacement.next);
  a.memory.visible = replacement.after.map((entry) => a.memory.live.get(entry.id));
}

/**
 * One event read: counted; then its records in log order (a recall, note or rewind; the previous step's when a
 * projection or replacement comes, or its answer); memory folded. False when it opens a step past `toStep`.
 * A generator rather than a list of records, so that a record goes out before what comes later in the same event runs
 * (or throws); a synchronous one, as nothing in it waits (an async one would add promises to every event read).
 */
function* auditEvent(a: AuditRead, event: SessionEvent): Generator<AuditRecord, boolean> {
  countEvent(a, event);
  if (event.type === 'step.started') {
    if (event.step > a.to) return false;
    a.currentStep = event.step;
  }
  const fact = factRecordOf(a, event);
  if (fact) yield fact;
  if (event.type === 'context.projected') {
    const step = projectedStepOf(a, event);
    if (step > a.to) return false;
    registerAppended(a);
    const waiting = takePending(a);
    if (waiting) yield waiting;
    openStep(a, event, step);
  }
  if (event.type === 'model.requested') a.accounting.requested(event, a.tokenizer);
  const answered = event.type === 'model.responded' ? answeredStep(a, event) : undefined;
  if (answered) yield answered;
  if (!changesMemory(event)) return true;
  if (replacesVisibleEntries(event)) yield* replaceMemory(a, event);
  else appendToMemory(a, event);
  return true;
}

/** End: the last step's record, the items still in memory, the approvals (in range), then the totals. */
function* endAudit(a: AuditRead): Generator<AuditRecord> {
  const waiting = takePending(a);
  if (waiting) yield waiting;
  registerAppended(a);
  for (const item of a.memory.live.values()) {
    countItem(a.totals, item);
    if (reported(a.options, item)) yield { kind: 'item', item: toItemAudit(item, undefined) };
  }
  for (const approval of a.approvals.result()) if (inRange(a, approval.step) || auditsAll(a.options)) yield { kind: 'approval', approval };
  yield { kind: 'end', totals: { ...a.totals }, headSeq: a.lastSeq, account: a.accounting.totals() };
}

/**
 * Streams a session's audit: a record per projected step and per compaction as they are read, and a record per
 * item when it leaves memory (the rest at the end). Memory use is bounded by what memory holds, not by the
 * session's length. Works on sessions written by earlier event versions (they are read through the upcasters).
 * @example for await (const r of streamAudit(log, id)) if (r.kind === 'item' && r.item.left) console.log(r.item.id, r.item.left.eventType)
 */
export async function* streamAudit(log: SessionEventLog, sessionId: string, options: AuditOptions = {}): AsyncGenerator<AuditRecord> {
  const a = await startAudit(log, sessionId, options);
  for await (const event of log.read(sessionId)) {
    if (!(yield* auditEvent(a, event))) break;
  }
  yield* endAudit(a);
}

const accountOf = (account: CompactionAccount | undefined): { account?: CompactionAccount } => (account ? { account } : {});

const replacesOf = (layout: SessionEventOf<'memory.compacted'>['layout'], id: string): string | undefined => {
  const index = Number(id.slice(id.indexOf(':') + 1));
  const slot = layout[index];
  return slot && 'item' in slot ? slot.replaces : undefined;
};

const exitOf = (event: SessionEvent, step: number | undefined, summaryId: string | undefined, placeholderId: string | undefined): ItemExit => {
  const base = { seq: event.seq, ...(step !== undefined ? { step } : {}) };
  switch (event.type) {
    case 'memory.compacted':
      return {
        ...base,
        eventType: 'memory.compacted',
        ...(event.step !== undefined ? { step: event.step } : {}),
        trigger: event.trigger,
        policy: event.policy.name,
        ...(summaryId !== undefined ? { summaryId } : {}),
        ...(placeholderId !== undefined ? { placeholderId } : {}),
      };
    case 'memory.edited':
      return { ...base, eventType: 'memory.edited', ...(placeholderId !== undefined ? { placeholderId } : {}) };
    case 'memory.restored':
      return { ...base, eventType: 'memory.restored' };
    case 'memory.cleared':
      return { ...base, eventType: 'memory.cleared' };
    case 'memory.noted':
      return { ...base, eventType: 'memory.noted' };
    case 'session.rewound':
      return { ...base, eventType: 'session.rewound' };
    default:
      // Only the summary leaves by memory.summary-set (a new summary replaces it).
      return { ...base, eventType: 'memory.summary-set', ...(summaryId !== undefined ? { summaryId } : {}) };
  }
};

/**
 * The audit of a session, collected: per step (items and tokens in memory and sent, fate counts), per
 * compaction (items and tokens before and after), and every item's life. For very long sessions prefer
 * {@link streamAudit}, which holds only what memory holds.
 * @example const audit = await auditSession(log, 'session-1', { fromStep: 10, toStep: 20 }); audit.steps[0].sent.tokens
 */
export const auditSession = async (log: SessionEventLog, sessionId: string, options: AuditOptions = {}): Promise<SessionAudit> => {
  const steps: StepAudit[] = [];
  const compactions: CompactionAudit[] = [];
  const items: ItemAudit[] = [];
  const approvals: ApprovalAudit[] = [];
  const notes: NoteAudit[] = [];
  const recalls: RecallAudit[] = [];
  const rewinds: RewindAudit[] = [];
  let end: { totals: AuditTotals; headSeq: number; account: AccountTotals } | undefined;
  for await (const record of streamAudit(log, sessionId, options)) {
    if (record.kind === 'step') steps.push(record.step);
    else if (record.kind === 'compaction') compactions.push(record.compaction);
    else if (record.kind === 'item') items.push(record.item);
    else if (record.kind === 'approval') approvals.push(record.approval);
    else if (record.kind === 'note') notes.push(record.note);
    else if (record.kind === 'recall') recalls.push(record.recall);
    else if (record.kind === 'rewind') rewinds.push(record.rewind);
    else end = record;
  }
  items.sort((a, b) => a.entered.seq - b.entered.seq || Number(a.id.split(':')[1]) - Number(b.id.split(':')[1]));
  const withRecalls = items.map((item) => withRecallsOf(item, recalls));
  const marked = steps.map((step) => {
    const by = rewinds.find((r) => step.seq > r.toSeq && step.seq < r.seq);
    return by ? { ...step, rewound: { bySeq: by.seq } } : step;
  });
  return { sessionId, headSeq: end?.headSeq ?? 0, steps: marked, compactions, items: withRecalls, approvals, totals: end!.totals, notes, recalls, rewinds, account: end!.account };
};

/**
 * One item's life: when it entered, its fate at each step, when and how it left. Throws an AuditError when the
 * session never had an item with that id.
 * @example const life = await auditItem(log, 'session-1', '42:0'); life.left?.summaryId
 */
export const auditItem = async (log: SessionEventLog, sessionId: string, itemId: string): Promise<ItemAudit> => {
  let found: ItemAudit | undefined;
  const recalls: RecallAudit[] = [];
  // Read to the end: a recall usually comes after the item left memory.
  for await (const record of streamAudit(log, sessionId)) {
    if (record.kind === 'item' && record.item.id === itemId) found ??= record.item;
    else if (record.kind === 'recall' && record.recall.ids.includes(itemId)) recalls.push(record.recall);
  }
  if (!found) throw new AuditError(sessionId, `no item ${JSON.stringify(itemId)} ever entered memory`);
  return withRecallsOf(found, recalls);
};

/** An item's audit with the recalls that read it back (none: unchanged). */
const withRecallsOf = (item: ItemAudit, recalls: readonly RecallAudit[]): ItemAudit => {
  const mine = recalls
    .filter((r) => r.ids.includes(item.id))
    .map((r) => ({ seq: r.seq, ...(r.step !== undefined ? { step: r.step } : {}), ...(r.callId !== undefined ? { callId: r.callId } : {}) }));
  return mine.length > 0 ? { ...item, recalled: mine } : item;
};

/** One step's count of what was sent against what the provider said it received (`model.responded.usage.inputTokens`). */
export interface StepDrift {
  readonly step: number;
  /** The seq of its context.projected event. */
  readonly seq: number;
  readonly runId?: string;
  /** Tokens counted for the items sent (the projector's tokenizer). */
  readonly itemTokens: number;
  /** Tokens counted for the rest of the request (system prompt, tools, framing); 0 when the step budgeted its items only (before v3). */
  readonly overheadTokens: number;
  /** `itemTokens + overheadTokens`: the count of what was sent. */
  readonly countedTokens: number;
  /** What the provider reported, when it did. */
  readonly inputTokens?: number;
  /** `inputTokens − countedTokens` (positive: the count was short). */
  readonly drift?: number;
  /** `drift / countedTokens`. */
  readonly driftRatio?: number;
  /** The calibration margin the step kept (`calibrate`), when it kept one. */
  readonly marginTokens?: number;
}

/**
 * The drift of every projected step: the count of what was sent (items and, from `context.projected` v3, the request's
 * overhead) against the provider's `usage.inputTokens` of that step's `model.responded`. From the log alone; reads only.
 * `fromStep` / `toStep` narrow it (reading stops after `toStep`).
 * @example for (const d of await auditUsageDrift(log, 'task-42')) console.log(d.step, d.drift)
 */
export const auditUsageDrift = async (log: SessionEventLog, sessionId: string, options: Pick<AuditOptions, 'fromStep' | 'toStep'> = {}): Promise<StepDrift[]> => {
  await headOf(log, sessionId);
  const from = options.fromStep ?? 1;
  const to = options.toStep ?? Infinity;
  const out: StepDrift[] = [];
  let open: (StepDrift & { done?: boolean }) | undefined;
  let ordinal = 0;
  for await (const event of log.read(sessionId)) {
    if (event.type === 'context.projected') {
      const step = event.step ?? ++ordinal;
      if (step > to) break;
      const itemTokens = event.report.projectedTokens ?? 0;
      const overheadTokens = event.report.overheadTokens ?? 0;
      open = {
        step,
        seq: event.seq,
        ...(event.runId !== undefined ? { runId: event.runId } : {}),
        itemTokens,
        overheadTokens,
        countedTokens: itemTokens + overheadTokens,
        ...(event.request?.marginTokens !== undefined ? { marginTokens: event.request.marginTokens } : {}),
      };
      if (step >= from) out.push(open);
    } else if (event.type === 'model.responded' && open && !open.done && (event.step === undefined || event.step === open.step)) {
      open.done = true;
      const input = event.usage?.['inputTokens'];
      if (typeof input === 'number' && Number.isFinite(input) && out.at(-1) === open) {
        const drift = input - open.countedTokens;
        out[out.length - 1] = {
          ...open,
          inputTokens: input,
          drift,
          ...(open.countedTokens > 0 ? { driftRatio: drift / open.countedTokens } : {}),
        };
      }
    }
  }
  return out.map(({ done: _done, ...drift }: StepDrift & { done?: boolean }) => drift);
};
