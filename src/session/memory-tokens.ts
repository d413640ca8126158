// Memory's tokens per step at O(new items): a running count over the entries, recounted only when entries are replaced.
// Whether the entries only grew is O(1) for lists the memory fold built by appending (entriesAppendedFrom).
import { itemTokenCount, type Tokenizer } from '../context/index.js';
import { systemMessage } from '../items/index.js';
import { entriesAppendedFrom, type MemoryEntry, type MemoryState } from '../memory/index.js';

/** Memory's tokens (summary included) and what the last compaction left (its items, and their tokens with the summary). */
export interface MemoryMeasure {
  readonly tokens: number;
  /** Memory's items (entries), so a trigger need not list them. */
  readonly items: number;
  readonly lastCompaction?: { readonly items: number; readonly tokens: number };
}

const seqOfId = (id: string): number => {
  const colon = id.indexOf(':');
  return Number(colon < 0 ? id : id.slice(0, colon));
};

/**
 * Counts memory's tokens with `tokenizer` step after step: entries appended since the last call are counted (each
 * item's count is memoised by the context layer), earlier ones are not; a compaction, restore or clear (entries no
 * longer a prefix-extension of the last ones) recounts once.
 * @example const measure = memoryTokenTracker(openAiTokenizer()); measure(memory.state()).tokens
 */
export const memoryTokenTracker = (tokenizer: Tokenizer): ((state: MemoryState) => MemoryMeasure) => {
  let entries: readonly MemoryEntry[] = [];
  let itemTokens = 0;
  let leftItems = 0;
  let leftTokens = 0;
  let compactionSeq: number | undefined;
  let summary: string | null = null;
  let summaryTokens = 0;
  return (state) => {
    const through = state.lastCompaction?.seq;
    let extends_ = through === compactionSeq && state.entries.length >= entries.length;
    // O(1) when the memory fold built the lists by appending (entriesAppendedFrom); entry by entry otherwise.
    if (extends_ && entriesAppendedFrom(entries, state.entries) !== entries.length) {
      for (let i = 0; extends_ && i < entries.length; i++) if (state.entries[i] !== entries[i]) extends_ = false;
    }
    if (!extends_) {
      itemTokens = 0;
      leftItems = 0;
      leftTokens = 0;
      entries = [];
    }
    for (let i = entries.length; i < state.entries.length; i++) {
      const entry = state.entries[i]!;
      const count = itemTokenCount(entry.item, tokenizer);
      itemTokens += count;
      if (through !== undefined && seqOfId(entry.id) <= through) {
        leftItems += 1;
        leftTokens += count;
      }
    }
    entries = state.entries;
    compactionSeq = through;
    if (state.summary !== summary) {
      summary = state.summary;
      summaryTokens = summary !== null && summary.trim() !== '' ? itemTokenCount(systemMessage(summary), tokenizer) : 0;
    }
    const tokens = itemTokens + summaryTokens;
    const items = state.entries.length;
    return through === undefined ? { tokens, items } : { tokens, items, lastCompaction: { items: leftItems, tokens: leftTokens + summaryTokens } };
  };
};
