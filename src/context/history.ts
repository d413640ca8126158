// Per-history memo: what projectContext derives from each source item (tool pairing, characters, tokens, lazy token knowledge),
// kept for the last few lists of items seen with a given first item and extended when a list grows.
import { allFrozen, registerProjectionCache } from './caches.js';
import type { MemoryItem } from '../items/index.js';
import { BlockFloors, TokenKnowledge } from './measure/costs.js';
import { itemApproxChars, itemTokenCounter, shapeTexts } from './measure/items.js';
import type { Tokenizer } from './measure/tokenizer.js';
import { ToolPairing } from './tool-pairs.js';
import type { GroupChains, ToolPairGroups } from './tool-pairs.js';

/** Per-item costs of a history, filled in order, with their running total. */
class CostColumn {
  values = new Float64Array(16);
  filled = 0;
  total = 0;
  /** The floors of whole blocks of these items, for the greedy (select.ts, fillFromNewest). */
  readonly blocks = new BlockFloors();

  fill(items: readonly MemoryItem[], n: number, cost: (item: MemoryItem) => number): void {
    if (n > this.values.length) {
      const grown = new Float64Array(Math.max(n, this.values.length * 2));
      grown.set(this.values.subarray(0, this.filled));
      this.values = grown;
    }
    let total = this.total;
    for (let i = this.filled; i < n; i++) {
      const value = cost(items[i] as MemoryItem);
      this.values[i] = value;
      total += value;
    }
    this.total = total;
    this.filled = n;
  }
}

/**
 * What is derived from one list of source items. Everything here is a function of the identities of the items
 * (and, for tokens, of the tokenizer) only, as are the item-level memos it is built from: items are frozen and
 * keep their identity, so a history seen again, or grown by appending, reuses it.
 */
export class History {
  /** The items this entry describes, in order (a copy: the caller's array may change). */
  items: MemoryItem[] = [];
  private pairing: ToolPairing | undefined;
  /** Each item's count of non-empty texts of the commonest shapes (measure.ts, shapeTexts), for the first `shapesFilled`. */
  private shapes: Uint8Array = new Uint8Array(0);
  private shapesFilled = 0;
  private chars: CostColumn | undefined;
  private tokens: WeakMap<Tokenizer, CostColumn> | undefined;
  private knowledge: WeakMap<Tokenizer, TokenKnowledge> | undefined;

  /** Whether `items` starts with this entry's items (so the entry can be extended to it). */
  extendsTo(items: readonly MemoryItem[]): boolean {
    const known = this.items;
    const m = known.length;
    if (items.length < m) return false;
    for (let i = m - 1; i >= 0; i--) if (items[i] !== known[i]) return false;
    return true;
  }

  append(items: readonly MemoryItem[]): void {
    // A new entry copies the list at once (a first projection of a long history pays one copy, not a push per item).
    if (this.items.length === 0) this.items = items.slice();
    else for (let i = this.items.length; i < items.length; i++) this.items.push(items[i] as MemoryItem);
  }

  /** The tool pairing of the items, extended to the item count. */
  pairingOfItems(): ToolPairing {
    const pairing = (this.pairing ??= new ToolPairing());
    pairing.extend(this.items, this.items.length);
    return pairing;
  }

  /** The groups of the items, over the pairing's own arrays: valid until the history grows (see ToolPairing.groups). */
  groups(): GroupChains {
    return this.pairingOfItems().groups();
  }

  /**
   * The groups, and each item's count of non-empty texts of the commonest shapes (measure.ts, shapeTexts: what an
   * item costs at least in an OpenAI BPE encoding is 4 tokens plus that), read in the same pass over new items.
   */
  groupsWithShapes(): { readonly groups: GroupChains; readonly shapes: Uint8Array } {
    const pairing = (this.pairing ??= new ToolPairing());
    const n = this.items.length;
    if (this.shapes.length < n) {
      const grown = new Uint8Array(Math.max(n, this.shapes.length * 2, 16));
      grown.set(this.shapes.subarray(0, this.shapesFilled));
      this.shapes = grown;
    }
    if (this.shapesFilled === pairing.size) {
      // The pairing writes the shapes of the items it adds; it stops early only if reading an item throws.
      pairing.extend(this.items, n, this.shapes);
      this.shapesFilled = pairing.size;
    } else pairing.extend(this.items, n);
    for (let i = this.shapesFilled; i < n; i++) this.shapes[i] = shapeTexts(this.items[i] as MemoryItem);
    this.shapesFilled = Math.max(this.shapesFilled, n);
    return { groups: pairing.groups(), shapes: this.shapes };
  }

  /** Approximate characters of each item (indices below the item count) and their sum. */
  charColumn(): { readonly values: Float64Array; readonly total: number; readonly blocks: BlockFloors } {
    const column = (this.chars ??= new CostColumn());
    column.fill(this.items, this.items.length, itemApproxChars);
    return column;
  }

  /** The approximate characters of the first `n` items (measured where not yet). */
  charTotal(n: number): number {
    this.charColumn();
    const column = this.chars as CostColumn;
    if (n === column.filled) return column.total;
    let total = 0;
    for (let i = 0; i < n; i++) total += column.values[i] as number;
    return total;
  }

  /** Tokens of each item with `tokenizer` (indices below the item count) and their sum. */
  tokenColumn(tokenizer: Tokenizer): { readonly values: Float64Array; readonly total: number; readonly blocks: BlockFloors } {
    const columns = (this.tokens ??= new WeakMap());
    let column = columns.get(tokenizer);
    if (!column) {
      column = new CostColumn();
      columns.set(tokenizer, column);
    }
    column.fill(this.items, this.items.length, itemTokenCounter(tokenizer));
    return column;
  }

  /** What this history knows of `tokenizer`'s counts, without creating an entry when it knows nothing. */
  knownTokens(tokenizer: Tokenizer): TokenKnowledge | undefined {
    return this.knowledge?.get(tokenizer);
  }

  /**
   * Fills this (new, empty) entry with facts saved elsewhere for exactly these items: their tool pairing,
   * characters, and what one tokenizer knows of them (see projection-facts.ts).
   */
  seed(items: readonly MemoryItem[], facts: { readonly pairing: ToolPairing; readonly chars: ArrayLike<number>; readonly tokenizer?: Tokenizer; readonly knowledge?: TokenKnowledge }): void {
    this.append(items);
    this.pairing = facts.pairing;
    const n = items.length;
    const column = new CostColumn();
    column.values = new Float64Array(Math.max(16, n));
    let total = 0;
    for (let i = 0; i < n; i++) {
      const value = facts.chars[i] as number;
      column.values[i] = value;
      total += value;
    }
    column.total = total;
    column.filled = n;
    this.chars = column;
    if (facts.tokenizer && facts.knowledge) {
      this.knowledge = new WeakMap([[facts.tokenizer, facts.knowledge]]);
    }
  }

  /** What this history knows of `tokenizer`'s counts when they are counted lazily (sized for the item count). */
  tokenKnowledge(tokenizer: Tokenizer): TokenKnowledge {
    const all = (this.knowledge ??= new WeakMap());
    let knowledge = all.get(tokenizer);
    if (!knowledge) {
      knowledge = new TokenKnowledge();
      all.set(tokenizer, knowledge);
    }
    knowledge.ensure(this.items.length);
    return knowledge;
  }
}

// Entries by first item: an agent's history keeps its first item (the system prompt) while it grows. A few
// entries per first item, most recently used first, so sessions that share a first item object do not evict
// each other.
const ENTRIES_PER_FIRST_ITEM = 4;
let histories = new WeakMap<object, History[]>();
registerProjectionCache('cost columns per history (by first item)', () => {
  histories = new WeakMap();
});

/**
 * Registers a new entry for `items` filled by `fill` (facts saved with a checkpoint), first in line for their
 * first item, unless an entry for exactly these items is cached already or they cannot be cached (not all
 * frozen). Returns whether it was registered.
 */
export const seedHistory = (items: readonly MemoryItem[], fill: (history: History) => void): boolean => {
  const first = items[0];
  if (first === undefined || first === null || typeof first !== 'object' || !allFrozen(items)) return false;
  let entries = histories.get(first);
  if (!entries) {
    entries = [];
    histories.set(first, entries);
  }
  if (entries.some((entry) => entry.items.length === items.length && entry.extendsTo(items))) return false;
  const history = new History();
  fill(history);
  entries.unshift(history);
  if (entries.length > ENTRIES_PER_FIRST_ITEM) entries.pop();
  return true;
};

/** The memo of `items`: a cached entry that `items` extends (extended to it), else a new one (cached). */
export const historyOf = (items: readonly MemoryItem[]): History => {
  const first = items[0];
  const uncached = (): History => {
    const history = new History();
    history.append(items);
    return history;
  };
  // Columns are indexed by position: cached only when no item can change under them (caches.ts). A cached
  // entry holds frozen items only and freezing is permanent, so only the items past the entry are checked.
  if (first === undefined || first === null || typeof first !== 'object' || !Object.isFrozen(first)) return uncached();
  let entries = histories.get(first);
  let found = entries ? entries.findIndex((entry) => entry.extendsTo(items)) : -1;
  if (!allFrozen(items, found === -1 ? 1 : (entries?.[found] as History).items.length)) return uncached();
  if (!entries) {
    entries = [];
    histories.set(first, entries);
  }
  if (found === -1) {
    entries.unshift(new History());
    if (entries.length > ENTRIES_PER_FIRST_ITEM) entries.pop();
    found = 0;
  } else if (found > 0) {
    entries.unshift(...entries.splice(found, 1));
    found = 0;
  }
  const history = entries[0] as History;
  history.append(items);
  return history;
};

/**
 * Groups items that must be kept or dropped together: each output joins the nearest earlier call of its id
 * that has no output yet (an assistant message with several `tool_calls` joins all its outputs; a model that
 * reuses one id every turn gets one group per turn). Calls without an output and outputs without an earlier
 * call (orphans) stay alone. O(n); O(new
 * items) plus a check of identities when `items` extends the list last grouped with the same first item.
 * @example toolPairGroups([functionCall('c1', 'ls'), userMessage('x'), functionCallOutput('c1', 'a')]).membersOf(2) // [0, 2]
 */
export const toolPairGroups = (items: readonly MemoryItem[]): ToolPairGroups => historyOf(items).pairingOfItems().snapshot();
