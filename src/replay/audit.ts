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

/**
 * Streams a session's audit: a record per projected step and per compaction as they are read, and a record per
 * item when it leaves memory (the rest at the end). Memory use is bounded by what memory holds, not by the
 * session's length. Works on sessions written by earlier event versions (they are read through the upcasters).
 * @example for await (const r of streamAudit(log, id)) if (r.kind === 'item' && r.item.left) console.log(r.item.id, r.item.left.eventType)
 */
export async function* streamAudit(log: SessionEventLog, sessionId: string, options: AuditOptions = {}): AsyncGenerator<AuditRecord> {
  checkStep('fromStep', options.fromStep);
  checkStep('toStep', options.toStep);
  const accounting = new SessionAccounting(options.prices !== undefined ? parsePriceTable(options.prices) : undefined);
  // A step's record waits for its model call's answer, so that it carries the call's usage and cost.
  let pending: StepAudit | undefined;
  const withAccount = (step: StepAudit): StepAudit => {
    const account = accounting.step(step.step);
    accounting.release(step.step);
    return account ? { ...step, account } : step;
  };
  const head = await log.head(sessionId);
  if (head === 0) throw new AuditError(sessionId, 'no such session in the log');
  const from = options.fromStep ?? -Infinity;
  const to = options.toStep ?? Infinity;
  const inRange = (step: number | undefined): boolean => step !== undefined && step >= from && step <= to;

  let state: MemoryState = initialMemoryState;
  const live = new Map<string, LiveItem>();
  let currentStep: number | undefined;
  let compactedInStep: number | undefined;
  let ordinal = 0;
  let lastSeq = 0;
  let previousStep: number | undefined;
  let tokenizer: Tokenizer = approxTokenizer;
  // Each projected step's seq, so a rewind can name the steps it went back over.
  const projectedSteps: { seq: number; step: number }[] = [];
  const totals = {
    events: 0, steps: 0, compactions: 0, itemsEntered: 0, itemsLeft: 0,
    itemsCleared: 0, itemsTrimmed: 0, itemsDropped: 0, tokensSavedByProjection: 0, tokensSavedByCompaction: 0,
  };
  const countItem = (item: LiveItem): void => {
    if (item.everCleared) totals.itemsCleared += 1;
    if (item.everTrimmed) totals.itemsTrimmed += 1;
    if (item.everDropped) totals.itemsDropped += 1;
  };
  const reported = (item: LiveItem): boolean => (options.fromStep === undefined && options.toStep === undefined) || item.fates.length > 0 || item.touchedInRange;

  // Events that only append items or facts (nearly all of a session) go into two incremental folds: one of memory
  // (looked at only when a compaction, restore, clear or summary replaces it) and one of the appends alone, whose items
  // are registered as live when the next step, replacement or the end needs them. `visible` holds the live items in
  // memory's order, so that a step's fates are matched by position. Applying every event through the reducer and
  // comparing memory before and after it cost time in proportion to memory for every event.
  let fold = createMemoryFold(state);
  let foldDirty = false;
  let appends = createMemoryFold(initialMemoryState);
  const appendedBy = new Map<number, { eventType: SessionEvent['type']; step: number | undefined }>();
  /** The marks `log.erase` left, by seq: an item is erased when the event it came from was (or, scrubbed of copies, names it). */
  const erasedMarks = new Map<number, NonNullable<SessionEvent['erased']>>();
  const erasureOf = (id: string): ItemAudit['erased'] | undefined => {
    const mark = erasedMarks.get(Number(id.slice(0, id.indexOf(':'))));
    if (!mark || (mark.copy === true && !(mark.items ?? []).includes(id))) return undefined;
    return { seq: mark.seq, at: mark.at, reason: mark.reason, ...(mark.by !== undefined ? { by: mark.by } : {}) };
  };
  let visible: (LiveItem | undefined)[] = [];
  const catchUpMemory = (): void => {
    if (!foldDirty) return;
    state = fold.result();
    foldDirty = false;
  };
  const registerAppended = (): void => {
    if (appendedBy.size === 0) return;
    for (const entry of appends.result().entries) {
      const seq = Number(entry.id.slice(0, entry.id.indexOf(':')));
      const origin = appendedBy.get(seq);
      if (!origin) throw new AuditError(sessionId, `memory holds an item ${JSON.stringify(entry.id)} that no event read appended`);
      totals.itemsEntered += 1;
      const item: LiveItem = {
        id: entry.id,
        item: entry.item,
        kind: kindOf(entry.item, false),
        preview: previewOf(entry.item),
        entered: { seq, eventType: origin.eventType, ...(origin.step !== undefined ? { step: origin.step } : {}) },
        ...(erasureOf(entry.id) ? { erased: erasureOf(entry.id) } : {}),
        fates: [],
        everCleared: false,
        everTrimmed: false,
        everDropped: false,
        touchedInRange: inRange(origin.step),
      };
      live.set(entry.id, item);
      visible.push(item);
    }
    appends = createMemoryFold(initialMemoryState);
    appendedBy.clear();
  };
  const visibleTokens = (counter: Tokenizer): number => {
    let total = 0;
    for (const item of visible) if (item) total += itemTokenCount(item.item, counter);
    return total;
  };

  const approvals = createApprovalAudit();
  for await (const event of log.read(sessionId)) {
    if (event.erased !== undefined) erasedMarks.set(event.seq, event.erased);
    approvals.add(event);
    lastSeq = event.seq;
    totals.events += 1;
    if (options.onProgress && event.seq % 1000 === 0) options.onProgress(event.seq, head);
    if (event.type === 'step.started') {
      if (event.step > to) break;
      currentStep = event.step;
    }
    if (event.type === 'memory.recalled') {
      yield {
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
      const previous = state.blocks.find((b) => b.name === event.block);
      yield {
        kind: 'note',
        note: {
          seq: event.seq,
          ...(event.step !== undefined ? { step: event.step } : currentStep !== undefined ? { step: currentStep } : {}),
          block: event.block,
          chars: event.text.length,
          previousChars: previous?.text.length ?? 0,
          ...(event.callId !== undefined ? { callId: event.callId } : {}),
        },
      };
    }
    if (event.type === 'session.rewound') {
      const steps = projectedSteps.filter((p) => p.seq > event.toSeq).map((p) => p.step);
      yield { kind: 'rewind', rewind: { seq: event.seq, toSeq: event.toSeq, ...(event.reason !== undefined ? { reason: event.reason } : {}), steps } };
    }
    if (event.type === 'context.projected') {
      const step = event.step ?? ++ordinal;
      projectedSteps.push({ seq: event.seq, step });
      if (event.tokenizer) tokenizer = tokenizerFromName(event.tokenizer) ?? tokenizer;
      if (step > to) break;
      registerAppended();
      if (pending) yield { kind: 'step', step: withAccount(pending) };
      pending = undefined;
      accounting.projected(step, event, visible, tokenizer);
      if (inRange(step)) pending = projectStep(sessionId, event, step, compactedInStep === step, totals);
      else accounting.release(step - 1);
    }
    if (event.type === 'model.requested') accounting.requested(event, tokenizer);
    if (event.type === 'model.responded') {
      accounting.responded(event, tokenizer);
      if (pending && pending.step === (event.step ?? pending.step)) yield { kind: 'step', step: withAccount(pending) };
      if (pending && pending.step === (event.step ?? pending.step)) pending = undefined;
    }
    if (!changesMemory(event)) continue;
    if (!replacesVisibleEntries(event)) {
      fold.add(event);
      foldDirty = true;
      appends.add(event);
      appendedBy.set(event.seq, { eventType: event.type, step: currentStep });
      continue;
    }
    registerAppended();
    if (pending) yield { kind: 'step', step: withAccount(pending) };
    pending = undefined;
    catchUpMemory();
    const before = visibleEntries(state);
    const next = memoryReducer(state, event);
    const after = visibleEntries(next);
    const afterIds = new Set(after.map((e) => e.id));
    const placeholders = new Map<string, string>();
    if (event.type === 'memory.compacted' || event.type === 'memory.edited') {
      (event.layout ?? []).forEach((slot, i) => {
        if ('item' in slot && slot.replaces !== undefined) placeholders.set(slot.replaces, `${event.seq}:${i}`);
      });
    }
    const summaryId = next.summaryId !== state.summaryId && next.summaryId !== null ? next.summaryId : undefined;
    for (const entry of before) {
      if (afterIds.has(entry.id)) continue;
      const item = live.get(entry.id);
      if (!item) continue;
      live.delete(entry.id);
      totals.itemsLeft += 1;
      countItem(item);
      const exit = exitOf(event, currentStep, summaryId, placeholders.get(entry.id));
      if (inRange(currentStep)) item.touchedInRange = true;
      if (reported(item)) yield { kind: 'item', item: toItemAudit(item, exit) };
    }
    const beforeIds = new Set(before.map((e) => e.id));
    for (const entry of after) {
      if (beforeIds.has(entry.id)) continue;
      totals.itemsEntered += 1;
      const replaces = event.type === 'memory.compacted' || event.type === 'memory.edited' ? replacesOf(event.layout ?? [], entry.id) : undefined;
      live.set(entry.id, {
        id: entry.id,
        item: entry.item,
        kind: entry.id === next.blocksId ? 'working memory' : kindOf(entry.item, entry.id === next.summaryId),
        preview: previewOf(entry.item),
        entered: { seq: event.seq, eventType: event.type, ...(currentStep !== undefined ? { step: currentStep } : {}) },
        ...(replaces !== undefined ? { replaces } : {}),
        ...(erasureOf(entry.id) ? { erased: erasureOf(entry.id) } : {}),
        fates: [],
        everCleared: false,
        everTrimmed: false,
        everDropped: false,
        touchedInRange: inRange(currentStep),
      });
    }
    if (event.type === 'memory.compacted') {
      totals.compactions += 1;
      const tokens = event.tokens
        ? { ...event.tokens, recorded: true }
        : { before: tokensOf(before, tokenizer), after: tokensOf(after, tokenizer), tokenizer: tokenizer.name, recorded: false };
      totals.tokensSavedByCompaction += tokens.before - tokens.after;
      compactedInStep = event.step ?? currentStep;
      if (options.fromStep === undefined && options.toStep === undefined ? true : inRange(event.step ?? currentStep)) {
        yield {
          kind: 'compaction',
          compaction: {
            seq: event.seq,
            ...(event.step !== undefined ? { step: event.step } : currentStep !== undefined ? { step: currentStep } : {}),
            trigger: event.trigger,
            policy: event.policy.name,
            items: { before: before.length, after: after.length },
            tokens,
            kept: event.keptIds.length,
            dropped: event.droppedIds.length,
            placeholders: placeholders.size,
            ...(next.summaryId !== null ? { summaryId: next.summaryId } : {}),
            ...accountOf(accounting.compacted(event)),
          },
        };
      }
    }
    state = next;
    fold = createMemoryFold(state);
    visible = after.map((entry) => live.get(entry.id));
  }
  if (pending) yield { kind: 'step', step: withAccount(pending) };
  registerAppended();
  for (const item of live.values()) {
    countItem(item);
    if (reported(item)) yield { kind: 'item', item: toItemAudit(item, undefined) };
  }
  for (const approval of approvals.result()) if (inRange(approval.step) || (options.fromStep === undefined && options.toStep === undefined)) yield { kind: 'approval', approval };
  yield { kind: 'end', totals: { ...totals }, headSeq: lastSeq, account: accounting.totals() };

  function projectStep(id: string, event: SessionEventOf<'context.projected'>, step: number, compacted: boolean, sums: typeof totals): StepAudit {
    let runs;
    try {
      runs = decodeFateRuns(event.fateRuns);
      // fatesOf says why the runs do not cover memory.
      if (runs.reduce((n, run) => n + run.count, 0) !== visible.length) fatesOf(event, visible.map((item) => item?.id ?? ''));
    } catch (error) {
      throw new AuditError(id, `context.projected does not fit memory: ${(error as Error).message}`, event.seq);
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
        if (last && last.fate === fate && last.rule === rule && last.toStep === previousStep) {
          // The live item's own span (no one has seen it yet: an item's record is yielded when it leaves or at the end).
          last.toStep = step;
        } else {
          item.fates.push({ fromStep: step, toStep: step, fate, rule });
        }
      }
    }
    // A span goes on only across consecutive projected steps.
    sums.steps += 1;
    previousStep = step;
    const report = event.report;
    // The projection counts all of memory only when it had to; otherwise count it here (per-item counts are memoized).
    const memoryTokens =
      report.sourceTokens ?? (report.projectedTokens !== undefined ? visibleTokens(tokenizer) : undefined);
    if (memoryTokens !== undefined && report.projectedTokens !== undefined) {
      sums.tokensSavedByProjection += Math.max(0, memoryTokens - report.projectedTokens);
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
  }
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
