// Where to cut memory when compacting: at a user turn, never between a tool call and its output.
import { toolPairGroups } from '../context/index.js';
import { isUserMessage, outputCallIdOf, type MemoryItem } from '../items/index.js';

/** For each cut position i (0..n), whether cutting before items[i] separates a call from its output. */
const splitPositions = (items: readonly MemoryItem[]): boolean[] => {
  // The projection's tool-pair groups: every result of a call, in every shape and however many, is in its group.
  const groups = toolPairGroups(items);
  const open = new Array<number>(items.length + 2).fill(0);
  const last = new Map<number, number>();
  for (let i = 0; i < items.length; i++) if (groups.groupOf(i) !== i) last.set(groups.groupOf(i), i);
  for (const [first, end] of last) {
    open[first + 1]! += 1; // cuts first+1 .. end split the group
    open[end + 1]! -= 1;
  }
  const splits: boolean[] = [];
  let depth = 0;
  for (let i = 0; i <= items.length; i++) {
    depth += open[i]!;
    splits.push(depth > 0);
  }
  return splits;
};

const backToPairSafe = (splits: readonly boolean[], cut: number): number => {
  let i = cut;
  while (i > 0 && splits[i]) i -= 1;
  return i;
};

/**
 * The cut for keeping `items[cut..]`: a naive cut at or outside the ends stays; otherwise the nearest
 * user message at or before it; with none, the naive cut. Never between a call and its output
 * (the cut moves back until no pair spans it).
 * @example findTurnBoundaryCut([user, asst, user2, asst2], 3) // 2
 */
export const findTurnBoundaryCut = (items: readonly MemoryItem[], naiveCut: number): number => {
  if (naiveCut <= 0 || naiveCut >= items.length) return naiveCut;
  const splits = splitPositions(items);
  for (let i = naiveCut; i >= 0; i--) {
    if (isUserMessage(items[i]!)) return backToPairSafe(splits, i);
  }
  return backToPairSafe(splits, naiveCut);
};

/**
 * The nearest step boundary to `naiveCut` (looking back first, then forward) inside (0, n): a position
 * that starts a model turn (not a tool output) and splits no call from its output. -1 when none.
 */
export const findStepBoundaryCut = (items: readonly MemoryItem[], naiveCut: number): number => {
  const splits = splitPositions(items);
  const isBoundary = (i: number): boolean => i > 0 && i < items.length && !splits[i] && outputCallIdOf(items[i]!) === undefined;
  const start = Math.min(Math.max(naiveCut, 1), items.length - 1);
  for (let i = start; i > 0; i--) if (isBoundary(i)) return i;
  for (let i = start + 1; i < items.length; i++) if (isBoundary(i)) return i;
  return -1;
};

/** The first user message at or after `from` that splits no call from its output; -1 when none. */
export const findUserTurnAfter = (items: readonly MemoryItem[], from: number): number => {
  const splits = splitPositions(items);
  for (let i = Math.max(from, 1); i < items.length; i++) if (isUserMessage(items[i]!) && !splits[i]) return i;
  return -1;
};
