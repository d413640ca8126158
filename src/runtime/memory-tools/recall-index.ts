// The recall index of a session: full-text (minisearch) over the text of every item that entered memory, kept current from the log.
import MiniSearch from 'minisearch';
import { decodeFateRuns, type SessionEvent } from '../../events/index.js';
import type { SessionEventLog } from '../../log/index.js';
import { visibleEntries, type MemoryState } from '../../memory/index.js';
import { itemsEnteredBy, recallKindOf, recallTextOf, seqOfId, type EnteredItem } from './item-text.js';

/** What the index stores of an item besides its terms: no text, so its size follows the vocabulary, not the log. */
interface IndexedDoc {
  readonly id: string;
  readonly kind: string;
  readonly step?: number;
}

export interface RecallHit {
  readonly id: string;
  readonly kind: string;
  readonly step?: number;
  readonly score: number;
  /** Terms of the item that matched the query. */
  readonly terms: readonly string[];
}

/** The last `context.projected` read: which items the model saw as they were is decided from it. */
interface LastProjection {
  readonly seq: number;
  readonly fateRuns: string;
}

/** Items longer than this are indexed by their first this many characters (the rest is still read back by id). */
export const MAX_INDEXED_CHARS = 8_000;
/** Items per index segment: a query searches segments newest first and stops once it has its hits. */
export const RECALL_SEGMENT_ITEMS = 10_000;

/**
 * The index of one session: built from the log on first use, brought up to the head before every query. It
 * holds terms and, per item, id, kind and step; texts and items are read back from the log for the few hits shown.
 * @example const index = recallIndexFor(log, sessionId); await index.catchUp(); index.search('timeout', state, 5)
 */
export class RecallIndex {
  /** Segments of {@link RECALL_SEGMENT_ITEMS} items, oldest first; items are added to the last. */
  readonly #segments: MiniSearch<IndexedDoc & { text: string }>[] = [];
  /** Tool call id → the item id of its first result (the call's original result). */
  readonly #callResults = new Map<string, string>();
  #seq = 0;
  #step: number | undefined;
  #lastProjection: LastProjection | undefined;
  #catchingUp: Promise<void> | undefined;

  readonly #segmentItems: number;

  constructor(
    readonly log: SessionEventLog,
    readonly sessionId: string,
    options: { readonly segmentItems?: number } = {},
  ) {
    this.#segmentItems = options.segmentItems ?? RECALL_SEGMENT_ITEMS;
  }

  /** The seq of the last event indexed. */
  get seq(): number {
    return this.#seq;
  }

  /** Items indexed. */
  get size(): number {
    return this.#segments.reduce((n, segment) => n + segment.documentCount, 0);
  }

  #current(): MiniSearch<IndexedDoc & { text: string }> {
    let last = this.#segments[this.#segments.length - 1];
    if (!last || last.documentCount >= this.#segmentItems) {
      last = new MiniSearch<IndexedDoc & { text: string }>({
        fields: ['text'],
        storeFields: ['kind', 'step'],
        // Prefixes of longer words only; no fuzzy matching (it multiplies the terms a query expands to).
        searchOptions: { prefix: (term: string) => term.length >= 4, combineWith: 'OR' },
      });
      this.#segments.push(last);
    }
    return last;
  }

  #segmentOf(id: string): MiniSearch<IndexedDoc & { text: string }> | undefined {
    for (let i = this.#segments.length - 1; i >= 0; i--) if (this.#segments[i]!.has(id)) return this.#segments[i];
    return undefined;
  }

  /** Reads the events appended since the last call (all of them the first time) and indexes what they brought in. */
  catchUp(): Promise<void> {
    // One reader at a time: parallel recalls share the same catch-up.
    const run = (this.#catchingUp ?? Promise.resolve()).then(() => this.#readNew());
    this.#catchingUp = run.catch(() => undefined);
    return run;
  }

  async #readNew(): Promise<void> {
    for await (const event of this.log.read(this.sessionId, { fromSeq: this.#seq + 1 })) this.add(event);
  }

  /** Indexes one event (give them in seq order, each once). */
  add(event: SessionEvent): void {
    if (event.seq <= this.#seq) return;
    this.#seq = event.seq;
    if (event.type === 'step.started') this.#step = event.step;
    else if (event.type === 'step.ended' || event.type === 'run.finished' || event.type === 'run.failed') this.#step = undefined;
    else if (event.type === 'context.projected') this.#lastProjection = { seq: event.seq, fateRuns: event.fateRuns };
    const step = 'step' in event && typeof event.step === 'number' ? event.step : this.#step;
    for (const entered of itemsEnteredBy(event)) this.#addItem(entered, step);
  }

  #addItem(entered: EnteredItem, step: number | undefined): void {
    if (entered.callId !== undefined && !this.#callResults.has(entered.callId)) this.#callResults.set(entered.callId, entered.id);
    const text = recallTextOf(entered.item);
    const kind = entered.tool !== undefined ? `function_call_output of ${entered.tool}` : recallKindOf(entered.item, entered.summary);
    this.#current().add({ id: entered.id, kind, ...(step !== undefined ? { step } : {}), text: text.length > MAX_INDEXED_CHARS ? text.slice(0, MAX_INDEXED_CHARS) : text });
  }

  /** Whether an item id was indexed. */
  has(id: string): boolean {
    return this.#segmentOf(id) !== undefined;
  }

  /** The item id of a tool call's original result. */
  resultOfCall(callId: string): string | undefined {
    return this.#callResults.get(callId);
  }

  /** The stored kind and step of an item. */
  describe(id: string): { kind: string; step?: number } | undefined {
    const stored = this.#segmentOf(id)?.getStoredFields(id) as { kind?: string; step?: number } | undefined;
    if (!stored || typeof stored.kind !== 'string') return undefined;
    return { kind: stored.kind, ...(typeof stored.step === 'number' ? { step: stored.step } : {}) };
  }

  /**
   * The ids the model sees as they were: items the last projection kept unchanged, and items that entered memory
   * after it (the model's own answer, results of this step). Everything else that entered memory is searchable.
   */
  seenIds(state: MemoryState): Set<string> {
    const visible = visibleEntries(state);
    const projection = this.#lastProjection;
    if (!projection) return new Set(visible.map((e) => e.id));
    // As the projection saw memory: the entries that had entered by then (the working-memory item keeps its place).
    const asProjected = visible.filter((e) => seqOfId(e.id) <= projection.seq || e.id === state.blocksId);
    const runs = decodeFateRuns(projection.fateRuns);
    const total = runs.reduce((n, run) => n + run.count, 0);
    // Memory was replaced since (a rewind outside a step): nothing lines up, so all of memory counts as seen.
    if (total !== asProjected.length) return new Set(visible.map((e) => e.id));
    const seen = new Set(visible.filter((e) => seqOfId(e.id) > projection.seq && e.id !== state.blocksId).map((e) => e.id));
    for (const run of runs) {
      if (run.fate !== 'kept') continue;
      for (let i = run.start; i < run.start + run.count; i++) seen.add(asProjected[i]!.id);
    }
    return seen;
  }

  /**
   * The best `limit` hits for `query` among items not in `exclude`: the segments are searched newest first until
   * `limit` hits are found (so a common word costs one segment, not the whole session), and the hits found are
   * ranked by score (ties: the order minisearch gives, which follows the order items were added).
   */
  search(query: string, exclude: ReadonlySet<string>, limit: number): RecallHit[] {
    const found: (ReturnType<MiniSearch['search']>[number])[] = [];
    for (let i = this.#segments.length - 1; i >= 0 && found.length < limit; i--) {
      found.push(...this.#segments[i]!.search(query, { filter: (result) => !exclude.has(result.id as string) }));
    }
    const results = found.map((r, order) => ({ r, order })).sort((a, b) => b.r.score - a.r.score || a.order - b.order).map((x) => x.r);
    return results.slice(0, limit).map((r) => {
      const stored = r as unknown as { kind: string; step?: number };
      return {
        id: r.id as string,
        kind: stored.kind,
        ...(typeof stored.step === 'number' ? { step: stored.step } : {}),
        score: r.score,
        terms: r.terms,
      };
    });
  }
}

const indexes = new WeakMap<SessionEventLog, Map<string, RecallIndex>>();

/**
 * The recall index of a session in a log, one per (log, session) in this process; brought current by `catchUp()`.
 * @example const index = recallIndexFor(log, 'task-42'); await index.catchUp()
 */
export const recallIndexFor = (log: SessionEventLog, sessionId: string): RecallIndex => {
  let bySession = indexes.get(log);
  if (!bySession) indexes.set(log, (bySession = new Map()));
  let index = bySession.get(sessionId);
  if (!index) bySession.set(sessionId, (index = new RecallIndex(log, sessionId)));
  return index;
};
