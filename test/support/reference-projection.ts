// The projection algorithm as it was before lazy token counting (eager counts, every cost known): a test-only
// reference that the shipped projector must match item for item and fate for fate. Do not "fix" it: it is the
// record of the old behaviour (src/context/select.ts and project.ts at commit 54a11eb).
import type { ContextReport, FateRule, ItemFate } from '../../src/events/index.js';
import type { MemoryItem } from '../../src/items/index.js';
import { approxTokenizer, itemApproxChars, itemTokenCount, toolPairGroups } from '../../src/context/index.js';
import type { ContextBudget, ContextProjection, Tokenizer, ToolPairGroups } from '../../src/context/index.js';
import { normalizeBudget } from '../../src/context/budget.js';
import type { NormalizedBudget } from '../../src/context/budget.js';
import { clearOldToolResults, tier1Notes, trimOldReasoning } from '../../src/context/tiers.js';

/** Which items survive the limits, and why the others were dropped. */
interface Selection {
  /** 1 for each index that is kept. */
  readonly kept: Uint8Array;
  /** The rule that dropped each index that is not kept. */
  readonly dropRules: ReadonlyArray<FateRule | undefined>;
  /** Items before this index are the effective pinned prefix. */
  readonly pinnedEnd: number;
  readonly itemLimitApplied: boolean;
  readonly characterLimitApplied: boolean;
  readonly tokenLimitApplied: boolean;
}

interface SelectionInput {
  readonly count: number;
  readonly groups: ToolPairGroups;
  readonly budget: NormalizedBudget;
  /** Approximate characters of each (possibly rewritten) item. */
  readonly chars: ArrayLike<number>;
  /** Tokens of each (possibly rewritten) item. */
  readonly tokens: ArrayLike<number>;
}

/** Rounds a tail start up to a multiple of `step` counted from `base`, without passing `end`. */
const roundTailStart = (start: number, base: number, step: number, end: number): number =>
  step > 1 && start < end ? Math.min(end, base + Math.ceil((start - base) / step) * step) : start;

/**
 * Applies maxItems, then maxApproxChars, then maxTokens. Each limit keeps or drops whole tool-pair groups, so
 * a call never loses its output; the pinned prefix comes first, then (for the character and token limits,
 * unconditionally) the first pinned item and the newest item with their groups, then the newest tail.
 * O(n) per limit.
 */
const selectItems = ({ count: n, groups, budget, chars, tokens }: SelectionInput): Selection => {
  const { maxItems, maxApproxChars, maxTokens, evictionStep: step } = budget;
  const pinnedEnd = Math.min(budget.pinnedPrefixItems, n, maxItems);
  const alive = new Uint8Array(n).fill(1);
  const dropRules: Array<FateRule | undefined> = new Array<FateRule | undefined>(n);

  const drop = (selected: Uint8Array, ruleOf: (index: number) => FateRule): boolean => {
    let dropped = false;
    for (let i = 0; i < n; i++) {
      if (alive[i] === 1 && selected[i] !== 1) {
        alive[i] = 0;
        dropRules[i] = ruleOf(i);
        dropped = true;
      }
    }
    return dropped;
  };

  const applyMaxItems = (limit: number): boolean => {
    const selected = new Uint8Array(n);
    const dead = new Uint8Array(n);
    let used = 0;
    const select = (m: number): void => {
      selected[m] = 1;
    };
    const fits = (index: number): boolean => used + groups.sizeOf(index) <= limit;
    const take = (index: number): void => {
      groups.forEachMember(index, select);
      used += groups.sizeOf(index);
    };
    for (let i = 0; i < pinnedEnd; i++) {
      if (selected[i] === 1 || dead[groups.groupOf(i)] === 1) continue;
      if (fits(i)) take(i);
      else dead[groups.groupOf(i)] = 1;
    }
    let start = n;
    let newestAloneWouldFit = false;
    if (pinnedEnd < limit && n > 0) {
      const newest = n - 1;
      if (selected[newest] !== 1 && dead[groups.groupOf(newest)] !== 1) {
        if (fits(newest)) take(newest);
        else {
          dead[groups.groupOf(newest)] = 1;
          newestAloneWouldFit = used + 1 <= limit;
        }
      }
      const room = limit - used;
      let inWindow = 0;
      for (let i = n - 1; i >= pinnedEnd; i--) {
        if (selected[i] !== 1 && groups.groupOf(i) === i && dead[i] !== 1) {
          const size = groups.sizeOf(i);
          if (inWindow + size > room) break;
          inWindow += size;
        }
        start = i;
      }
      start = roundTailStart(start, pinnedEnd, step, n);
      for (let i = start; i < n; i++) {
        const root = groups.groupOf(i);
        if (root >= start && dead[root] !== 1) selected[i] = 1;
      }
    }
    return drop(selected, (i) =>
      i < pinnedEnd || i >= start || (i === n - 1 && newestAloneWouldFit) ? 'pairing' : 'maxItems',
    );
  };

  const applyCostLimit = (limit: number, cost: ArrayLike<number>, rule: FateRule): boolean => {
    const selected = new Uint8Array(n);
    if (limit === 0) return drop(selected, () => rule);
    let total = 0;
    for (let i = 0; i < n; i++) if (alive[i] === 1) total += cost[i] as number;
    if (total <= limit) return false;

    let sum = 0;
    const add = (m: number): void => {
      sum += cost[m] as number;
    };
    const groupCost = (index: number): number => {
      if (groups.sizeOf(index) === 1) return cost[index] as number;
      sum = 0;
      groups.forEachMember(index, add);
      return sum;
    };
    const select = (m: number): void => {
      selected[m] = 1;
    };
    let used = 0;
    const take = (index: number, price: number): void => {
      if (groups.sizeOf(index) === 1) selected[index] = 1;
      else groups.forEachMember(index, select);
      used += price;
    };
    // Always kept (and allowed over the limit): the first pinned item and the newest item, with their pairs.
    if (pinnedEnd >= 1 && alive[0] === 1) take(0, groupCost(0));
    if (n > 0 && alive[n - 1] === 1 && selected[n - 1] !== 1) take(n - 1, groupCost(n - 1));
    const decided = new Uint8Array(n);
    for (let i = 0; i < pinnedEnd; i++) {
      if (alive[i] !== 1 || selected[i] === 1 || decided[groups.groupOf(i)] === 1) continue;
      decided[groups.groupOf(i)] = 1;
      const price = groupCost(i);
      if (used + price <= limit) take(i, price);
    }
    let room = limit - used;
    let start = n;
    if (step === 1) {
      // Greedy from the newest: a group that does not fit is skipped, an older smaller one may still fit.
      for (let i = n - 1; i >= pinnedEnd && room > 0; i--) {
        if (alive[i] !== 1 || selected[i] === 1 || decided[groups.groupOf(i)] === 1) continue;
        decided[groups.groupOf(i)] = 1;
        const price = groupCost(i);
        if (price <= room) {
          take(i, price);
          room -= price;
        }
      }
      return drop(selected, () => rule);
    }
    // Cache-stable: a contiguous tail whose start is a multiple of the step from the first unpinned item.
    let inWindow = 0;
    for (let i = n - 1; i >= pinnedEnd; i--) {
      if (alive[i] === 1 && selected[i] !== 1 && groups.groupOf(i) === i) {
        const price = groupCost(i);
        if (inWindow + price > room) break;
        inWindow += price;
      }
      start = i;
    }
    start = roundTailStart(start, pinnedEnd, step, n);
    for (let i = start; i < n; i++) if (alive[i] === 1 && groups.groupOf(i) >= start) selected[i] = 1;
    return drop(selected, (i) => (i >= start ? 'pairing' : rule));
  };

  const itemLimitApplied = maxItems < n ? applyMaxItems(maxItems) : false;
  const characterLimitApplied = Number.isFinite(maxApproxChars) ? applyCostLimit(maxApproxChars, chars, 'maxApproxChars') : false;
  const tokenLimitApplied = Number.isFinite(maxTokens) ? applyCostLimit(maxTokens, tokens, 'maxTokens') : false;
  return { kept: alive, dropRules, pinnedEnd, itemLimitApplied, characterLimitApplied, tokenLimitApplied };
};

/** The old projectContext: every item counted up front (so sourceTokens is always present), then the limits. */
export const referenceProjectContext = (
  items: readonly MemoryItem[],
  budget: ContextBudget | undefined,
  options: { readonly tokenizer?: Tokenizer; readonly tiers?: boolean } = {},
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
      // Tier-1 is shared with the shipped projector (its rules changed after 54a11eb; counting is what this reference checks).
      const outcome = clearOldToolResults(items, copy, marks, {
        keep: limits.maxRecentToolResults,
        step: limits.evictionStep,
        keepToolResultsOf: limits.keepToolResultsOf,
        clearToolInputs: limits.clearToolInputs,
        clearAtLeastTokens: limits.clearAtLeastTokens,
        clearAboveTokens: limits.clearAboveTokens,
        chars: itemApproxChars,
        tokens: (item) => itemTokenCount(item, tokenizer),
        tokensWithin: (item) => itemTokenCount(item, tokenizer),
      });
      notes.push(...tier1Notes(outcome, limits));
      if (outcome.count > 0 || outcome.short > 0) changed = true;
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
  const chars = working.map((item) => itemApproxChars(item));
  const tokens = working.map((item) => itemTokenCount(item, tokenizer));
  let sourceApproxChars = 0;
  let sourceTokens = 0;
  for (const item of items) {
    sourceApproxChars += itemApproxChars(item);
    sourceTokens += itemTokenCount(item, tokenizer);
  }
  const selection = selectItems({ count: n, groups: toolPairGroups(items), budget: limits, chars, tokens });
  if (selection.itemLimitApplied) notes.push(`maxItems applied: ${limits.maxItems}`);
  if (selection.characterLimitApplied) notes.push(`maxApproxChars applied: ${limits.maxApproxChars}`);
  if (selection.tokenLimitApplied) notes.push(`maxTokens applied: ${limits.maxTokens}`);
  const projected: MemoryItem[] = [];
  const fates: ItemFate[] = [];
  let projectedApproxChars = 0;
  let projectedTokens = 0;
  let pairingDrops = 0;
  for (let i = 0; i < n; i++) {
    if (selection.kept[i] !== 1) {
      const rule: FateRule = selection.dropRules[i] ?? 'maxItems';
      if (rule === 'pairing') pairingDrops += 1;
      fates.push({ index: i, fate: 'dropped', rule });
      continue;
    }
    projected.push(working[i] as MemoryItem);
    projectedApproxChars += chars[i] as number;
    projectedTokens += tokens[i] as number;
    const mark = rewritten?.[i] ?? 0;
    fates.push(
      mark === 1
        ? { index: i, fate: 'cleared', rule: 'tier1' }
        : mark === 2
          ? { index: i, fate: 'trimmed', rule: 'tier2' }
          : { index: i, fate: 'kept', rule: i < selection.pinnedEnd ? 'pinned' : mark === 3 ? 'tier1-short' : 'tail' },
    );
  }
  if (pairingDrops > 0) notes.push(`pairing: dropped ${pairingDrops} item(s) to keep tool calls with their results`);
  const report: ContextReport = {
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
  };
  return { items: projected, report };
};
