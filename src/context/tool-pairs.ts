// Tool pairing: which items must travel together because one issues a tool call and another answers it.
import { ProjectionCache } from './caches.js';
import { callIdsOf, isMessage, outputCallIdOf } from '../items/index.js';
import type { MemoryItem } from '../items/index.js';

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
  return typeof message.role === 'string' && (Array.isArray(message.tool_calls) || Array.isArray(message.content) || message.role === 'tool');
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
}

const IDENTITY_GROUPS: GroupChains = Object.freeze({
  groupOf: (i: number) => i,
  sizeOf: () => 1,
  membersOf: (i: number) => [i],
  forEachMember: (i: number, visit: (member: number) => void) => visit(i),
  firstOf: (i: number) => i,
  nextOf: () => -1,
});

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
  toFacts(): { readonly groups: number[]; readonly unanswered: Array<[string, number]>; readonly answered: Array<[string, number]> } {
    const n = this.count;
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
    pairing.count = n;
    pairing.joined = joined;
    return pairing;
  }

  /** Adds the next item (index `size`). */
  add(item: MemoryItem): void {
    // Read the links first: if that throws, the state is unchanged. The commonest shapes (a function call, its
    // output, a plain message) are read directly, without the per-item memo or arrays: what toolLinksOf gives.
    const type = item.type;
    let call: string | undefined;
    let answer: string | undefined;
    let links: ToolLinks = NO_LINKS;
    if (type === 'function_call_output' || type === 'function_call') {
      const id = (item as { call_id?: unknown }).call_id;
      if (typeof id === 'string') {
        if (type === 'function_call') call = id;
        else answer = id;
      }
    } else if (type === 'message' && hasMessageLinks(item)) links = toolLinksOf(item);
    const i = this.count;
    if (i === this.parent.length) {
      const grown = new Int32Array(i * 2);
      grown.set(this.parent);
      this.parent = grown;
    }
    this.parent[i] = i;
    this.count = i + 1;
    this.built = undefined;
    if (call !== undefined) this.issue(call, i);
    else if (answer !== undefined) this.answer(answer, i);
    else if (links !== NO_LINKS) {
      // Answers first: an item never answers its own calls.
      for (const id of links.answers) this.answer(id, i);
      for (const id of links.calls) this.issue(id, i);
    }
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

  private join(a: number, b: number): void {
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra < rb) this.parent[rb] = ra;
    else if (rb < ra) this.parent[ra] = rb;
    if (ra !== rb) this.joined = true;
  }

  /** The groups of the items added so far (the same object until another item is added). */
  groups(): GroupChains {
    if (this.built) return this.built;
    const n = this.count;
    if (!this.joined) return (this.built = IDENTITY_GROUPS);
    const root = new Int32Array(n);
    const size = new Int32Array(n);
    // Members of a group as an ascending chain: next[i] is the following member, -1 at the end.
    const next = new Int32Array(n).fill(-1);
    const last = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const r = this.find(i);
      root[i] = r;
      size[r] = (size[r] as number) + 1;
      if (r === i) last[i] = i;
      else {
        next[last[r] as number] = i;
        last[r] = i;
      }
    }
    const forEachMember = (i: number, visit: (member: number) => void): void => {
      for (let m = root[i] as number; m !== -1; m = next[m] as number) visit(m);
    };
    return (this.built = Object.freeze({
      groupOf: (i: number) => root[i] as number,
      sizeOf: (i: number) => size[root[i] as number] as number,
      membersOf: (i: number) => {
        const members: number[] = [];
        forEachMember(i, (m) => members.push(m));
        return members;
      },
      forEachMember,
      firstOf: (i: number) => root[i] as number,
      nextOf: (m: number) => next[m] as number,
    }));
  }
}
