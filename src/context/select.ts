// The limits, in order (maxItems, maxApproxChars, maxTokens), applied to whole tool-pair groups.
import type { FateRule } from '../events/index.js';
import type { NormalizedBudget } from './budget.js';
import type { CostSource } from './costs.js';
import type { GroupChains } from './tool-pairs.js';

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
  readonly groups: GroupChains;
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

// The cost limits' loops, each a small function of its own: a first projection runs them over every item of a long
// history before the engine has compiled anything, and a small function is compiled (and its loop replaced by
// optimized code) sooner than one closure inside a large one.

/** A group's exact cost (`bound` Infinity), or its exact cost if at most `bound`, otherwise anything above it. */
const groupCost = (groups: GroupChains, cost: CostSource, index: number, bound: number): number => {
  if (groups.sizeOf(index) === 1) return bound === Infinity ? cost.exact(index) : cost.within(index, bound);
  const first = groups.firstOf(index);
  let sum = 0;
  if (bound === Infinity) {
    for (let m = first; m !== -1; m = groups.nextOf(m)) sum += cost.exact(m);
    return sum;
  }
  // What the members cost at least, from their shape alone: enough to set aside a group the room cannot hold (a
  // call and its output with the few tokens left at the end of a long history) without reading its texts.
  let floor = 0;
  for (let m = first; m !== -1; m = groups.nextOf(m)) floor += cost.floorOf(m);
  if (floor > bound) return floor;
  for (let m = first; m !== -1 && sum <= bound; m = groups.nextOf(m)) sum += cost.within(m, bound - sum);
  return sum;
};

/** Selects item `index` with its group; returns `price` (what the caller adds to what is used). */
const takeGroup = (groups: GroupChains, index: number, selected: Uint8Array, price: number): number => {
  if (groups.sizeOf(index) === 1) selected[index] = 1;
  else for (let m = groups.firstOf(index); m !== -1; m = groups.nextOf(m)) selected[m] = 1;
  return price;
};

/**
 * Greedy from the newest (evictionStep 1), from `from` down to `to`: a group that does not fit is skipped, an older
 * smaller one may still fit; once the room left is below the cheapest possible item, nothing older can fit.
 */
const fillFromNewest = (
  groups: GroupChains,
  cost: CostSource,
  from: number,
  to: number,
  room: number,
  alive: Uint8Array,
  selected: Uint8Array,
  decided: Uint8Array,
): void => {
  const floor = cost.floor;
  for (let i = from; i >= to && room > 0 && room >= floor; i--) {
    if (alive[i] !== 1 || selected[i] === 1) continue;
    const root = groups.groupOf(i);
    if (decided[root] === 1) continue;
    decided[root] = 1;
    const price = groupCost(groups, cost, i, room);
    if (price <= room) room -= takeGroup(groups, i, selected, price);
  }
};

/** Drops, for `rule`, every item still alive that is not selected; returns whether any was. */
const dropUnselected = (alive: Uint8Array, selected: Uint8Array, dropRules: Array<FateRule | undefined>, rule: FateRule): boolean => {
  let dropped = false;
  for (let i = 0; i < alive.length; i++) {
    if (alive[i] === 1 && selected[i] !== 1) {
      alive[i] = 0;
      dropRules[i] = rule;
      dropped = true;
    }
  }
  return dropped;
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
    if (limit === 0) return dropUnselected(alive, selected, dropRules, rule);
    // Costs known up front: whether everything fits is one pass. Counted lazily, the greedy below decides the same
    // (when everything fits it takes everything, counting each item once, as the check would) and counts no item
    // that the check would not: asking lower bounds first would only scan the newest items twice.
    if (cost.upFront && withinLimit(limit, cost, alive)) return false;

    let used = 0;
    // Always kept (and allowed over the limit): the first pinned item and the newest item, with their pairs.
    if (pinnedEnd >= 1 && alive[0] === 1) used += takeGroup(groups, 0, selected, groupCost(groups, cost, 0, Infinity));
    if (n > 0 && alive[n - 1] === 1 && selected[n - 1] !== 1) used += takeGroup(groups, n - 1, selected, groupCost(groups, cost, n - 1, Infinity));
    const decided = new Uint8Array(n);
    for (let i = 0; i < pinnedEnd; i++) {
      if (alive[i] !== 1 || selected[i] === 1 || decided[groups.groupOf(i)] === 1) continue;
      decided[groups.groupOf(i)] = 1;
      const price = groupCost(groups, cost, i, limit - used);
      if (used + price <= limit) used += takeGroup(groups, i, selected, price);
    }
    for (const u of users) {
      if (u < pinnedEnd || alive[u] !== 1 || selected[u] === 1 || decided[groups.groupOf(u)] === 1) continue;
      decided[groups.groupOf(u)] = 1;
      const price = groupCost(groups, cost, u, limit - used);
      if (used + price <= limit) used += takeGroup(groups, u, selected, price);
    }
    const room = limit - used;
    if (step === 1) {
      fillFromNewest(groups, cost, n - 1, pinnedEnd, room, alive, selected, decided);
      return dropUnselected(alive, selected, dropRules, rule);
    }
    // Cache-stable: a contiguous tail whose start is a multiple of the step from the first unpinned item.
    let start = n;
    let inWindow = 0;
    for (let i = n - 1; i >= pinnedEnd; i--) {
      if (alive[i] === 1 && selected[i] !== 1 && groups.groupOf(i) === i) {
        const price = groupCost(groups, cost, i, room - inWindow);
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
