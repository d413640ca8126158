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

const IDENTITY_GROUPS: ToolPairGroups = Object.freeze({
  groupOf: (i: number) => i,
  sizeOf: () => 1,
  membersOf: (i: number) => [i],
  forEachMember: (i: number, visit: (member: number) => void) => visit(i),
});

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
  /** For each call id, the items that issued it and are not answered yet, oldest first. */
  private readonly unanswered = new Map<string, number[]>();
  /** For each call id, the latest item that issued it (a further answer of an answered call joins it). */
  private readonly latestCall = new Map<string, number>();
  private parent = new Int32Array(16);
  private count = 0;
  private joined = false;
  private built: ToolPairGroups | undefined;

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
    for (const [id, stack] of this.unanswered) for (const index of stack) unanswered.push([id, index]);
    unanswered.sort((a, b) => a[1] - b[1]);
    const answered: Array<[string, number]> = [];
    for (const [id, index] of this.latestCall) if (this.unanswered.get(id)?.at(-1) !== index) answered.push([id, index]);
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
    let previous = -1;
    for (const [id, index] of unanswered) {
      if (!Number.isInteger(index) || index < previous || index >= n) return undefined;
      previous = index;
      const stack = pairing.unanswered.get(id);
      if (stack) stack.push(index);
      else pairing.unanswered.set(id, [index]);
      pairing.latestCall.set(id, index);
    }
    previous = -1;
    for (const [id, index] of answered) {
      if (!Number.isInteger(index) || index < previous || index >= n) return undefined;
      previous = index;
      // An unanswered call of the id is later than any answered one.
      if (!pairing.latestCall.has(id)) pairing.latestCall.set(id, index);
    }
    pairing.parent = parent;
    pairing.count = n;
    pairing.joined = joined;
    return pairing;
  }

  /** Adds the next item (index `size`). */
  add(item: MemoryItem): void {
    // Read the links first: if that throws, the state is unchanged.
    const links = toolLinksOf(item);
    const i = this.count;
    if (i === this.parent.length) {
      const grown = new Int32Array(i * 2);
      grown.set(this.parent);
      this.parent = grown;
    }
    this.parent[i] = i;
    this.count = i + 1;
    this.built = undefined;
    if (links === NO_LINKS) return;
    // Answers first: an item never answers its own calls.
    for (const id of links.answers) {
      const call = this.unanswered.get(id)?.pop() ?? this.latestCall.get(id);
      if (call !== undefined) this.join(call, i);
    }
    for (const id of links.calls) {
      const stack = this.unanswered.get(id);
      if (stack) stack.push(i);
      else this.unanswered.set(id, [i]);
      this.latestCall.set(id, i);
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
  groups(): ToolPairGroups {
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
    }));
  }
}
