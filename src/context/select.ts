// The limits, in order (maxItems, maxApproxChars, maxTokens), applied to whole tool-pair groups.
import type { FateRule } from '../events/index.js';
import type { NormalizedBudget } from './budget.js';
import { FLOOR_BLOCK, KnownCosts, LazyTokenCosts } from './measure/costs.js';
import type { BlockFloors, CostSource } from './measure/costs.js';
import { ITEM_TOKEN_OVERHEAD, countWordStarts, shapeTexts } from './measure/items.js';
import type { MemoryItem } from '../items/index.js';
import type { GroupChains } from './tool-pairs.js';

/** The rules that drop an item, by the code a selection records for it (0: not dropped). */
export const DROP_RULES: readonly (FateRule | undefined)[] = [undefined, 'maxItems', 'maxApproxChars', 'maxTokens', 'pairing'];
const MAX_ITEMS = 1;
const PAIRING = 4;
const codeOfRule = (rule: FateRule): number => {
  const code = DROP_RULES.indexOf(rule);
  return code > 0 ? code : MAX_ITEMS;
};

/** Which items survive the limits, and why the others were dropped. */
export interface Selection {
  /** 1 for each index that is kept. */
  readonly kept: Uint8Array;
  /** The rule that dropped each index that is not kept, as its code in {@link DROP_RULES} (0 for a kept index). */
  readonly dropRules: Uint8Array;
  /** How many items were dropped with rule `pairing`. */
  readonly pairingDrops: number;
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
  /** Each source item's count of non-empty texts of the commonest shapes (measure.ts, shapeTexts), when known. */
  readonly shapes?: Uint8Array;
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
  shapes: Uint8Array | undefined,
  cost: CostSource,
  from: number,
  to: number,
  room: number,
  alive: Uint8Array,
  selected: Uint8Array,
  decided: Uint8Array,
): void => {
  if (cost instanceof LazyTokenCosts) {
    fillLazily(groups, shapes, cost, from, to, room, alive, selected, decided);
    return;
  }
  const floor = cost.floor;
  const blocks = cost instanceof KnownCosts ? cost.blocks : undefined;
  const skipping = blocks !== undefined && blocks.seen;
  const fullEnd = alive.length - (alive.length % FLOOR_BLOCK);
  const entered: number[] = [];
  for (let i = from; i >= to && room > 0 && room >= floor; i--) {
    if (skipping && (i & (FLOOR_BLOCK - 1)) === FLOOR_BLOCK - 1 && (i = pastSkippedBlocks(blocks, i, room, fullEnd, entered)) < to) break;
    greedyLooks += 1;
    if (alive[i] !== 1 || selected[i] === 1) continue;
    const root = groups.groupOf(i);
    if (decided[root] === 1) continue;
    decided[root] = 1;
    const price = groupCost(groups, cost, i, room);
    if (price <= room) room -= takeGroup(groups, i, selected, price);
  }
  if (blocks !== undefined) {
    const values = (cost as KnownCosts).values;
    for (const block of entered) blocks.floor[block] = blockFloorOf(groups, block, (m) => values[m] as number);
    blocks.seen = true;
  }
};

/**
 * {@link fillFromNewest} with tokens counted lazily, the same decisions. On a long history that does not fit, most
 * groups are old ones asked with the few tokens left at the end: each is set aside here by what its members are
 * known to cost at least, or by their shapes (4 tokens per item and one per non-empty text, no text read), or, for
 * a plain message, by its first words, all in this one loop over plain arrays: a first projection runs it over every
 * item before the engine has compiled anything, where a function call per item costs more than the work it does.
 * The rest is asked as {@link groupCost} asks it.
 */
const fillLazily = (
  groups: GroupChains,
  sourceShapes: Uint8Array | undefined,
  cost: LazyTokenCosts,
  from: number,
  to: number,
  room: number,
  alive: Uint8Array,
  selected: Uint8Array,
  decided: Uint8Array,
): void => {
  const { roots, sizes, nexts } = groups;
  const { items, rewritten, bounded } = cost;
  // The shapes are those of the source items: of no use where a tier rewrote an item.
  const shapes = rewritten === undefined ? sourceShapes : undefined;
  const { exact, atLeast, lower, blocks } = cost.knowledge;
  // Whole blocks of items that cost more than the room left are skipped by their floors (BlockFloors), known from the
  // second selection over these source items on; the blocks looked at get their floors afterwards.
  const skipping = rewritten === undefined && blocks.seen;
  const fullEnd = items.length - (items.length % FLOOR_BLOCK);
  const entered: number[] = [];
  for (let i = from; i >= to && room >= ITEM_TOKEN_OVERHEAD; i--) {
    if (skipping && (i & (FLOOR_BLOCK - 1)) === FLOOR_BLOCK - 1 && (i = pastSkippedBlocks(blocks, i, room, fullEnd, entered)) < to) break;
    greedyLooks += 1;
    if (alive[i] !== 1 || selected[i] === 1) continue;
    const root = roots === undefined ? i : (roots[i] as number);
    if (decided[root] === 1) continue;
    decided[root] = 1;
    // The group's floor from its members' shapes (itemTokenFloor): 4 tokens per item, and for an OpenAI BPE encoding
    // one per non-empty text of the commonest shapes. No text is read.
    let floor = 0;
    for (let m = root; m !== -1 && floor <= room; m = nexts === undefined ? -1 : (nexts[m] as number)) {
      floor += ITEM_TOKEN_OVERHEAD;
      if (bounded) floor += shapes !== undefined ? (shapes[m] as number) : shapeTexts(items[m] as MemoryItem);
    }
    if (floor > room) continue;
    // Then from what this history knows of its members (counted or bounded by earlier projections), as floorOf.
    floor = 0;
    for (let m = root; m !== -1 && floor <= room; m = nexts === undefined ? -1 : (nexts[m] as number)) {
      let known = 0;
      if (rewritten === undefined || rewritten[m] === 0) {
        known = exact[m] as number;
        if (known === 0) {
          const proven = atLeast[m] as number;
          const fixed = lower[m] as number;
          known = proven > fixed ? proven : fixed;
        }
      }
      floor += known > ITEM_TOKEN_OVERHEAD ? known : ITEM_TOKEN_OVERHEAD;
    }
    if (floor > room) continue;
    // A plain message alone, not measured yet, with little room: its first words (found by string search) usually
    // show it does not fit, as LazyTokenCosts.within would find them, and recorded the same way.
    if (bounded && root === i && (sizes === undefined || sizes[i] === 1) && (rewritten === undefined || rewritten[i] === 0) && exact[i] === 0 && lower[i] === 0) {
      const item = items[i] as Record<string, unknown> & MemoryItem;
      const content = item.type === 'message' && item['tool_calls'] === undefined ? item['content'] : undefined;
      const cap = room - ITEM_TOKEN_OVERHEAD;
      if (typeof content === 'string' && cap < content.length >> 3) {
        const words = countWordStarts(content, cap);
        if (words > cap) {
          atLeast[i] = ITEM_TOKEN_OVERHEAD + words;
          continue;
        }
      }
    }
    const price = groupCost(groups, cost, i, room);
    if (price <= room) room -= takeGroup(groups, i, selected, price);
  }
  if (rewritten === undefined) {
    for (const block of entered) blocks.floor[block] = blockFloorOf(groups, block, (m) => itemFloorOf(cost, shapes, m));
    blocks.seen = true;
  }
};

let greedyLooks = 0;
let blockSkips = 0;
/** How many blocks of items the lazy greedy has skipped by their floors in this process: a work count for tests. */
export const greedyBlockSkipCount = (): number => blockSkips;
/** How many items the lazy greedy has looked at in this process (one per item it did not skip by its block): a work count for tests. */
export const greedyLookCount = (): number => greedyLooks;

/** log2 of {@link FLOOR_BLOCK}. */
const FLOOR_BLOCK_BITS = Math.log2(FLOOR_BLOCK);

/**
 * From `i`, the top item of a block, down past every whole block (below `fullEnd`) whose floor is above `room`: the
 * index to look at next (the top of a block entered, recorded in `entered`, or of a partial one, or below 0).
 */
const pastSkippedBlocks = (blocks: BlockFloors, i: number, room: number, fullEnd: number, entered: number[]): number => {
  while (i >= 0 && i < fullEnd) {
    const block = i >> FLOOR_BLOCK_BITS;
    if ((blocks.floor[block] as number) <= room) {
      entered.push(block);
      break;
    }
    blockSkips += 1;
    i -= FLOOR_BLOCK;
  }
  return i;
};

/**
 * The least source item `m` is known to cost: its exact count, else the larger of what it was proven to cost at least
 * and its lower bound, never less than its shape's floor (4 tokens, and one per non-empty text for an OpenAI BPE encoding).
 */
const itemFloorOf = (cost: LazyTokenCosts, shapes: Uint8Array | undefined, m: number): number => {
  const { exact, atLeast, lower } = cost.knowledge;
  const known = exact[m] as number;
  if (known !== 0) return known;
  const proven = atLeast[m] as number;
  const fixed = lower[m] as number;
  const floor = proven > fixed ? proven : fixed;
  const shape = ITEM_TOKEN_OVERHEAD + (cost.bounded ? (shapes !== undefined ? (shapes[m] as number) : shapeTexts(cost.items[m] as MemoryItem)) : 0);
  return shape > floor ? shape : floor;
};

/**
 * The least a group with a member in `block` is known to cost: the known costs of its members (`costOf`: exact, or a
 * lower bound) summed over its group, as a call is sent with its output. What is known of an item only grows, and a
 * group only gains members as the history grows, so the floor stays a lower bound (decision 0039).
 */
const blockFloorOf = (groups: GroupChains, block: number, costOf: (member: number) => number): number => {
  const { roots, nexts } = groups;
  let least = Infinity;
  for (let m = block * FLOOR_BLOCK, end = m + FLOOR_BLOCK; m < end; m++) {
    let floor = 0;
    if (roots === undefined || nexts === undefined) floor = costOf(m);
    else for (let x = roots[m] as number; x !== -1 && floor < least; x = nexts[x] as number) floor += costOf(x);
    if (floor < least) least = floor;
  }
  return least;
};

/**
 * Drops, for `rule` (its code), every item still alive that is not selected; returns how many. When every item is
 * still alive (the first limit that drops), with the engine's array builtins rather than a loop over every item.
 */
const dropUnselected = (alive: Uint8Array, selected: Uint8Array, dropRules: Uint8Array, rule: number, allAlive: boolean): number => {
  const n = alive.length;
  if (allAlive) {
    let kept = 0;
    dropRules.fill(rule);
    for (let i = selected.indexOf(1); i !== -1; i = selected.indexOf(1, i + 1)) {
      dropRules[i] = 0;
      kept += 1;
    }
    alive.set(selected);
    return n - kept;
  }
  let dropped = 0;
  for (let i = 0; i < n; i++) {
    if (alive[i] === 1 && selected[i] !== 1) {
      alive[i] = 0;
      dropRules[i] = rule;
      dropped += 1;
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
export const selectItems = ({ count: n, groups, shapes, budget, chars, tokens, users = [] }: SelectionInput): Selection => {
  const { maxItems, maxApproxChars, maxTokens, evictionStep: step } = budget;
  const pinnedEnd = Math.min(budget.pinnedPrefixItems, n, maxItems);
  const alive = new Uint8Array(n).fill(1);
  const dropRules = new Uint8Array(n);
  // Whether no limit has dropped anything yet, and how many items were dropped to keep pairs together.
  let allAlive = true;
  let pairingDrops = 0;

  const drop = (selected: Uint8Array, ruleOf: (index: number) => FateRule): boolean => {
    let dropped = false;
    for (let i = 0; i < n; i++) {
      if (alive[i] === 1 && selected[i] !== 1) {
        alive[i] = 0;
        const code = codeOfRule(ruleOf(i));
        dropRules[i] = code;
        if (code === PAIRING) pairingDrops += 1;
        dropped = true;
      }
    }
    if (dropped) allAlive = false;
    return dropped;
  };
  const dropAllUnselected = (selected: Uint8Array, rule: FateRule): boolean => {
    const dropped = dropUnselected(alive, selected, dropRules, codeOfRule(rule), allAlive) > 0;
    if (dropped) allAlive = false;
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
    if (limit === 0) return dropAllUnselected(selected, rule);
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
      fillFromNewest(groups, shapes, cost, n - 1, pinnedEnd, room, alive, selected, decided);
      return dropAllUnselected(selected, rule);
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
  return { kept: alive, dropRules, pairingDrops, pinnedEnd, itemLimitApplied, characterLimitApplied, tokenLimitApplied, users: kept };
};
