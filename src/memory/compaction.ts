// Turning a compaction's resulting memory into a `memory.compacted` event, by item identity.
import {
  emptyCompactLists,
  type ComponentDescription,
  type CompactResultRecord,
  type MemorySnapshot,
  type NewSessionEventOf,
} from '../events/index.js';
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

const dedupe = (...lists: readonly (readonly string[] | undefined)[]): string[] => {
  const seen = new Set<string>();
  for (const list of lists) for (const value of list ?? []) seen.add(value);
  return [...seen];
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
  const layout: ({ keep: string } | { item: MemoryItem })[] = [];
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
  const droppedIds = state.entries.filter((e) => !kept.has(e.id)).map((e) => e.id);
  const summary = memory.summary ?? null;
  const result: CompactResultRecord = {
    ...emptyCompactLists(),
    ...record,
    summary,
    readFiles: dedupe(state.readFiles, record.readFiles),
    modifiedFiles: dedupe(state.modifiedFiles, record.modifiedFiles),
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
