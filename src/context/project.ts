// projectContext: tiers, limits and pairing over a list of items, with the report of what was kept and why.
import type { ContextReport, FateRule, ItemFate } from '../events/index.js';
import type { MemoryItem } from '../items/index.js';
import { normalizeBudget } from './budget.js';
import type { ContextBudget } from './budget.js';
import { KnownCosts, LazyTokenCosts } from './costs.js';
import type { CostSource } from './costs.js';
import { historyOf } from './history.js';
import { hasBpeLowerBound, itemApproxChars, itemTokenCounter, itemTokenMemo } from './measure.js';
import { selectItems } from './select.js';
import { clearOldToolResults, trimOldReasoning } from './tiers.js';
import { approxTokenizer } from './tokenizer.js';
import type { Tokenizer } from './tokenizer.js';

/**
 * What the model is sent this turn, and the report of what was kept, rewritten and dropped.
 * @example const { items, report } = projector.project(memory.getItems(), budget);
 */
export interface ContextProjection {
  readonly items: readonly MemoryItem[];
  readonly report: ContextReport;
}

export interface ProjectContextOptions {
  /** Counts tokens for `maxTokens` and the report (default {@link approxTokenizer}). */
  readonly tokenizer?: Tokenizer;
  /** Run Tier-1 and Tier-2 when the budget asks for them (TypeAwareContextProjector). Default false. */
  readonly tiers?: boolean;
}

// Fates are interned: one frozen object per (index, fate, rule) for indices below INTERNED_FATES, shared by
// every report, so projecting a long history allocates one array of fates rather than an object per item.
const INTERNED_FATES = 1 << 17;
type FateTable = Array<ItemFate | undefined>;
const fateOf = (table: FateTable, index: number, fate: ItemFate['fate'], rule: FateRule): ItemFate => {
  if (index >= INTERNED_FATES) return { index, fate, rule };
  let interned = table[index];
  if (interned === undefined) {
    // Keep the table a dense array (no holes): pad with undefined up to the index.
    while (table.length < index) table.push(undefined);
    interned = Object.freeze({ index, fate, rule });
    table[index] = interned;
  }
  return interned;
};
const KEPT_TAIL: FateTable = [];
const KEPT_PINNED: FateTable = [];
const CLEARED: FateTable = [];
const TRIMMED: FateTable = [];
const DROPPED = new Map<FateRule, FateTable>();
const droppedTable = (rule: FateRule): FateTable => {
  let table = DROPPED.get(rule);
  if (!table) {
    table = [];
    DROPPED.set(rule, table);
  }
  return table;
};

/**
 * Projects `items` under `budget`: Tier-1 and Tier-2 rewrites (when `tiers`), then maxItems, maxApproxChars and
 * maxTokens, keeping tool calls with their outputs. Pure and synchronous; never mutates `items`.
 * @example projectContext(memory.getItems(), { maxItems: 20, pinnedPrefixItems: 1 }).report.notes // ['maxItems applied: 20']
 */
export const projectContext = (
  items: readonly MemoryItem[],
  budget?: ContextBudget,
  options: ProjectContextOptions = {},
): ContextProjection => {
  const limits = normalizeBudget(budget);
  const tokenizer = options.tokenizer ?? approxTokenizer;
  const n = items.length;
  const notes: string[] = [];

  let working: readonly MemoryItem[] = items;
  let rewritten: Uint8Array | undefined;
  if (options.tiers === true && (limits.maxRecentToolResults !== undefined || limits.trimOldReasoning)) {
    const copy = items.slice();
    const marks = new Uint8Array(n);
    let changed = false;
    if (limits.maxRecentToolResults !== undefined) {
      const keep = limits.maxRecentToolResults;
      const { count } = clearOldToolResults(items, copy, marks, keep, limits.evictionStep);
      if (count > 0) {
        notes.push(`tier1 microcompact: cleared ${count} old tool result(s), kept recent ${keep}`);
        changed = true;
      }
    }
    if (limits.trimOldReasoning) {
      const { count } = trimOldReasoning(items, copy, marks);
      if (count > 0) {
        notes.push(`tier2 reasoning-trim: cleared ${count} reasoning item(s)`);
        changed = true;
      }
    }
    if (changed) {
      working = copy;
      rewritten = marks;
    }
  }

  const history = historyOf(items);
  const charColumn = history.charColumn();
  const sourceChars = charColumn.values.subarray(0, n);
  const sourceApproxChars = charColumn.total;
  let chars = sourceChars;
  let workingChars = sourceApproxChars;
  if (rewritten) {
    chars = sourceChars.slice();
    workingChars = 0;
    for (let i = 0; i < n; i++) {
      if (rewritten[i] !== 0) chars[i] = itemApproxChars(working[i] as MemoryItem);
      workingChars += chars[i] as number;
    }
  }

  // Tokens: counted up front when counting is free (approxTokenizer), otherwise lazily, as the limits ask.
  let tokens: CostSource;
  let sourceTokens: () => number | undefined;
  if (tokenizer === approxTokenizer) {
    const countTokens = itemTokenCounter(tokenizer);
    const tokenColumn = history.tokenColumn(tokenizer);
    let values = tokenColumn.values.subarray(0, n);
    let total = tokenColumn.total;
    if (rewritten) {
      values = values.slice();
      total = 0;
      for (let i = 0; i < n; i++) {
        if (rewritten[i] !== 0) values[i] = countTokens(working[i] as MemoryItem);
        total += values[i] as number;
      }
    }
    tokens = new KnownCosts(values, total);
    const sourceTotal = tokenColumn.total;
    sourceTokens = () => sourceTotal;
  } else {
    const lazy = new LazyTokenCosts(working, rewritten, history.tokenKnowledge(tokenizer), itemTokenMemo(tokenizer), hasBpeLowerBound(tokenizer));
    tokens = lazy;
    // Only when every source item's count is known from this projection's own work (never estimated).
    sourceTokens = () => (rewritten === undefined && lazy.allKnown() ? lazy.total() : undefined);
  }

  const selection = selectItems({ count: n, groups: history.groups(), budget: limits, chars: new KnownCosts(chars, workingChars), tokens });
  if (selection.itemLimitApplied) notes.push(`maxItems applied: ${limits.maxItems}`);
  if (selection.characterLimitApplied) notes.push(`maxApproxChars applied: ${limits.maxApproxChars}`);
  if (selection.tokenLimitApplied) notes.push(`maxTokens applied: ${limits.maxTokens}`);

  const projected: MemoryItem[] = [];
  const fates: ItemFate[] = new Array<ItemFate>(n);
  let projectedApproxChars = 0;
  let projectedTokens = 0;
  let pairingDrops = 0;
  let droppedRule: FateRule | undefined;
  let dropped: FateTable = [];
  for (let i = 0; i < n; i++) {
    if (selection.kept[i] !== 1) {
      const rule: FateRule = selection.dropRules[i] ?? 'maxItems';
      if (rule === 'pairing') pairingDrops += 1;
      if (rule !== droppedRule) {
        droppedRule = rule;
        dropped = droppedTable(rule);
      }
      fates[i] = fateOf(dropped, i, 'dropped', rule);
      continue;
    }
    projected.push(working[i] as MemoryItem);
    projectedApproxChars += chars[i] as number;
    projectedTokens += tokens.exact(i);
    const mark = rewritten?.[i] ?? 0;
    fates[i] =
      mark === 1
        ? fateOf(CLEARED, i, 'cleared', 'tier1')
        : mark === 2
          ? fateOf(TRIMMED, i, 'trimmed', 'tier2')
          : i < selection.pinnedEnd
            ? fateOf(KEPT_PINNED, i, 'kept', 'pinned')
            : fateOf(KEPT_TAIL, i, 'kept', 'tail');
  }
  if (pairingDrops > 0) notes.push(`pairing: dropped ${pairingDrops} item(s) to keep tool calls with their results`);
  const sourceTokenCount = sourceTokens();

  return {
    items: projected,
    report: {
      sourceItemCount: n,
      projectedItemCount: projected.length,
      droppedItemCount: n - projected.length,
      sourceApproxChars,
      projectedApproxChars,
      itemLimitApplied: selection.itemLimitApplied,
      characterLimitApplied: selection.characterLimitApplied,
      notes,
      ...(sourceTokenCount === undefined ? {} : { sourceTokens: sourceTokenCount }),
      projectedTokens,
      tokenLimitApplied: selection.tokenLimitApplied,
      fates,
    },
  };
};
