// StructuredSummaryCompactPolicy: deterministic compaction that keeps what a projector keeps.
import { DefaultContextProjector, budgetLimit, parseContextBudget, type ContextBudget, type ContextProjector } from '../context/index.js';
import { InvalidOptionsError } from '../errors.js';
import type { ComponentDescription, MemorySnapshot } from '../events/index.js';
import { factLists } from './facts.js';
import { DEFAULT_MAX_SUMMARY_CHARS, keepNewestChars } from './text.js';
import { emptyCompactLists } from '../events/index.js';
import { objectWithMethods, parseOptions } from '../events/options.js';
import { StructuredSummaryOptionsSchema } from './options.js';
import type { CompactPolicy, CompactResult } from './types.js';

export interface StructuredSummaryOptions {
  /** Compact when items exceed this (default: the budget's `maxItems`). Keep it above maxItems so a session is not compacted at every step. */
  readonly compactAbove?: number;
  /** The carried previous summary is cut to this many characters, oldest text first (default 4,000). */
  readonly maxSummaryChars?: number;
}

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
  }

  shouldCompact(snapshot: MemorySnapshot | null | undefined): boolean {
    if (!snapshot || snapshot.items.length === 0 || this.compactAbove === undefined) return false;
    return snapshot.items.length > this.compactAbove;
  }

  compact(snapshot: MemorySnapshot): CompactResult {
    const items = snapshot?.items ?? [];
    const projection = this.projector.project(items, this.budget);
    const report = projection.report;
    const previous = snapshot?.summary?.trim() ? keepNewestChars(snapshot.summary, this.maxSummaryChars) : undefined;
    const lines = [SUMMARY_MARKER];
    if (previous !== undefined) lines.push('Existing summary:', previous);
    lines.push(
      `Context projection: ${report.projectedItemCount}/${report.sourceItemCount} items retained${report.droppedItemCount > 0 ? `, ${report.droppedItemCount} dropped` : ''}.`,
      'Preserved recent items should be treated as the authoritative working context.',
    );
    const summary = lines.join('\n');
    return {
      ...emptyCompactLists(),
      ...factLists(snapshot?.facts),
      readFiles: [...(snapshot?.readFiles ?? [])],
      modifiedFiles: [...(snapshot?.modifiedFiles ?? [])],
      summary,
      contextReport: report,
      memory: { items: projection.items, summary },
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
      },
    };
  }
}
