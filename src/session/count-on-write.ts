// countTokensOnWrite: memory's items counted with the session's tokenizer once they are stored, in the background of
// the step (decision 0038). The counts go into the memo projections read (itemTokenMemo), never into the log.
import type { Tokenizer } from '../context/index.js';
import { itemTokenMemo } from '../context/measure/items.js';
import { changesMemory, entriesAppendedFrom, visibleEntries, type MemoryEntry, type MemoryState } from '../memory/index.js';
import type { SessionEvent } from '../events/index.js';

/**
 * One background turn counts until its items' texts reach this many characters (about 4,000 tokens, 2 ms of
 * gpt-tokenizer), so a large batch is counted over several turns of the event loop. An item is never split.
 */
export const COUNT_CHUNK_CHARS = 16_384;
/** One background turn looks at most at this many items (those already counted cost a lookup each). */
export const COUNT_CHUNK_ITEMS = 1_024;

/** What the counter needs of the session's writer (`createLiveSession`). */
export interface CountingSource {
  /** Memory as last built (`build` false: what a write stored since may be missing), or built now (`build` true). */
  memory(build: boolean): MemoryState;
  /** Whether memory is built up to the last event stored. */
  built(): boolean;
  /** Whether a write is in flight (building memory now would be repeated by the next read after it). */
  writing(): boolean;
  /** Resolves once no write is in flight. Never rejects. */
  idle(): Promise<void>;
}

/** The background counter of one session. */
export interface WriteCounter {
  /** Told about each stored append (on the write's path: it only schedules). */
  stored(events: readonly SessionEvent[]): void;
  /** Resolves once every item memory holds has been counted, or tried (at once once closed). */
  drained(): Promise<void>;
  /** Stops: nothing is counted after it, pending turns are cancelled. */
  close(): void;
}

/**
 * Counts memory's items with `tokenizer` after each stored write that changes memory, one bounded chunk per turn of
 * the event loop (setImmediate), never during a write: it builds memory only when no write is in flight (so a burst of
 * appends still copies memory's entry list once), and otherwise counts what is built and waits for the writes to end.
 * New entries are found in O(changes) (`entriesAppendedFrom`); after a compaction, restore, clear or rewind, every
 * entry is looked at and only those not yet counted are counted. Starts with a pass over what memory holds (a resumed
 * session's tail, or items a checkpoint had no count for). A count that throws leaves its item uncounted (counted,
 * and so thrown, again by the projection that needs it) and is never rethrown here.
 */
export const createWriteCounter = (tokenizer: Tokenizer, source: CountingSource): WriteCounter => {
  const memo = itemTokenMemo(tokenizer);
  // The entry list looked at last, and how many of its entries have been counted (or tried).
  let list: readonly MemoryEntry[] = [];
  let cursor = 0;
  let headOf: MemoryState | undefined;
  let handle: ReturnType<typeof setImmediate> | undefined;
  let waitingIdle = false;
  let closed = false;
  let waiters: Array<() => void> = [];

  const done = (): boolean => closed || (handle === undefined && !waitingIdle);
  const settle = (): void => {
    if (!done() || waiters.length === 0) return;
    const told = waiters;
    waiters = [];
    for (const resolve of told) resolve();
  };
  const schedule = (): void => {
    if (closed || handle !== undefined || waitingIdle) return;
    handle = setImmediate(turn);
  };

  const countOne = (entry: MemoryEntry | undefined): number => {
    if (entry === undefined || memo.known(entry.item) !== undefined) return 0;
    try {
      memo.exact(entry.item);
      return memo.lastExactChars;
    } catch {
      // Left uncounted: the projection that needs the item counts it and throws the same error where it is seen.
      return 0;
    }
  };

  /** Takes the state's entry list as the one to count: appended to the last one, the cursor stays; otherwise from 0. */
  const follow = (state: MemoryState): void => {
    if (state.entries !== list) {
      if (entriesAppendedFrom(list, state.entries) < 0) cursor = 0;
      list = state.entries;
    }
    // The summary and the working-memory item (memoized items of their own), when they changed.
    if (headOf === undefined || state.summary !== headOf.summary || state.blocks !== headOf.blocks) {
      headOf = state;
      for (const entry of visibleEntries({ ...state, entries: [] })) countOne(entry);
    }
  };

  function turn(): void {
    handle = undefined;
    if (closed) return;
    try {
      const writing = source.writing();
      follow(source.memory(!writing));
      let chars = 0;
      let visited = 0;
      while (cursor < list.length && visited < COUNT_CHUNK_ITEMS && chars < COUNT_CHUNK_CHARS) {
        chars += countOne(list[cursor]);
        cursor += 1;
        visited += 1;
      }
      if (cursor < list.length) {
        schedule();
      } else if (!source.built()) {
        // What the writes in flight stored is not built yet: once they end, build it and count it.
        waitingIdle = true;
        void source.idle().then(() => {
          waitingIdle = false;
          schedule();
          settle();
        });
      }
    } catch {
      // Building memory failed (its readers see the same error); nothing escapes into the event loop.
    }
    settle();
  }

  schedule();
  return {
    stored(events) {
      if (closed || handle !== undefined || waitingIdle) return;
      for (const event of events) {
        if (changesMemory(event)) {
          schedule();
          return;
        }
      }
    },
    drained() {
      if (done()) return Promise.resolve();
      return new Promise((resolve) => waiters.push(resolve));
    },
    close() {
      closed = true;
      if (handle !== undefined) clearImmediate(handle);
      handle = undefined;
      settle();
    },
  };
};
