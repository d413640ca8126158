// The recall index of a session: full-text (minisearch) over the text of every item that entered memory, kept current from the log.
import MiniSearch from 'minisearch';
import { decodeFateRuns, type SessionEvent, type SessionEventOf } from '../../events/index.js';
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

type IndexedText = IndexedDoc & { text: string };

/** The minisearch index recall uses: text indexed, kind and step stored; prefixes of longer words, no fuzzy matching. */
export const newRecallSearch = (): MiniSearch<IndexedText> =>
  new MiniSearch<IndexedText>({
    fields: ['text'],
    storeFields: ['kind', 'step'],
    // Prefixes of longer words only; no fuzzy matching (it multiplies the terms a query expands to).
    searchOptions: { prefix: (term: string) => term.length >= 4, combineWith: 'OR' },
  });

/** The ids an `event.erased` removes from the index: every item of a fully erased event, and the scrubbed items of an event that held copies. */
const erasedTargets = (event: SessionEventOf<'event.erased'>): { seqs: readonly number[]; items: readonly string[] } => ({
  seqs: event.seqs,
  items: (event.copies ?? []).flatMap((copy) => copy.items ?? []),
});

/**
 * The index of one session: built from the log on first use, brought up to the head before every query. It
 * holds terms and, per item, id, kind and step; texts and items are read back from the log for the few hits shown.
 * One index over the whole session, so a query ranks every item by the same statistics (BM25 over the session).
 * Erased content leaves it: an `event.erased` removes the items it erased, and erased items are never indexed.
 * @example const index = recallIndexFor(log, sessionId); await index.catchUp(); index.search('timeout', state, 5)
 */
export class RecallIndex {
  readonly #index = newRecallSearch();
  /** Tool call id → the item id of its first result (the call's original result). */
  readonly #callResults = new Map<string, string>();
  /** seq → one more than the highest item index indexed for it, for seqs with an item past index 0 (so the items of an erased seq can be found). */
  readonly #itemsBySeq = new Map<number, number>();
  #seq = 0;
  #step: number | undefined;
  #lastProjection: LastProjection | undefined;
  #catchingUp: Promise<void> | undefined;

  constructor(
    readonly log: SessionEventLog,
    readonly sessionId: string,
  ) {}

  /** The seq of the last event indexed. */
  get seq(): number {
    return this.#seq;
  }

  /** Items indexed. */
  get size(): number {
    return this.#index.documentCount;
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

  /** Indexes one event (give them in seq order, each once); an `event.erased` removes what it erased. */
  add(event: SessionEvent): void {
    if (event.seq <= this.#seq) return;
    this.#seq = event.seq;
    if (event.type === 'step.started') this.#step = event.step;
    else if (event.type === 'step.ended' || event.type === 'run.finished' || event.type === 'run.failed') this.#step = undefined;
    else if (event.type === 'context.projected') this.#lastProjection = { seq: event.seq, fateRuns: event.fateRuns };
    else if (event.type === 'event.erased') this.#discardErased(event);
    const step = 'step' in event && typeof event.step === 'number' ? event.step : this.#step;
    const mark = event.erased;
    for (const entered of itemsEnteredBy(event)) {
      // erased content is not indexed (a session read after an erasure)
      if (mark !== undefined && (mark.copy !== true || (mark.items ?? []).includes(entered.id))) continue;
      this.#addItem(entered, step);
    }
  }

  #addItem(entered: EnteredItem, step: number | undefined): void {
    if (entered.callId !== undefined && !this.#callResults.has(entered.callId)) this.#callResults.set(entered.callId, entered.id);
    const text = recallTextOf(entered.item);
    const kind = entered.tool !== undefined ? `function_call_output of ${entered.tool}` : recallKindOf(entered.item, entered.summary);
    this.#index.add({ id: entered.id, kind, ...(step !== undefined ? { step } : {}), text: text.length > MAX_INDEXED_CHARS ? text.slice(0, MAX_INDEXED_CHARS) : text });
    const index = Number(entered.id.slice(entered.id.indexOf(':') + 1));
    if (Number.isInteger(index) && index > 0) this.#itemsBySeq.set(seqOfId(entered.id), Math.max(this.#itemsBySeq.get(seqOfId(entered.id)) ?? 1, index + 1));
  }

  #discard(id: string): void {
    if (this.#index.has(id)) this.#index.discard(id);
  }

  #discardErased(event: SessionEventOf<'event.erased'>): void {
    const { seqs, items } = erasedTargets(event);
    for (const seq of seqs) {
      const count = this.#itemsBySeq.get(seq) ?? 1;
      for (let i = 0; i < count; i++) this.#discard(`${seq}:${i}`);
      this.#discard(`${seq}:summary`);
      this.#itemsBySeq.delete(seq);
    }
    for (const id of items) this.#discard(id);
  }

  /** Whether an item id was indexed (and not erased since). */
  has(id: string): boolean {
    return this.#index.has(id);
  }

  /** The item id of a tool call's original result. */
  resultOfCall(callId: string): string | undefined {
    return this.#callResults.get(callId);
  }

  /** The stored kind and step of an item. */
  describe(id: string): { kind: string; step?: number } | undefined {
    const stored = this.#index.getStoredFields(id) as { kind?: string; step?: number } | undefined;
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
   * The best `limit` hits for `query` among items not in `exclude`, ranked by minisearch's BM25 score over the whole
   * session (ties: the order items were added), exactly as `MiniSearch.search` ranks them. The same events give the
   * same hits on every store.
   */
  search(query: string, exclude: ReadonlySet<string>, limit: number): RecallHit[] {
    const options = exclude.size > 0 ? { boostDocument: (id: unknown) => (exclude.has(id as string) ? 0 : 1) } : {};
    const results = topResults(this.#index, query, options, limit) ?? this.#index.search(query, options).slice(0, limit);
    return results.map((r) => {
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

/** The parts of minisearch 7 `topResults` ranks with (not in its typings: `search` builds and sorts a result per match). */
interface MiniSearchInternals {
  executeQuery(query: string, options: object): Map<number, { score: number; terms: string[]; match: Record<string, unknown> }>;
  readonly _documentIds: Map<number, unknown>;
  readonly _storedFields: Map<number, Record<string, unknown> | undefined>;
}

/** Whether this minisearch has the internals {@link topResults} needs (a test keeps an upgrade from losing them unnoticed). */
export const hasRankingInternals = (index: MiniSearch<IndexedText>): boolean => {
  const engine = index as unknown as Partial<MiniSearchInternals>;
  return typeof engine.executeQuery === 'function' && engine._documentIds instanceof Map && engine._storedFields instanceof Map;
};

/**
 * The first `limit` results of `index.search(query, options)`, the same ones in the same order (score times the
 * number of query terms matched, ties in match order), without building and sorting a result for every match: on a
 * word most items contain, that is most of a query's time. Undefined when this minisearch lacks the internals (then
 * `search` is used).
 */
export const topResults = (index: MiniSearch<IndexedText>, query: string, options: object, limit: number): { id: unknown; score: number; terms: string[] }[] | undefined => {
  if (!hasRankingInternals(index)) return undefined;
  if (limit < 1) return [];
  const engine = index as unknown as MiniSearchInternals;
  const top: { short: number; score: number; terms: string[] }[] = [];
  for (const [short, raw] of engine.executeQuery(query, options)) {
    const score = raw.score * (raw.terms.length || 1);
    if (top.length === limit && score <= top[top.length - 1]!.score) continue;
    let at = top.length;
    while (at > 0 && top[at - 1]!.score < score) at--;
    top.splice(at, 0, { short, score, terms: Object.keys(raw.match) });
    if (top.length > limit) top.pop();
  }
  return top.map((t) => ({ ...engine._storedFields.get(t.short), id: engine._documentIds.get(t.short), score: t.score, terms: t.terms }));
};

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
