// The limits, in order (maxItems, maxApproxChars, maxTokens), applied to whole tool-pair groups.
import type { FateRule } from '../events/index.js';
import type { NormalizedBudget } from './budget.js';
import type { CostSource } from './costs.js';
import type { ToolPairGroups } from './tool-pairs.js';

/** Which items survive the limits, and why the others were dropped. */
export interface Selection {
  /** 1 for each index that is kept. */
  readonly kept: Uint8Array;
  /** The rule that dropped each index that is not kept. */
  readonly dropRules: ReadonlyArray<FateRule | undefined>;
  /** Items before this index are the effective pinned prefix. */
  readonly pinnedEnd: number;
  readonly itemLimitApplied: boolean;
  readonly characterLimitApplied: boolean;
  readonly tokenLimitApplied: boolean;
  /** 1 for each kept index that is one of the newest `keepUserMessages` user messages (rule `user`). */
  readonly users: Uint8Array | undefined;
}

export interface SelectionInput {
  readonly count: number;
  readonly groups: ToolPairGroups;
  readonly budget: NormalizedBudget;
  /** Approximate characters of each (possibly rewritten) item. */
  readonly chars: CostSource;
  /** Tokens of each (possibly rewritten) item, possibly counted lazily. */
  readonly tokens: CostSource;
  /** The indices of the user messages `keepUserMessages` keeps before the tail, newest first. */
  readonly users?: readonly number[];
}

/**
 * Whether the items still alive cost at most `limit` in total, asking as little as possible: lower bounds from
 * the newest item back until they alone pass the limit; if they never do, exact costs in place of the bounds,
 * each asked with the room the others' bounds leave, stopping at the first that does not fit. Exact when it
 * returns true (every alive item's cost was asked exactly).
 */
const withinLimit = (limit: number, cost: CostSource, alive: Uint8Array): boolean => {
  const n = alive.length;
  let bounds = 0;
  for (let i = n - 1; i >= 0; i--) {
    if (alive[i] !== 1) continue;
    bounds += cost.lower(i);
    if (bounds > limit) return false;
  }
  let total = bounds;
  for (let i = n - 1; i >= 0; i--) {
    if (alive[i] !== 1) continue;
    const lower = cost.lower(i);
    const others = total - lower;
    const price = cost.within(i, limit - others);
    total = others + price;
    if (total > limit) return false;
  }
  return true;
};

/** Rounds a tail start up to a multiple of `step` counted from `base`, without passing `end`. */
const roundTailStart = (start: number, base: number, step: number, end: number): number =>
  step > 1 && start < end ? Math.min(end, base + Math.ceil((start - base) / step) * step) : start;

/**
 * Applies maxItems, then maxApproxChars, then maxTokens. Each limit keeps or drops whole tool-pair groups, so
 * a call never loses its output; the pinned prefix comes first, then (for the character and token limits,
 * unconditionally) the first pinned item and the newest item with their groups, then the newest tail.
 * O(n) per limit. Costs are asked lazily (see {@link CostSource}): exactly for the items kept, and for the others
 * only as far as the decision needs; the outcome is the same as with every cost known.
 */
export const selectItems = ({ count: n, groups, budget, chars, tokens, users = [] }: SelectionInput): Selection => {
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
      for (const u of users) {
        if (u < pinnedEnd || selected[u] === 1 || dead[groups.groupOf(u)] === 1) continue;
        if (fits(u)) take(u);
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

  const applyCostLimit = (limit: number, cost: CostSource, rule: FateRule): boolean => {
    const selected = new Uint8Array(n);
    if (limit === 0) return drop(selected, () => rule);
    if (withinLimit(limit, cost, alive)) return false;

    // A group's exact cost, or (asked with a bound) its exact cost if at most the bound, else anything above it.
    let sum = 0;
    let groupBound = Infinity;
    const add = (m: number): void => {
      if (sum <= groupBound) sum += cost.within(m, groupBound - sum);
    };
    const groupCost = (index: number, bound: number): number => {
      if (groups.sizeOf(index) === 1) return bound === Infinity ? cost.exact(index) : cost.within(index, bound);
      sum = 0;
      groupBound = bound;
      if (bound === Infinity) {
        groups.forEachMember(index, (m) => {
          sum += cost.exact(m);
        });
      } else groups.forEachMember(index, add);
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
    if (pinnedEnd >= 1 && alive[0] === 1) take(0, groupCost(0, Infinity));
    if (n > 0 && alive[n - 1] === 1 && selected[n - 1] !== 1) take(n - 1, groupCost(n - 1, Infinity));
    const decided = new Uint8Array(n);
    for (let i = 0; i < pinnedEnd; i++) {
      if (alive[i] !== 1 || selected[i] === 1 || decided[groups.groupOf(i)] === 1) continue;
      decided[groups.groupOf(i)] = 1;
      const price = groupCost(i, limit - used);
      if (used + price <= limit) take(i, price);
    }
    for (const u of users) {
      if (u < pinnedEnd || alive[u] !== 1 || selected[u] === 1 || decided[groups.groupOf(u)] === 1) continue;
      decided[groups.groupOf(u)] = 1;
      const price = groupCost(u, limit - used);
      if (used + price <= limit) take(u, price);
    }
    let room = limit - used;
    let start = n;
    const floor = cost.floor;
    if (step === 1) {
      // Greedy from the newest: a group that does not fit is skipped, an older smaller one may still fit; once
      // the room left is below the cheapest possible item, nothing older can fit.
      for (let i = n - 1; i >= pinnedEnd && room > 0 && room >= floor; i--) {
        if (alive[i] !== 1 || selected[i] === 1 || decided[groups.groupOf(i)] === 1) continue;
        decided[groups.groupOf(i)] = 1;
        const price = groupCost(i, room);
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
        const price = groupCost(i, room - inWindow);
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
  let kept: Uint8Array | undefined;
  for (const u of users) {
    if (u < pinnedEnd || alive[u] !== 1) continue;
    kept ??= new Uint8Array(n);
    kept[u] = 1;
  }
  return { kept: alive, dropRules, pinnedEnd, itemLimitApplied, characterLimitApplied, tokenLimitApplied, users: kept };
};
