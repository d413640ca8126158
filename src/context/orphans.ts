// dropOrphans: what the runtime does after any projector, so no tool output is sent without its call (nor a call without its output).
import type { ItemFate } from '../events/index.js';
import type { MemoryItem } from '../items/index.js';
import { itemApproxChars, itemTokenCount } from './measure/items.js';
import type { ContextProjection } from './project.js';
import type { ContextBudget } from './budget.js';
import { projectorTokenizer, type ContextProjector } from './projectors.js';
import { tokenizerFromName, type Tokenizer } from './measure/tokenizer.js';
import { toolLinksOf } from './tool-pairs.js';

const usableId = (id: unknown): boolean => typeof id === 'string' && id !== '';

/**
 * A call or output whose id is missing, empty or not a string (recorded before answers were normalised):
 * it can never be paired, and a provider rejects it.
 */
const hasUnusableCallId = (item: MemoryItem): boolean => {
  if (item.type === 'function_call' || item.type === 'function_call_output') return !usableId((item as { call_id?: unknown }).call_id);
  if (item.type !== 'message') return false;
  const calls = (item as { tool_calls?: unknown }).tool_calls;
  return Array.isArray(calls) && calls.some((call: unknown) => call === null || typeof call !== 'object' || !usableId((call as { id?: unknown }).id));
};

/**
 * Positions (in `items`) of the items that issue a call whose output is not among `items`, or answer a call that
 * is not among them. An output answers the nearest earlier unanswered call of its id, or, when every call of its id
 * is answered, the latest of them (a further result of the same call), as projection pairs them.
 */
const orphanPositions = (items: readonly MemoryItem[], skip: Uint8Array): Set<number> => {
  const open = new Map<string, number[]>();
  const called = new Set<string>();
  const orphans = new Set<number>();
  for (let p = 0; p < items.length; p++) {
    if (skip[p] === 1) continue;
    if (hasUnusableCallId(items[p] as MemoryItem)) {
      orphans.add(p);
      continue;
    }
    const links = toolLinksOf(items[p] as MemoryItem);
    for (const id of links.answers) {
      const call = open.get(id)?.pop();
      if (call === undefined && !called.has(id)) orphans.add(p);
    }
    for (const id of links.calls) {
      called.add(id);
      const stack = open.get(id);
      if (stack) stack.push(p);
      else open.set(id, [p]);
    }
  }
  for (const stack of open.values()) for (const p of stack) orphans.add(p);
  return orphans;
};

/**
 * Drops from a projection every tool output whose call is not sent before it, every call whose output is
 * not sent after it (a custom compaction policy or projector can leave either; providers reject both), and
 * every call or output whose id is missing, empty or not a string (an old log's malformed call), with
 * fate `dropped`, rule `orphan` and a note. Repeats until none is left (dropping an item can orphan its
 * partner). Returns `projection` itself when nothing is dropped. `tokenizer` corrects `projectedTokens`.
 * @example const projection = dropOrphans(projector.project(items, budget), tokenizer)
 */
export const dropOrphans = (projection: ContextProjection, tokenizer?: Tokenizer): ContextProjection => {
  const { items, report } = projection;
  let linked = false;
  for (const item of items) {
    const links = toolLinksOf(item);
    if (links.calls.length > 0 || links.answers.length > 0 || hasUnusableCallId(item)) {
      linked = true;
      break;
    }
  }
  if (!linked) return projection;
  const skip = new Uint8Array(items.length);
  let dropped = 0;
  for (;;) {
    const orphans = orphanPositions(items, skip);
    if (orphans.size === 0) break;
    for (const p of orphans) skip[p] = 1;
    dropped += orphans.size;
  }
  if (dropped === 0) return projection;

  const kept = items.filter((_, p) => skip[p] !== 1);
  let chars = report.projectedApproxChars;
  let tokens = report.projectedTokens;
  for (let p = 0; p < items.length; p++) {
    if (skip[p] !== 1) continue;
    chars -= itemApproxChars(items[p] as MemoryItem);
    if (tokens !== undefined && tokenizer) tokens -= itemTokenCount(items[p] as MemoryItem, tokenizer);
  }
  // The fates that are not `dropped`, in source order, are the projected items, in order.
  const sent = report.fates.filter((f) => f.fate !== 'dropped').sort((a, b) => a.index - b.index);
  const orphanIndices = new Set<number>();
  if (sent.length === items.length) sent.forEach((f, p) => skip[p] === 1 && orphanIndices.add(f.index));
  const fates: ItemFate[] = report.fates.map((f) => (orphanIndices.has(f.index) && f.fate !== 'dropped' ? { index: f.index, fate: 'dropped', rule: 'orphan' } : f));
  return {
    items: kept,
    report: {
      ...report,
      projectedItemCount: kept.length,
      droppedItemCount: report.sourceItemCount - kept.length,
      projectedApproxChars: Math.max(0, chars),
      ...(tokens !== undefined ? { projectedTokens: Math.max(0, tokens) } : {}),
      notes: [...report.notes, `orphan: dropped ${dropped} tool item(s) sent without their call or output`],
      fates,
    },
  };
};

/**
 * What the runtime sends: `projector.project(items, budget)`, then {@link dropOrphans}. Replays and law checks
 * that re-project a recorded step use this, so they rebuild exactly what was sent.
 * @example const { items, report } = projectForModel(agent.projector, memory.getItems(), budget)
 */
export const projectForModel = (projector: ContextProjector, items: readonly MemoryItem[], budget?: ContextBudget): ContextProjection =>
  dropOrphans(projector.project(items, budget), projectorTokenizer(projector));
