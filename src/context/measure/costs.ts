// What the limits weigh items by: costs known up front (characters, cheap tokens) or counted lazily (exact tokens).
import { InternalError } from '../../base/errors.js';
import type { MemoryItem } from '../../items/index.js';
import { ITEM_TOKEN_OVERHEAD, fitsWhateverItHolds, itemTokenFloor, itemTokenLowerBound, itemTokenLowerBoundScan } from './items.js';
import type { ItemTokenMemo } from './items.js';

/**
 * The cost of each item of a projection, asked as the selection needs it. `lower` is fixed by the item (it
 * never depends on what has been counted before), so the questions a selection asks, and which counts it ends
 * up knowing, depend only on the items, the budget and the tokenizer.
 */
export interface CostSource {
  /** Whether every cost is known up front (an array of numbers), so asking costs nothing. */
  readonly upFront: boolean;
  /** No item costs less than this (the selection stops filling once the room left is below it). */
  readonly floor: number;
  /** A lower bound of item `i`'s cost, fixed by the item, that costs next to nothing to ask (no text is read). */
  floorOf(i: number): number;
  /** A lower bound of item `i`'s cost, fixed by the item. */
  lower(i: number): number;
  /** Item `i`'s exact cost if it is at most `bound`; otherwise any number above `bound`. */
  within(i: number, bound: number): number;
  /** Item `i`'s exact cost. */
  exact(i: number): number;
  /** Whether every item's exact cost has been asked for or found within a bound (then {@link total} is exact). */
  allKnown(): boolean;
  /** The sum of every item's exact cost; only when {@link allKnown}. */
  total(): number;
}

/** Costs that are all known: an array of numbers. */
export class KnownCosts implements CostSource {
  readonly upFront = true;
  readonly floor = 0;
  readonly values: ArrayLike<number>;
  private readonly sum: number;
  /** The floors of whole blocks of the history's source items, when `values` are theirs (no tier rewrote one). */
  readonly blocks: BlockFloors | undefined;

  constructor(values: ArrayLike<number>, sum: number, blocks?: BlockFloors) {
    this.values = values;
    this.sum = sum;
    this.blocks = blocks;
    blocks?.ensure(values.length);
  }
  floorOf(i: number): number {
    return this.values[i] as number;
  }
  lower(i: number): number {
    return this.values[i] as number;
  }
  within(i: number): number {
    return this.values[i] as number;
  }
  exact(i: number): number {
    return this.values[i] as number;
  }
  allKnown(): boolean {
    return true;
  }
  total(): number {
    return this.sum;
  }
}

/**
 * What one history knows of one tokenizer's counts, kept across projections: the exact count (0: not counted),
 * the item's fixed lower bound (0: not computed) and the best lower bound proven by an interrupted count or
 * scan (0: none). Every item costs at least {@link ITEM_TOKEN_OVERHEAD}, so 0 is never a count.
 */
/** How many items a block floor covers ({@link BlockFloors}; a power of two). */
export const FLOOR_BLOCK = 32;

/**
 * For each full block of {@link FLOOR_BLOCK} source items of one history, the least that a group with a member in the
 * block was known to cost when a greedy last looked at the whole block (0: not known). What is known of an item's cost
 * only grows and a group only gains members as the history grows, so a block's floor stays a lower bound of every
 * group in it: a greedy with less room left skips the block without looking at it (decision 0039).
 */
export class BlockFloors {
  floor = new Float64Array(1);
  /** Whether a selection has gone over these items once (the first projection does not pay for block floors). */
  seen = false;

  /** Makes room for the blocks of `n` items. */
  ensure(n: number): void {
    const blocks = Math.ceil(n / FLOOR_BLOCK);
    if (blocks <= this.floor.length) return;
    const grown = new Float64Array(Math.max(blocks, this.floor.length * 2));
    grown.set(this.floor);
    this.floor = grown;
  }
}

export class TokenKnowledge {
  exact = new Float64Array(16);
  lower = new Float64Array(16);
  atLeast = new Float64Array(16);
  /** The floors of whole blocks of these items, for the lazy greedy (select.ts, fillLazily). */
  readonly blocks = new BlockFloors();

  /** Makes room for `n` items (new entries unknown). */
  ensure(n: number): void {
    this.blocks.ensure(n);
    if (n <= this.exact.length) return;
    const size = Math.max(n, this.exact.length * 2);
    const grow = (from: Float64Array<ArrayBuffer>): Float64Array<ArrayBuffer> => {
      const to = new Float64Array(size);
      to.set(from);
      return to;
    };
    this.exact = grow(this.exact);
    this.lower = grow(this.lower);
    this.atLeast = grow(this.atLeast);
  }
}

/**
 * Token costs counted only where the selection decides: exact when an item's cost must be known (it is sent,
 * or it fits the room left), otherwise only far enough to show that it does not fit. Source items use the
 * history's {@link TokenKnowledge}; items rewritten by a tier use the tokenizer's per-item memo.
 */
export class LazyTokenCosts implements CostSource {
  readonly upFront = false;
  readonly floor = ITEM_TOKEN_OVERHEAD;
  // Read in place by the selection's greedy loop (select.ts, fillLazily), which asks them as floorOf and within do.
  readonly items: readonly MemoryItem[];
  readonly rewritten: Uint8Array | undefined;
  readonly knowledge: TokenKnowledge;
  private readonly memo: ItemTokenMemo;
  readonly bounded: boolean;
  private readonly known: Uint8Array;
  private knownCount = 0;

  /**
   * @param items the items the selection weighs (tier rewrites in place of their source)
   * @param rewritten non-zero where `items` holds a rewrite rather than the source item
   * @param bounded whether {@link itemTokenLowerBound} holds for the tokenizer (the OpenAI BPE encodings)
   */
  constructor(items: readonly MemoryItem[], rewritten: Uint8Array | undefined, knowledge: TokenKnowledge, memo: ItemTokenMemo, bounded: boolean) {
    this.items = items;
    this.rewritten = rewritten;
    this.knowledge = knowledge;
    this.memo = memo;
    this.bounded = bounded;
    this.known = new Uint8Array(items.length);
    knowledge.ensure(items.length);
  }

  private mark(i: number): void {
    if (this.known[i] === 0) {
      this.known[i] = 1;
      this.knownCount += 1;
    }
  }

  private isRewrite(i: number): boolean {
    return this.rewritten !== undefined && this.rewritten[i] !== 0;
  }

  private staticLower(item: MemoryItem): number {
    return this.bounded ? itemTokenLowerBound(item) : ITEM_TOKEN_OVERHEAD;
  }

  /** The exact count if this history or the per-item memo has it, else 0. */
  private cached(i: number): number {
    if (this.isRewrite(i)) return this.memo.known(this.items[i] as MemoryItem) ?? 0;
    const knowledge = this.knowledge;
    const hit = knowledge.exact[i] as number;
    if (hit !== 0) return hit;
    const remembered = this.memo.known(this.items[i] as MemoryItem);
    if (remembered === undefined) return 0;
    knowledge.exact[i] = remembered;
    return remembered;
  }

  floorOf(i: number): number {
    if (!this.isRewrite(i)) {
      const knowledge = this.knowledge;
      const known = knowledge.exact[i] as number;
      if (known !== 0) return known;
      const proven = Math.max(knowledge.atLeast[i] as number, knowledge.lower[i] as number);
      if (proven !== 0) return proven;
    }
    return this.bounded ? itemTokenFloor(this.items[i] as MemoryItem) : ITEM_TOKEN_OVERHEAD;
  }

  lower(i: number): number {
    const item = this.items[i] as MemoryItem;
    if (this.isRewrite(i)) return this.staticLower(item);
    const knowledge = this.knowledge;
    let lower = knowledge.lower[i] as number;
    if (lower === 0) {
      lower = this.staticLower(item);
      knowledge.lower[i] = lower;
    }
    return lower;
  }

  within(i: number, bound: number): number {
    const rewrite = this.isRewrite(i);
    const knowledge = this.knowledge;
    if (!rewrite) {
      // What this history knows answers first (no lookup in the per-item memo): a known count, or a bound
      // already above the question's (then the count is too, and the item is not marked either way).
      const known = knowledge.exact[i] as number;
      if (known !== 0) {
        if (known <= bound) this.mark(i);
        return known;
      }
      const atLeast = knowledge.atLeast[i] as number;
      if (atLeast > bound) return atLeast;
      const fixed = knowledge.lower[i] as number;
      if (fixed > bound) return fixed;
    }
    const item = this.items[i] as MemoryItem;
    if (this.bounded) {
      const floor = itemTokenFloor(item);
      if (floor > bound) {
        if (!rewrite && floor > (knowledge.atLeast[i] as number)) knowledge.atLeast[i] = floor;
        return floor;
      }
    }
    // The fixed lower bound, scanned only as far as the question needs. Scanned before any memo is asked: when it
    // settles the question (the item does not fit), what another history counted would not change the answer (a
    // count is only marked known when it fits), and an old item asked with the little room left is settled by the
    // first words of its text.
    let lower = rewrite ? 0 : (knowledge.lower[i] as number);
    // An item whose texts are short enough to fit whatever they hold (a BPE token covers at least one UTF-8 byte,
    // a UTF-16 unit is at most three) is counted at once: its lower bound would not settle anything.
    if (lower === 0 && !(this.bounded && fitsWhateverItHolds(item, bound))) {
      if (this.bounded) {
        const scanned = itemTokenLowerBoundScan(item, bound);
        if (scanned > bound) {
          if (!rewrite) knowledge.atLeast[i] = scanned;
          return scanned;
        }
        lower = scanned;
      } else lower = ITEM_TOKEN_OVERHEAD;
      if (!rewrite) knowledge.lower[i] = lower;
    }
    if (lower > bound) return lower;
    const cached = this.cached(i);
    if (cached !== 0) {
      if (cached <= bound) this.mark(i);
      return cached;
    }
    const memo = this.memo;
    const count = memo.within(item, bound);
    if (memo.lastWasExact) {
      if (!rewrite) knowledge.exact[i] = count;
      if (count <= bound) this.mark(i);
    } else if (!rewrite) {
      knowledge.atLeast[i] = count;
    }
    return count;
  }

  exact(i: number): number {
    this.mark(i);
    const cached = this.cached(i);
    if (cached !== 0) return cached;
    const count = this.memo.exact(this.items[i] as MemoryItem);
    if (!this.isRewrite(i)) this.knowledge.exact[i] = count;
    return count;
  }

  allKnown(): boolean {
    return this.knownCount === this.items.length;
  }

  total(): number {
    if (!this.allKnown()) throw new InternalError('LazyTokenCosts.total: not every count is known');
    let sum = 0;
    for (let i = 0; i < this.items.length; i++) sum += this.exact(i);
    return sum;
  }
}
