// MemoryState: the folded state of one session's events.
import type { ComponentDescription, CompactResultRecord, RecordedFact, SessionEventOf, FactEventType } from '../events/index.js';
import type { MemoryItem } from '../items/index.js';

/** A memory item with the stable id of the event that brought it in: `"<seq>:<index>"`. */
export interface MemoryEntry {
  readonly id: string;
  readonly item: MemoryItem;
}

export interface LastCompaction {
  readonly seq: number;
  readonly trigger: 'auto' | 'manual';
  readonly policy: ComponentDescription;
  readonly result: CompactResultRecord;
}

export interface MemoryState {
  readonly entries: readonly MemoryEntry[];
  readonly summary: string | null;
  /** Id of the summary when shown as a message: `"<seq>:summary"` of the event that set it. */
  readonly summaryId: string | null;
  /** Recorded facts since the last compaction. */
  readonly facts: readonly RecordedFact[];
  readonly readFiles: readonly string[];
  readonly modifiedFiles: readonly string[];
  readonly lastCompaction: LastCompaction | null;
}

export const initialMemoryState: MemoryState = Object.freeze({
  entries: Object.freeze([]) as readonly MemoryEntry[],
  summary: null,
  summaryId: null,
  facts: Object.freeze([]) as readonly RecordedFact[],
  readFiles: Object.freeze([]) as readonly string[],
  modifiedFiles: Object.freeze([]) as readonly string[],
  lastCompaction: null,
});

/** Id of the `index`-th item an event at `seq` brought into memory. */
export const itemId = (seq: number, index: number): string => `${seq}:${index}`;
export const summaryIdOf = (seq: number): string => `${seq}:summary`;

/** A fact event as memory keeps it: without the envelope fields other than `seq`. */
export const factOf = (event: SessionEventOf<FactEventType>): RecordedFact => {
  const { sessionId: _s, at: _a, v: _v, prevHash: _p, hash: _h, ...fact } = event;
  return fact as RecordedFact;
};
