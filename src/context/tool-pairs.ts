// Tool pairing: which items must travel together because one issues a tool call and another answers it.
import { callIdsOf, isMessage, outputCallIdOf } from '../items/index.js';
import type { MemoryItem } from '../items/index.js';

interface ToolLinks {
  readonly calls: readonly string[];
  readonly answers: readonly string[];
}

const NO_LINKS: ToolLinks = Object.freeze({ calls: Object.freeze([]), answers: Object.freeze([]) });
const linkMemo = new WeakMap<object, ToolLinks>();

const answersOf = (item: MemoryItem): string[] => {
  const callId = outputCallIdOf(item);
  if (callId !== undefined) return [callId];
  if (!isMessage(item) || !Array.isArray(item.content)) return [];
  const ids: string[] = [];
  for (const part of item.content) {
    if (part && part.type === 'tool_result' && typeof part['tool_use_id'] === 'string') ids.push(part['tool_use_id']);
  }
  return ids;
};

/**
 * The call ids an item issues (`function_call`, `tool_calls[]`, Anthropic `tool_use` parts) and answers
 * (`function_call_output`, Anthropic `tool_result` parts), memoized by identity.
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

/**
 * Groups items that must be kept or dropped together: every call id that is both issued and answered in
 * `items` joins all the items that issue or answer it (an assistant message with several `tool_calls` joins
 * all its outputs). Calls without an output and outputs without a call (orphans) stay alone. O(n).
 * @example toolPairGroups([functionCall('c1', 'ls'), userMessage('x'), functionCallOutput('c1', 'a')]).membersOf(2) // [0, 2]
 */
export const toolPairGroups = (items: readonly MemoryItem[]): ToolPairGroups => {
  const n = items.length;
  // First issuer of each call id; later issuers of the same id (rare) are kept aside.
  const issuer = new Map<string, number>();
  let moreIssuers: Map<string, number[]> | undefined;
  let answerIds: string[] | undefined;
  let answerAt: number[] | undefined;
  for (let i = 0; i < n; i++) {
    const links = toolLinksOf(items[i] as MemoryItem);
    if (links === NO_LINKS) continue;
    for (const id of links.calls) {
      if (!issuer.has(id)) issuer.set(id, i);
      else {
        moreIssuers ??= new Map();
        const list = moreIssuers.get(id);
        if (list) list.push(i);
        else moreIssuers.set(id, [i]);
      }
    }
    for (const id of links.answers) {
      (answerIds ??= []).push(id);
      (answerAt ??= []).push(i);
    }
  }

  // Union-find whose root is always the group's smallest index.
  let parent: Int32Array | undefined;
  const find = (p: Int32Array, i: number): number => {
    let root = i;
    while (p[root] !== root) root = p[root] as number;
    while (p[i] !== root) {
      const next = p[i] as number;
      p[i] = root;
      i = next;
    }
    return root;
  };
  const join = (a: number, b: number): void => {
    if (!parent) {
      parent = new Int32Array(n);
      for (let i = 0; i < n; i++) parent[i] = i;
    }
    const ra = find(parent, a);
    const rb = find(parent, b);
    if (ra < rb) parent[rb] = ra;
    else if (rb < ra) parent[ra] = rb;
  };
  if (answerIds && answerAt) {
    for (let k = 0; k < answerIds.length; k++) {
      const id = answerIds[k] as string;
      const first = issuer.get(id);
      if (first === undefined) continue;
      join(first, answerAt[k] as number);
      for (const other of moreIssuers?.get(id) ?? []) join(first, other);
    }
  }

  if (!parent) {
    return {
      groupOf: (i) => i,
      sizeOf: () => 1,
      membersOf: (i) => [i],
      forEachMember: (i, visit) => visit(i),
    };
  }
  const p = parent;
  const root = new Int32Array(n);
  const size = new Int32Array(n);
  // Members of a group as an ascending chain: next[i] is the following member, -1 at the end.
  const next = new Int32Array(n).fill(-1);
  const last = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const r = find(p, i);
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
  return {
    groupOf: (i) => root[i] as number,
    sizeOf: (i) => size[root[i] as number] as number,
    membersOf: (i) => {
      const members: number[] = [];
      forEachMember(i, (m) => members.push(m));
      return members;
    },
    forEachMember,
  };
};
