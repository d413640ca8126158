// The audit as it was first written, kept as a reference: every memory-changing event goes through the reducer and
// memory is compared before and after it. Simple and slow (time in proportion to memory for every event); the
// streaming audit in src/replay/audit.ts must yield exactly the same records.
import { InvalidOptionsError } from '../../src/base/errors.js';
import { approxTokenizer, itemTokenCount, tokenizerFromName, type Tokenizer } from '../../src/context/index.js';
import { fatesOf, type SessionEvent, type SessionEventOf } from '../../src/events/index.js';
import { textOf, type MemoryItem } from '../../src/items/index.js';
import type { SessionEventLog } from '../../src/log/index.js';
import { changesMemory, initialMemoryState, memoryReducer, visibleEntries, type MemoryEntry, type MemoryState } from '../../src/memory/index.js';
import { AuditError, type AuditOptions, type AuditRecord, type FateSpan, type ItemAudit, type ItemExit, type StepAudit } from '../../src/replay/index.js';

interface LiveItem {
  id: string;
  kind: string;
  preview: string;
  entered: { seq: number; eventType: SessionEvent['type']; step?: number };
  replaces?: string;
  fates: FateSpan[];
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
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 120 ? `${flat.slice(0, 119)}…` : flat;
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
});

const checkStep = (name: string, value: number | undefined): void => {
  if (value !== undefined && (!Number.isInteger(value) || value < 0)) throw new InvalidOptionsError('the audit', [{ path: name, message: `must be a non-negative integer, got ${String(value)}` }]);
};

/**
 * Streams a session's audit: a record per projected step and per compaction as they are read, and a record per
 * item when it leaves memory (the rest at the end). Memory use is bounded by what memory holds, not by the
 * session's length. Works on sessions written by earlier event versions (they are read through the upcasters).
 * @example for await (const r of streamAudit(log, id)) if (r.kind === 'item' && r.item.left) console.log(r.item.id, r.item.left.eventType)
 */
/** The audit's records without their cost and cache accounting (`account`), which the reference does not compute. */
export type ReferenceAuditRecord = Exclude<AuditRecord, { kind: 'end' }> | Omit<Extract<AuditRecord, { kind: 'end' }>, 'account'>;

export async function* referenceStreamAudit(log: SessionEventLog, sessionId: string, options: AuditOptions = {}): AsyncGenerator<ReferenceAuditRecord> {
  checkStep('fromStep', options.fromStep);
  checkStep('toStep', options.toStep);
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

  for await (const event of log.read(sessionId)) {
    lastSeq = event.seq;
    totals.events += 1;
    if (options.onProgress && event.seq % 1000 === 0) options.onProgress(event.seq, head);
    if (event.type === 'step.started') {
      if (event.step > to) break;
      currentStep = event.step;
    }
    if (event.type === 'context.projected') {
      const step = event.step ?? ++ordinal;
      if (event.tokenizer) tokenizer = tokenizerFromName(event.tokenizer) ?? tokenizer;
      if (step > to) break;
      if (inRange(step)) yield { kind: 'step', step: projectStep(sessionId, event, step, state, live, compactedInStep === step, totals) };
    }
    if (!changesMemory(event)) continue;
    const before = visibleEntries(state);
    const next = memoryReducer(state, event);
    const after = visibleEntries(next);
    const afterIds = new Set(after.map((e) => e.id));
    const placeholders = new Map<string, string>();
    if (event.type === 'memory.compacted') {
      event.layout.forEach((slot, i) => {
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
      const replaces = event.type === 'memory.compacted' ? replacesOf(event, entry.id) : undefined;
      live.set(entry.id, {
        id: entry.id,
        kind: kindOf(entry.item, entry.id === next.summaryId),
        preview: previewOf(entry.item),
        entered: { seq: event.seq, eventType: event.type, ...(currentStep !== undefined ? { step: currentStep } : {}) },
        ...(replaces !== undefined ? { replaces } : {}),
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
          },
        };
      }
    }
    state = next;
  }
  for (const item of live.values()) {
    countItem(item);
    if (reported(item)) yield { kind: 'item', item: toItemAudit(item, undefined) };
  }
  yield { kind: 'end', totals: { ...totals }, headSeq: lastSeq };

  function projectStep(
    id: string,
    event: SessionEventOf<'context.projected'>,
    step: number,
    memory: MemoryState,
    items: Map<string, LiveItem>,
    compacted: boolean,
    sums: typeof totals,
  ): StepAudit {
    const ids = visibleEntries(memory).map((e) => e.id);
    let fates;
    try {
      fates = fatesOf(event, ids);
    } catch (error) {
      throw new AuditError(id, `context.projected does not fit memory: ${(error as Error).message}`, event.seq);
    }
    const counts = { kept: 0, cleared: 0, trimmed: 0, dropped: 0 };
    for (const f of fates) {
      counts[f.fate] += 1;
      const item = items.get(f.id as string);
      if (!item) continue;
      if (f.fate === 'cleared') item.everCleared = true;
      if (f.fate === 'trimmed') item.everTrimmed = true;
      if (f.fate === 'dropped') item.everDropped = true;
      const last = item.fates.at(-1);
      if (last && last.fate === f.fate && last.rule === f.rule && last.toStep === previousStep) {
        item.fates[item.fates.length - 1] = { ...last, toStep: step };
      } else {
        item.fates.push({ fromStep: step, toStep: step, fate: f.fate, rule: f.rule });
      }
    }
    // A span goes on only across consecutive projected steps.
    sums.steps += 1;
    previousStep = step;
    const report = event.report;
    // The projection counts all of memory only when it had to; otherwise count it here (per-item counts are memoized).
    const memoryTokens =
      report.sourceTokens ?? (report.projectedTokens !== undefined ? tokensOf(visibleEntries(memory), tokenizer) : undefined);
    if (memoryTokens !== undefined && report.projectedTokens !== undefined) {
      sums.tokensSavedByProjection += Math.max(0, memoryTokens - report.projectedTokens);
    }
    return {
      step,
      seq: event.seq,
      ...(event.runId !== undefined ? { runId: event.runId } : {}),
      memory: { items: fates.length, ...(memoryTokens !== undefined ? { tokens: memoryTokens } : {}) },
      sent: { items: fates.length - counts.dropped, ...(report.projectedTokens !== undefined ? { tokens: report.projectedTokens } : {}) },
      budget: event.budget,
      fates: counts,
      notes: report.notes,
      compacted,
      digest: event.digest,
    };
  }
}

const replacesOf = (event: SessionEventOf<'memory.compacted'>, id: string): string | undefined => {
  const index = Number(id.slice(id.indexOf(':') + 1));
  const slot = event.layout[index];
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
    case 'memory.restored':
      return { ...base, eventType: 'memory.restored' };
    case 'memory.cleared':
      return { ...base, eventType: 'memory.cleared' };
    default:
      // Only the summary leaves by memory.summary-set (a new summary replaces it).
      return { ...base, eventType: 'memory.summary-set', ...(summaryId !== undefined ? { summaryId } : {}) };
  }
};
