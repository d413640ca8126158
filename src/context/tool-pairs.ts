// Tool pairing: which items must travel together because one issues a tool call and another answers it.
import { ProjectionCache } from './caches.js';
import { InternalError } from '../base/errors.js';
import { callIdsOf, isMessage, outputCallIdOf } from '../items/index.js';
import type { MemoryItem } from '../items/index.js';
import { shapeTextsOfCall } from './measure/items.js';

interface ToolLinks {
  readonly calls: readonly string[];
  readonly answers: readonly string[];
}

const NO_LINKS: ToolLinks = Object.freeze({ calls: Object.freeze([]), answers: Object.freeze([]) });
const linkMemo = new ProjectionCache<object, ToolLinks>('tool-call links per item');

/** The call ids an item answers: a `function_call_output`, a Chat `role:'tool'` message, `tool_result` parts of any message. */
const answersOf = (item: MemoryItem): string[] => {
  const callId = outputCallIdOf(item);
  if (callId !== undefined) return [callId];
  if (!isMessage(item)) return [];
  const ids: string[] = [];
  const chatToolCallId = (item as { tool_call_id?: unknown }).tool_call_id;
  if (item.role === 'tool' && typeof chatToolCallId === 'string') ids.push(chatToolCallId);
  if (!Array.isArray(item.content)) return ids;
  for (const part of item.content) {
    if (part && part.type === 'tool_result' && typeof part['tool_use_id'] === 'string') ids.push(part['tool_use_id']);
  }
  return ids;
};

/**
 * Whether a `message` item can issue or answer a call: a message role with `tool_calls` or list content, or a Chat
 * `role:'tool'` message. Any other message has no links (toolLinksOf gives none), without looking further.
 */
const hasMessageLinks = (item: MemoryItem): boolean => {
  const message = item as { role?: unknown; tool_calls?: unknown; content?: unknown };
  const role = message.role;
  // The commonest message first (text content, no calls, not a tool result): no array to look at.
  if (typeof message.content === 'string' && message.tool_calls === undefined) return role === 'tool';
  return typeof role === 'string' && (Array.isArray(message.tool_calls) || Array.isArray(message.content) || role === 'tool');
};

/**
 * The call ids an item issues (`function_call`, `tool_calls[]`, Anthropic `tool_use` parts) and answers
 * (`function_call_output`, Chat `role:'tool'` messages, Anthropic `tool_result` parts in any message), memoized by identity.
 */
export const toolLinksOf = (item: MemoryItem): ToolLinks => {
  const hit = linkMemo.get(item);
  if (hit) return hit;
  const calls = callIdsOf(item);
  const answers = answersOf(item);
  const links = calls.length === 0 && answers.length === 0 ? NO_LINKS : Object.freeze({ calls, answers });
  linkMemo.set(item, links);
  return links;
};

/** The tool-pair groups of a list of items; see {@link toolPairGroups}. */
export interface ToolPairGroups {
  /** The smallest index of item `index`'s group (the item itself when it is paired with nothing). */
  groupOf(index: number): number;
  /** How many items item `index`'s group has (1 when it is paired with nothing). */
  sizeOf(index: number): number;
  /** The indices of item `index`'s group, ascending (`[index]` when it is paired with nothing). */
  membersOf(index: number): number[];
  /** Calls `visit` with each index of item `index`'s group, ascending, without allocating. */
  forEachMember(index: number, visit: (member: number) => void): void;
}

/** The groups with a way to walk a group's members without a callback (the projection's loops use it). */
export interface GroupChains extends ToolPairGroups {
  /** The first (smallest) index of item `index`'s group. */
  firstOf(index: number): number;
  /** The member after `member` in its group, ascending; -1 after the last. */
  nextOf(member: number): number;
  /**
   * The same as plain arrays, for loops over a long history that a first projection runs before the engine has
   * compiled anything (a function call per item costs more there than the work it does): `roots[i]` is
   * `firstOf(i)`, `sizes[root]` the size of the group whose first index is `root`, `nexts[i]` is `nextOf(i)`.
   * Undefined when no item is paired with another (every group is one item). Valid until the grouping grows.
   */
  readonly roots: Int32Array | undefined;
  readonly sizes: Int32Array | undefined;
  readonly nexts: Int32Array | undefined;
}

const IDENTITY_GROUPS: GroupChains = Object.freeze({
  groupOf: (i: number) => i,
  sizeOf: () => 1,
  membersOf: (i: number) => [i],
  forEachMember: (i: number, visit: (member: number) => void) => visit(i),
  firstOf: (i: number) => i,
  nextOf: () => -1,
  roots: undefined,
  sizes: undefined,
  nexts: undefined,
});

/** Groups over plain arrays (see {@link GroupChains}). */
const chainsOf = (roots: Int32Array, sizes: Int32Array, nexts: Int32Array): GroupChains => {
  const forEachMember = (i: number, visit: (member: number) => void): void => {
    for (let m = roots[i] as number; m !== -1; m = nexts[m] as number) visit(m);
  };
  return Object.freeze({
    groupOf: (i: number) => roots[i] as number,
    sizeOf: (i: number) => sizes[roots[i] as number] as number,
    membersOf: (i: number) => {
      const members: number[] = [];
      forEachMember(i, (m) => members.push(m));
      return members;
    },
    forEachMember,
    firstOf: (i: number) => roots[i] as number,
    nextOf: (m: number) => nexts[m] as number,
    roots,
    sizes,
    nexts,
  });
};

/** How far back an output looks for its call before its history is grouped by id (see ToolPairing.extendNearby). */
const NEARBY = 64;

/** The calls of one id issued again before their answer: the unanswered ones (oldest first) and the latest. */
interface CallsOfId {
  readonly open: number[];
  latest: number;
}

/** One id's calls in the compact form ToolPairing keeps (see its `calls`). */
const encodeCalls = (open: number[], latest: number): number | CallsOfId => {
  if (open.length === 0) return -latest - 1;
  if (open.length === 1 && open[0] === latest) return latest;
  return { open, latest };
};

const decodeCalls = (entry: number | CallsOfId): { readonly open: readonly number[]; readonly latest: number } =>
  typeof entry !== 'number' ? entry : entry >= 0 ? { open: [entry], latest: entry } : { open: [], latest: -entry - 1 };

/**
 * The tool-pair grouping of a list of items, built one item at a time so that a list that grows (an append-only
 * history) extends it instead of rebuilding it. An output joins the nearest earlier call of its id that has no
 * output yet (a model may reuse one id, e.g. `call_0`, every turn: each output pairs with its own turn's call);
 * when every call of its id is answered already, it joins the latest of them (a call answered several times, or in
 * several shapes, is one group). An output with no call of its id before it, and a call never answered, stay alone. Items added later never change an earlier
 * join, which after the last item is exactly the rule of {@link toolPairGroups}. Union-find whose root is always
 * the group's smallest index.
 */
export class ToolPairing {
  /**
   * For each call id, the items that issued it and are not answered yet (oldest first) and the latest item that
   * issued it (a further answer of an answered call joins it), in one entry (one lookup per call or output):
   * `v >= 0` when `v` is the only unanswered call and the latest; `v < 0` when none is unanswered and the latest is
   * `-v - 1`; a {@link CallsOfId} otherwise (an id issued again before its answer).
   */
  private readonly calls = new Map<string, number | CallsOfId>();
  private parent = new Int32Array(16);
  /**
   * The groups as chains, kept as items are added while {@link chained}: `sizes[root]` the size of the group whose
   * first index is `root`, `nexts[i]` the member after `i` (-1 after the last), `lasts[root]` the group's last
   * member. While chained, `parent[i]` is item `i`'s root (no path to walk): an added item either stays alone or
   * joins one group as its newest member. An item that joins two groups (a message answering calls of two groups)
   * merges them; the chains are then rebuilt once, when {@link groups} is next asked.
   */
  private sizes = new Int32Array(16);
  private nexts = new Int32Array(16);
  private lasts = new Int32Array(16);
  private chained = true;
  /**
   * Whether links are settled by id (the map `calls`), or still by the nearby rule (see extendNearby), where
   * `answered[j]` is 1 for a function call that has an output, and `calls` is empty.
   */
  private byId = false;
  private answered = new Uint8Array(16);
  private count = 0;
  private joined = false;
  private built: GroupChains | undefined;

  /** How many items have been added. */
  get size(): number {
    return this.count;
  }

  /**
   * The grouping as plain data, to save beside the items (see projection-facts.ts): for each item how far back
   * the first item of its group is (0: it is the first, or alone), and the calls not answered yet as
   * `[call id, index]` by index (what a later output can still join), and the latest call of each id that is
   * answered already, the same way (what a further answer joins).
   */
  toFacts(items: readonly MemoryItem[]): { readonly groups: number[]; readonly unanswered: Array<[string, number]>; readonly answered: Array<[string, number]> } {
    const n = this.count;
    // The calls by id, which the nearby rule does not keep.
    if (!this.byId) this.switchToIds(items, n);
    const groups = new Array<number>(n);
    for (let i = 0; i < n; i++) groups[i] = i - this.find(i);
    const unanswered: Array<[string, number]> = [];
    const answered: Array<[string, number]> = [];
    for (const [id, entry] of this.calls) {
      const { open, latest } = decodeCalls(entry);
      for (const index of open) unanswered.push([id, index]);
      if (open.at(-1) !== latest) answered.push([id, latest]);
    }
    unanswered.sort((a, b) => a[1] - b[1]);
    answered.sort((a, b) => a[1] - b[1]);
    return { groups, unanswered, answered };
  }

  /**
   * The grouping {@link toFacts} saved, without reading the items again. Undefined when the data cannot be a
   * grouping (a first item that is not its own group's first, an index out of range).
   */
  static fromFacts(
    groups: readonly number[],
    unanswered: ReadonlyArray<readonly [string, number]>,
    answered: ReadonlyArray<readonly [string, number]>,
  ): ToolPairing | undefined {
    const n = groups.length;
    const pairing = new ToolPairing();
    const parent = new Int32Array(Math.max(16, n));
    let joined = false;
    for (let i = 0; i < n; i++) {
      const back = groups[i] as number;
      if (!Number.isInteger(back) || back < 0 || back > i) return undefined;
      const root = i - back;
      if (root !== i && parent[root] !== root) return undefined;
      parent[i] = root;
      if (root !== i) joined = true;
    }
    const decoded = new Map<string, { open: number[]; latest: number }>();
    let previous = -1;
    for (const [id, index] of unanswered) {
      if (!Number.isInteger(index) || index < previous || index >= n) return undefined;
      previous = index;
      const calls = decoded.get(id);
      if (calls) {
        calls.open.push(index);
        calls.latest = index;
      } else decoded.set(id, { open: [index], latest: index });
    }
    previous = -1;
    for (const [id, index] of answered) {
      if (!Number.isInteger(index) || index < previous || index >= n) return undefined;
      previous = index;
      // An unanswered call of the id is later than any answered one.
      if (!decoded.has(id)) decoded.set(id, { open: [], latest: index });
    }
    for (const [id, calls] of decoded) pairing.calls.set(id, encodeCalls(calls.open, calls.latest));
    pairing.parent = parent;
    pairing.sizes = new Int32Array(parent.length);
    pairing.nexts = new Int32Array(parent.length);
    pairing.lasts = new Int32Array(parent.length);
    pairing.answered = new Uint8Array(parent.length);
    pairing.byId = true;
    pairing.count = n;
    pairing.joined = joined;
    // The chains are built from the parents when the groups are first asked.
    pairing.chained = false;
    return pairing;
  }

  /** Makes room for `n` items. */
  private reserve(n: number): void {
    if (n <= this.parent.length) return;
    const size = Math.max(n, this.parent.length * 2);
    const grow = (from: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> => {
      const to = new Int32Array(size);
      to.set(from.subarray(0, this.count));
      return to;
    };
    this.parent = grow(this.parent);
    this.sizes = grow(this.sizes);
    this.nexts = grow(this.nexts);
    this.lasts = grow(this.lasts);
    const answered = new Uint8Array(size);
    answered.set(this.answered.subarray(0, this.count));
    this.answered = answered;
  }

  /**
   * Adds `items[size]` up to (not including) `items[to]`: `items` is the whole list, of which the first `size` were
   * added before. A first projection adds every item of a long history once, before the engine has compiled
   * anything, so what runs per item is kept small: the commonest shapes (a function call, its output, a plain
   * message) are read in place, in one loop. With `shapes`, each item's count of non-empty texts of those shapes is
   * written there too (see {@link shapeTexts}). If reading an item throws, the items before it are added and the
   * state is as if the rest had not been given.
   */
  extend(items: readonly MemoryItem[], to: number, shapes?: Uint8Array): void {
    let i = this.count;
    if (to <= i) return;
    this.reserve(to);
    try {
      if (!this.byId) {
        i = this.extendNearby(items, i, to, shapes);
        // An item the nearby rule cannot settle: from here on by id, over the whole list (the same groups so far).
        if (i < to) i = this.switchToIds(items, i);
      }
      if (i < to) i = this.extendByIds(items, i, to, shapes);
    } finally {
      this.count = i;
      this.built = undefined;
    }
  }

  /**
   * The items from `from`, while every link is settled nearby (returns where it stopped): a call is only marked
   * (no id is read), and an output looks back, at most {@link NEARBY} items, for the nearest call of its id; when
   * that call has no output yet, it is the nearest unanswered call of the id, so the output joins it, as the rule
   * says. Anything else (no call of the id nearby, its nearest call answered already, a message that issues or
   * answers calls) stops here, before the item. Only function calls and outputs have been linked when this runs,
   * so "the nearest call of the id" needs nothing but the items: no map of ids, no hash of an id.
   */
  private extendNearby(items: readonly MemoryItem[], from: number, to: number, shapes: Uint8Array | undefined): number {
    const parent = this.parent;
    const sizes = this.sizes;
    const nexts = this.nexts;
    const lasts = this.lasts;
    const answered = this.answered;
    for (let i = from; i < to; i++) {
      const item = items[i] as MemoryItem;
      const type = item.type;
      if (type === 'function_call') {
        if (shapes !== undefined) shapes[i] = shapeTextsOfCall(item);
      } else if (type === 'function_call_output') {
        const output = item as { call_id?: unknown; output?: unknown };
        const id = output.call_id;
        if (typeof id === 'string') {
          const stop = i > NEARBY ? i - NEARBY : 0;
          let j = i - 1;
          for (; j >= stop; j--) {
            const candidate = items[j] as { type?: unknown; call_id?: unknown };
            if (candidate.type === 'function_call' && candidate.call_id === id) break;
          }
          if (j < stop || answered[j] === 1) return i;
          answered[j] = 1;
          // Item i, new and alone, joins the group of the call as its newest member (the chains stay flat here).
          const root = parent[j] as number;
          parent[i] = root;
          sizes[i] = 1;
          nexts[i] = -1;
          nexts[lasts[root] as number] = i;
          lasts[root] = i;
          sizes[root] = (sizes[root] as number) + 1;
          answered[i] = 0;
          this.joined = true;
          if (shapes !== undefined) shapes[i] = typeof output.output === 'string' && output.output.length > 0 ? 1 : 0;
          continue;
        }
        if (shapes !== undefined) shapes[i] = typeof output.output === 'string' && output.output.length > 0 ? 1 : 0;
      } else if (type === 'message') {
        if (hasMessageLinks(item)) return i;
        if (shapes !== undefined) {
          const content = (item as { content?: unknown }).content;
          shapes[i] = typeof content === 'string' && content.length > 0 ? 1 : 0;
        }
      } else if (shapes !== undefined) shapes[i] = 0;
      parent[i] = i;
      sizes[i] = 1;
      nexts[i] = -1;
      lasts[i] = i;
      answered[i] = 0;
    }
    return to;
  }

  /** Leaves the nearby rule for good: the items before `at` are grouped again by id (the same groups). Returns `at`. */
  private switchToIds(items: readonly MemoryItem[], at: number): number {
    this.byId = true;
    this.calls.clear();
    this.joined = false;
    this.chained = true;
    this.built = undefined;
    const done = this.extendByIds(items, 0, at, undefined);
    if (done < at) throw new InternalError(`ToolPairing: item ${done} could not be read again`);
    this.count = at;
    return at;
  }

  /** The items from `from` to `to` by id (see the class); returns how far it got (`to` unless an item throws). */
  private extendByIds(items: readonly MemoryItem[], from: number, to: number, shapes: Uint8Array | undefined): number {
    const parent = this.parent;
    const sizes = this.sizes;
    const nexts = this.nexts;
    const lasts = this.lasts;
    const calls = this.calls;
    let i = from;
    for (; i < to; i++) {
      const item = items[i] as MemoryItem;
      // Read the links first: if that throws, the item is not added.
      const type = item.type;
      let call: string | undefined;
      let answer: string | undefined;
      let links: ToolLinks = NO_LINKS;
      let texts = 0;
      if (type === 'function_call_output' || type === 'function_call') {
        const id = (item as { call_id?: unknown }).call_id;
        if (typeof id === 'string') {
          if (type === 'function_call') call = id;
          else answer = id;
        }
        if (shapes !== undefined) {
          const output = (item as { output?: unknown }).output;
          texts = type === 'function_call' ? shapeTextsOfCall(item) : typeof output === 'string' && output.length > 0 ? 1 : 0;
        }
      } else if (type === 'message') {
        if (hasMessageLinks(item)) links = toolLinksOf(item);
        if (shapes !== undefined) {
          const content = (item as { content?: unknown }).content;
          texts = typeof content === 'string' && content.length > 0 ? 1 : 0;
        }
      }
      if (shapes !== undefined) shapes[i] = texts;
      parent[i] = i;
      sizes[i] = 1;
      nexts[i] = -1;
      lasts[i] = i;
      if (call !== undefined) {
        const entry = calls.get(call);
        if (entry === undefined || (typeof entry === 'number' && entry < 0)) calls.set(call, i);
        else this.issue(call, i);
      } else if (answer !== undefined) this.answer(answer, i);
      else if (links !== NO_LINKS) {
        // Answers first: an item never answers its own calls.
        for (const id of links.answers) this.answer(id, i);
        for (const id of links.calls) this.issue(id, i);
      }
    }
    return i;
  }

  /** Item `i` answers call `id`: it joins the nearest earlier unanswered call of the id, else the latest call of it. */
  private answer(id: string, i: number): void {
    const entry = this.calls.get(id);
    if (entry === undefined) return;
    if (typeof entry === 'number') {
      if (entry >= 0) {
        this.join(entry, i);
        this.calls.set(id, -entry - 1);
      } else this.join(-entry - 1, i);
      return;
    }
    const call = entry.open.pop();
    if (call === undefined) {
      this.join(entry.latest, i);
      return;
    }
    this.join(call, i);
    this.calls.set(id, encodeCalls(entry.open, entry.latest));
  }

  /** Item `i` issues call `id`. */
  private issue(id: string, i: number): void {
    const entry = this.calls.get(id);
    if (entry === undefined || (typeof entry === 'number' && entry < 0)) this.calls.set(id, i);
    else if (typeof entry === 'number') this.calls.set(id, { open: [entry, i], latest: i });
    else {
      entry.open.push(i);
      entry.latest = i;
    }
  }

  private find(i: number): number {
    const p = this.parent;
    let root = i;
    while (p[root] !== root) root = p[root] as number;
    while (p[i] !== root) {
      const next = p[i] as number;
      p[i] = root;
      i = next;
    }
    return root;
  }

  /** Joins the groups of `a` and `b`, where `b` is the newest item added (the one being added). */
  private join(a: number, b: number): void {
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra === rb) return;
    this.joined = true;
    const low = ra < rb ? ra : rb;
    const high = ra < rb ? rb : ra;
    this.parent[high] = low;
    if (!this.chained) return;
    // The newest item, alone so far, joining a group: it is that group's newest member. Anything else merges two
    // groups whose chains interleave: they are rebuilt when next asked.
    if (high === b && this.sizes[b] === 1) {
      this.nexts[this.lasts[low] as number] = b;
      this.lasts[low] = b;
      this.sizes[low] = (this.sizes[low] as number) + 1;
    } else this.chained = false;
  }

  /** Rebuilds the chains from the parents (after a merge of two groups, or facts loaded). */
  private rechain(): void {
    const n = this.count;
    const parent = this.parent;
    const sizes = this.sizes;
    const nexts = this.nexts;
    const lasts = this.lasts;
    for (let i = 0; i < n; i++) {
      const r = this.find(i);
      // The root is the smallest index: it is met before its members, and its parent points at itself.
      parent[i] = r;
      nexts[i] = -1;
      if (r === i) {
        sizes[i] = 1;
        lasts[i] = i;
      } else {
        sizes[r] = (sizes[r] as number) + 1;
        nexts[lasts[r] as number] = i;
        lasts[r] = i;
      }
    }
    this.chained = true;
  }

  /**
   * The groups of the items added so far, over this grouping's own arrays (the same object until another item is
   * added; not to be kept past that: see {@link snapshot}).
   */
  groups(): GroupChains {
    if (this.built) return this.built;
    if (!this.joined) return (this.built = IDENTITY_GROUPS);
    if (!this.chained) this.rechain();
    return (this.built = chainsOf(this.parent, this.sizes, this.nexts));
  }

  /** The groups of the items added so far, on copies of the arrays: unchanged by items added later. */
  snapshot(): GroupChains {
    const live = this.groups();
    if (live === IDENTITY_GROUPS) return live;
    const n = this.count;
    return chainsOf(this.parent.slice(0, n), this.sizes.slice(0, n), this.nexts.slice(0, n));
  }
}
