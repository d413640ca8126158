// Turning a compaction's resulting memory into a `memory.compacted` event, by item identity.
import { emptyCompactLists, type ComponentDescription, type CompactResultRecord, type MemorySnapshot, type NewSessionEventOf } from '../events/index.js';
import { uniqueStrings } from '../base/index.js';
import type { MemoryItem } from '../items/index.js';
import type { MemoryState } from './state.js';

export interface CompactionMeta {
  readonly trigger: 'auto' | 'manual';
  readonly policy: ComponentDescription;
  readonly step?: number | undefined;
  readonly summarizer?: { readonly request: unknown; readonly rawAnswer: string } | undefined;
  /** The facts the compaction saw: it clears those up to this seq (default: every fact in `state`). */
  readonly factsThroughSeq?: number | undefined;
}

/** The seq of the newest fact in a list (0 when there is none). */
export const lastFactSeq = (facts: readonly { readonly seq: number }[]): number => facts.reduce((max, f) => Math.max(max, f.seq), 0);


/** What ties a placeholder to the item it stands for: a tool result's call_id, a reasoning item's id. */
const placeholderKey = (item: MemoryItem): string | undefined => {
  const record = item as Record<string, unknown>;
  if (item.type === 'function_call_output' && typeof record['call_id'] === 'string') return `output:${record['call_id']}`;
  if (item.type === 'reasoning' && typeof record['id'] === 'string') return `reasoning:${record['id']}`;
  return undefined;
};

/**
 * Builds the `memory.compacted` event that turns `state` into `memory`: items that are the same
 * objects as memory entries are kept by id, anything else is written inline; every entry not kept
 * is named in `droppedIds`. File lists accumulate with the ones already in memory.
 */
export const compactionEventFor = (
  state: MemoryState,
  memory: MemorySnapshot,
  record: Partial<CompactResultRecord>,
  meta: CompactionMeta,
): NewSessionEventOf<'memory.compacted'> => {
  const idsByItem = new Map<MemoryItem, string[]>();
  for (const entry of state.entries) {
    const ids = idsByItem.get(entry.item);
    if (ids) ids.push(entry.id);
    else idsByItem.set(entry.item, [entry.id]);
  }
  const layout: ({ keep: string } | { item: MemoryItem; replaces?: string })[] = [];
  const keptIds: string[] = [];
  for (const item of memory.items) {
    const id = idsByItem.get(item)?.shift();
    if (id !== undefined) {
      layout.push({ keep: id });
      keptIds.push(id);
    } else {
      layout.push({ item });
    }
  }
  const kept = new Set(keptIds);
  // An inline item that stands for a dropped one (a cleared tool result: same call_id; a trimmed
  // reasoning item: same id) names it, so an audit can find the original.
  const replaceable = new Map<string, string>();
  for (const entry of state.entries) {
    if (kept.has(entry.id)) continue;
    const key = placeholderKey(entry.item);
    if (key !== undefined && !replaceable.has(key)) replaceable.set(key, entry.id);
  }
  for (let i = 0; i < layout.length; i++) {
    const slot = layout[i] as { item?: MemoryItem };
    if (!slot.item) continue;
    const key = placeholderKey(slot.item);
    const original = key === undefined ? undefined : replaceable.get(key);
    if (original !== undefined && key !== undefined) {
      layout[i] = { item: slot.item, replaces: original };
      replaceable.delete(key);
    }
  }
  const droppedIds = state.entries.filter((e) => !kept.has(e.id)).map((e) => e.id);
  const summary = memory.summary ?? null;
  const result: CompactResultRecord = {
    ...emptyCompactLists(),
    ...record,
    summary,
    readFiles: uniqueStrings(state.readFiles, record.readFiles),
    modifiedFiles: uniqueStrings(state.modifiedFiles, record.modifiedFiles),
  };
  return {
    type: 'memory.compacted',
    trigger: meta.trigger,
    policy: meta.policy,
    ...(meta.step !== undefined ? { step: meta.step } : {}),
    layout,
    keptIds,
    droppedIds,
    summary,
    result,
    ...(meta.summarizer !== undefined ? { summarizer: meta.summarizer } : {}),
    factsThroughSeq: meta.factsThroughSeq ?? lastFactSeq(state.facts),
  };
};
