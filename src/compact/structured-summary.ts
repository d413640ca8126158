// StructuredSummaryCompactPolicy: deterministic compaction that keeps what a projector keeps.
import { DefaultContextProjector, budgetLimit, parseContextBudget, type ContextBudget, type ContextProjector } from '../context/index.js';
import { InvalidOptionsError } from '../base/errors.js';
import type { ComponentDescription, MemorySnapshot } from '../events/index.js';
import { factLists } from './facts.js';
import { DEFAULT_MAX_SUMMARY_CHARS, keepNewestChars } from './text.js';
import { emptyCompactLists } from '../events/index.js';
import { objectWithMethods, parseOptions } from '../base/options.js';
import { StructuredSummaryOptionsSchema } from './options.js';
import { retainedUserMessages, type RetainUserMessages } from './retain.js';
import { compactTriggerOf } from './trigger.js';
import type { CompactContext, CompactPolicy, CompactReason, CompactResult } from './types.js';
import { isMessage, type MemoryItem } from '../items/index.js';

export interface StructuredSummaryOptions {
  /** Compact when items exceed this (default: the budget's `maxItems`). Keep it above maxItems so a session is not compacted at every step. */
  readonly compactAbove?: number;
  /** The carried previous summary is cut to this many characters, oldest text first (default 4,000). */
  readonly maxSummaryChars?: number;
  /** Compact when memory's tokens, or the provider's reported input tokens, exceed this. */
  readonly compactAboveTokens?: number;
  /** Keep at most this many tokens: the projection's budget gets `maxTokens` at most this (the projector keeps pairs together). */
  readonly keepTokens?: number;
  /** Keep the user's messages the projection drops as items (`{ maxChars }`: the newest within that many characters). */
  readonly retainUserMessages?: RetainUserMessages;
}

const EXISTING = 'Existing summary:';
const PRESERVED = 'Preserved recent items should be treated as the authoritative working context.';

/**
 * The budget with `maxTokens` lowered to `keepTokens`; a `reserveOutputTokens` that would leave nothing of it (which
 * `parseContextBudget` refuses) is left out, so the newest `keepTokens` are kept.
 */
const keepingTokens = (budget: ContextBudget, keepTokens: number): ContextBudget => {
  const { reserveOutputTokens, ...rest } = budget;
  return reserveOutputTokens !== undefined && reserveOutputTokens > 0 && reserveOutputTokens >= keepTokens ? { ...rest, maxTokens: keepTokens } : { ...budget, maxTokens: keepTokens };
};

/** A previous summary's lines without its own header: one that starts with the marker is folded in, never nested. */
const previousLines = (previous: string): string[] => {
  const lines = previous.split('\n');
  if (lines[0]?.trim() !== SUMMARY_MARKER) return lines;
  return lines.slice(1).filter((line) => line !== EXISTING && line !== PRESERVED);
};

export const SUMMARY_MARKER = 'AI4J_COMPACT_SUMMARY';

/**
 * Keeps what `projector.project(items, budget)` keeps and writes a marker summary; fills the
 * failed-command, test, approval, artifact and sandbox lists from the facts recorded in the log.
 * @example new StructuredSummaryCompactPolicy({ maxItems: 30, pinnedPrefixItems: 1 }, undefined, { compactAbove: 60 })
 */
export class StructuredSummaryCompactPolicy implements CompactPolicy {
  readonly budget: ContextBudget;
  readonly projector: ContextProjector;
  readonly compactAbove: number | undefined;
  readonly maxSummaryChars: number;
  readonly compactAboveTokens: number | undefined;
  readonly keepTokens: number | undefined;
  readonly retainUserMessages: RetainUserMessages | undefined;

  constructor(budget: ContextBudget = {}, projector?: ContextProjector, options: StructuredSummaryOptions = {}) {
    parseOptions(StructuredSummaryOptionsSchema, options, 'StructuredSummaryCompactPolicy');
    if (projector !== undefined) parseOptions(objectWithMethods('a ContextProjector', 'project', 'describe'), projector, 'StructuredSummaryCompactPolicy projector');
    this.budget = parseContextBudget(budget);
    this.projector = projector ?? new DefaultContextProjector();
    this.compactAbove = budgetLimit(options.compactAbove) ?? budgetLimit(this.budget.maxItems);
    const keep = budgetLimit(this.budget.maxItems);
    if (this.compactAbove !== undefined && keep !== undefined && this.compactAbove < keep) {
      throw new InvalidOptionsError('StructuredSummaryCompactPolicy', [{ path: 'compactAbove', message: `must be at least maxItems (${keep}), got ${this.compactAbove}` }]);
    }
    this.maxSummaryChars = options.maxSummaryChars ?? DEFAULT_MAX_SUMMARY_CHARS;
    this.compactAboveTokens = options.compactAboveTokens;
    this.keepTokens = options.keepTokens;
    this.retainUserMessages = options.retainUserMessages;
  }

  shouldCompact(snapshot: MemorySnapshot | null | undefined, context?: CompactContext): boolean {
    return this.compactTrigger(snapshot, context) !== undefined;
  }

  /** Items above `compactAbove`, or tokens / reported input tokens above `compactAboveTokens`. */
  compactTrigger(snapshot: MemorySnapshot | null | undefined, context?: CompactContext): CompactReason | undefined {
    return compactTriggerOf(
      { compactAbove: this.compactAbove, keepItems: budgetLimit(this.budget.maxItems), compactAboveTokens: this.compactAboveTokens, keepTokens: this.keepTokens },
      snapshot,
      context,
    );
  }

  compact(snapshot: MemorySnapshot): CompactResult {
    const items = snapshot?.items ?? [];
    const limit = budgetLimit(this.budget.maxTokens);
    const budget = this.keepTokens !== undefined && (limit === undefined || limit > this.keepTokens) ? keepingTokens(this.budget, this.keepTokens) : this.budget;
    const projection = this.projector.project(items, budget);
    const report = projection.report;
    const lines = [SUMMARY_MARKER];
    const seen = new Set<string>(lines);
    const add = (line: string): void => {
      if (seen.has(line)) return;
      seen.add(line);
      lines.push(line);
    };
    const previous = snapshot?.summary?.trim() ? keepNewestChars(previousLines(snapshot.summary).join('\n'), this.maxSummaryChars).split('\n') : [];
    if (previous.some((line) => line.trim() !== '')) {
      lines.push(EXISTING);
      for (const line of previous) add(line);
    }
    add(`Context projection: ${report.projectedItemCount}/${report.sourceItemCount} items retained${report.droppedItemCount > 0 ? `, ${report.droppedItemCount} dropped` : ''}.`);
    lines.push(PRESERVED);
    const summary = lines.join('\n');
    const kept = new Set<MemoryItem>(projection.items);
    const retained = retainedUserMessages(
      items.filter((item) => !kept.has(item)),
      this.retainUserMessages,
    );
    // Retained user messages go after the projection's leading system text, in their order.
    let lead = 0;
    while (lead < projection.items.length && isMessage(projection.items[lead]!) && ['system', 'developer'].includes((projection.items[lead] as { role: string }).role)) lead += 1;
    const memoryItems = retained.length > 0 ? [...projection.items.slice(0, lead), ...retained, ...projection.items.slice(lead)] : projection.items;
    return {
      ...emptyCompactLists(),
      ...factLists(snapshot?.facts),
      readFiles: [...(snapshot?.readFiles ?? [])],
      modifiedFiles: [...(snapshot?.modifiedFiles ?? [])],
      summary,
      contextReport: report,
      memory: { items: memoryItems, summary },
    };
  }

  describe(): ComponentDescription {
    return {
      name: 'StructuredSummaryCompactPolicy',
      settings: {
        budget: { ...this.budget },
        projector: this.projector.describe(),
        ...(this.compactAbove !== undefined ? { compactAbove: this.compactAbove } : {}),
        maxSummaryChars: this.maxSummaryChars,
        ...(this.compactAboveTokens !== undefined ? { compactAboveTokens: this.compactAboveTokens } : {}),
        ...(this.keepTokens !== undefined ? { keepTokens: this.keepTokens } : {}),
        ...(this.retainUserMessages !== undefined ? { retainUserMessages: this.retainUserMessages } : {}),
      },
    };
  }
}
