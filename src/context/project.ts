// projectContext: tiers, limits and pairing over a list of items, with the report of what was kept and why.
import type { ContextReport, FateRule, ItemFate } from '../events/index.js';
import type { MemoryItem } from '../items/index.js';
import { normalizeBudget } from './budget.js';
import type { ContextBudget } from './budget.js';
import { itemApproxChars, itemTokenCounter } from './measure.js';
import { selectItems } from './select.js';
import { clearOldToolResults, trimOldReasoning } from './tiers.js';
import { approxTokenizer } from './tokenizer.js';
import type { Tokenizer } from './tokenizer.js';
import { toolPairGroups } from './tool-pairs.js';

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
  const countTokens = itemTokenCounter(options.tokenizer ?? approxTokenizer);
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

  const sourceChars = new Float64Array(n);
  const sourceTokenCounts = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const source = items[i] as MemoryItem;
    sourceChars[i] = itemApproxChars(source);
    sourceTokenCounts[i] = countTokens(source);
  }
  let chars = sourceChars;
  let tokens = sourceTokenCounts;
  if (rewritten) {
    chars = sourceChars.slice();
    tokens = sourceTokenCounts.slice();
    for (let i = 0; i < n; i++) {
      if (rewritten[i] === 0) continue;
      chars[i] = itemApproxChars(working[i] as MemoryItem);
      tokens[i] = countTokens(working[i] as MemoryItem);
    }
  }

  const selection = selectItems({ count: n, groups: toolPairGroups(items), budget: limits, chars, tokens });
  if (selection.itemLimitApplied) notes.push(`maxItems applied: ${limits.maxItems}`);
  if (selection.characterLimitApplied) notes.push(`maxApproxChars applied: ${limits.maxApproxChars}`);
  if (selection.tokenLimitApplied) notes.push(`maxTokens applied: ${limits.maxTokens}`);

  const projected: MemoryItem[] = [];
  const fates: ItemFate[] = new Array<ItemFate>(n);
  let sourceApproxChars = 0;
  let projectedApproxChars = 0;
  let sourceTokens = 0;
  let projectedTokens = 0;
  let pairingDrops = 0;
  for (let i = 0; i < n; i++) {
    sourceApproxChars += sourceChars[i] as number;
    sourceTokens += sourceTokenCounts[i] as number;
    if (selection.kept[i] !== 1) {
      const rule: FateRule = selection.dropRules[i] ?? 'maxItems';
      if (rule === 'pairing') pairingDrops += 1;
      fates[i] = { index: i, fate: 'dropped', rule };
      continue;
    }
    projected.push(working[i] as MemoryItem);
    projectedApproxChars += chars[i] as number;
    projectedTokens += tokens[i] as number;
    const mark = rewritten?.[i] ?? 0;
    fates[i] =
      mark === 1
        ? { index: i, fate: 'cleared', rule: 'tier1' }
        : mark === 2
          ? { index: i, fate: 'trimmed', rule: 'tier2' }
          : { index: i, fate: 'kept', rule: i < selection.pinnedEnd ? 'pinned' : 'tail' };
  }
  if (pairingDrops > 0) notes.push(`pairing: dropped ${pairingDrops} item(s) to keep tool calls with their results`);

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
      sourceTokens,
      projectedTokens,
      tokenLimitApplied: selection.tokenLimitApplied,
      fates,
    },
  };
};
