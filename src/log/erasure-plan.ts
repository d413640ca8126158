// What one erase writes, planned from the session's stored events (every store runs this, then writes it atomically).
import { newEventSchemaFor, type NewSessionEvent } from '../events/index.js';
import { isRecord } from '../base/index.js';
import { checkLink } from './chain-check.js';
import { createCopyScan } from './erasure-copies.js';
import { ErasureRefusedError, checkItemIds, erasedStoredText, scrubbedStoredText, selectionOf, type EraseOptions, type ErasedMark } from './erasure.js';
import { payloadDigestOf, type ChainKey } from './hash-chain.js';

/** An event that held copies of erased content: its seq, the sha256 of its payload as scrubbed, its scrubbed item ids. */
export interface ScrubbedEntry {
  readonly seq: number;
  readonly digest: string;
  readonly items?: readonly string[];
}

/** What an erase writes: the rewritten events (erased and scrubbed) and the `event.erased` event to append. */
export interface ErasurePlan {
  readonly erased: readonly number[];
  readonly copies: readonly ScrubbedEntry[];
  /** New stored texts by seq (the events erased and those scrubbed of copies). */
  readonly writes: readonly { readonly seq: number; readonly text: string }[];
  /** The `event.erased` payload (validated). */
  readonly event: NewSessionEvent;
}

export interface ErasureInput {
  readonly sessionId: string;
  readonly selector: unknown;
  /** Checked options (eraseOptionsOf). */
  readonly options: EraseOptions;
  readonly head: number;
  /** Seq and stamp the `event.erased` event will have (the marks name it). */
  readonly erasedSeq: number;
  readonly at: string;
  readonly chainKey: ChainKey | undefined;
  /** The session's stored events from `fromSeq` to the head, in seq order. */
  readonly events: (fromSeq: number) => AsyncIterable<{ readonly seq: number; readonly text: string }>;
}

/** The `event.erased` payload for these seqs, validated. */
export const erasedEventOf = (seqs: readonly number[], options: EraseOptions, copies: readonly ScrubbedEntry[] = []): NewSessionEvent => {
  const raw = {
    type: 'event.erased',
    seqs: [...seqs],
    reason: options.reason,
    ...(options.by === undefined ? {} : { by: options.by }),
    ...(copies.length > 0 ? { copies: copies.map((c) => ({ seq: c.seq, digest: c.digest, ...(c.items && c.items.length > 0 ? { items: [...c.items] } : {}) })) } : {}),
  };
  const parsed = newEventSchemaFor('event.erased').safeParse(raw);
  if (!parsed.success) throw new ErasureRefusedError('', `the event.erased event does not validate: ${parsed.error.message}`);
  return parsed.data as NewSessionEvent;
};

const parse = (text: string): Record<string, unknown> | undefined => {
  try {
    const raw: unknown = JSON.parse(text);
    return isRecord(raw) && typeof raw['hash'] === 'string' ? raw : undefined;
  } catch {
    return undefined;
  }
};

/**
 * Plans an erase: checks the selector against the stored events (refusing, with nothing written, an unknown seq, an
 * item id that names no item, an `event.erased` event, a damaged event), rewrites each selected event to its
 * placeholder, and, reading the rest of the session in order, scrubs the events that hold copies of the content
 * erased (see `createCopyScan`). Undefined when nothing is left to erase.
 */
export const planErasure = async (input: ErasureInput): Promise<ErasurePlan | undefined> => {
  const { sessionId, options } = input;
  const selection = selectionOf(sessionId, input.selector, input.head);
  const selected = new Set(selection.seqs);
  const base: ErasedMark = { seq: input.erasedSeq, at: input.at, reason: options.reason, ...(options.by === undefined ? {} : { by: options.by }) };
  // { all: true } erases every event: no copy can survive outside them
  const scan = selection.all ? undefined : createCopyScan();
  const from = scan ? 1 : (selection.seqs[0] ?? 1);
  const erased: number[] = [];
  const copies: ScrubbedEntry[] = [];
  const writes: { seq: number; text: string }[] = [];
  const seen = new Set<number>();
  const damaged = (seq: number, detail = 'the event is missing or damaged (run verify)'): never => {
    throw new ErasureRefusedError(sessionId, detail, seq);
  };
  for await (const { seq, text } of input.events(from)) {
    const raw = parse(text);
    if (selected.has(seq)) {
      seen.add(seq);
      if (!raw) return damaged(seq);
      if (raw['type'] === 'event.erased') {
        if (selection.all) continue;
        throw new ErasureRefusedError(sessionId, 'it is an event.erased event (the record of an erasure is kept)', seq);
      }
      checkItemIds(sessionId, selection, seq, raw);
      const mark = raw['erased'];
      // Erased already: not erased again, but checked for copies below like any other event (its placeholder may keep
      // a digest over content this erase removes: found by the erasure property, seed 446829174).
      if (!(isRecord(mark) && mark['copy'] !== true)) {
        const self = checkLink(sessionId, seq, text, String(raw['prevHash']), input.chainKey);
        if (typeof self === 'string') damaged(seq, `the event is damaged (${self}); run verify`);
        const stored = erasedStoredText(raw, base, scan?.beforeErasing(seq, raw));
        writes.push({ seq, text: stored });
        erased.push(seq);
        scan?.erased(seq, raw, JSON.parse(stored) as Record<string, unknown>);
        continue;
      }
    }
    if (!scan || !raw) continue;
    const copy = scan.check(seq, raw);
    if (!copy) continue;
    const self = checkLink(sessionId, seq, text, String(raw['prevHash']), input.chainKey);
    if (typeof self === 'string') damaged(seq, `the event holds a copy of the erased content but is damaged (${self}); run verify`);
    // an event erased before keeps its own mark (its placeholder only loses a digest over content erased now)
    const mark: ErasedMark = copy.erasedBefore ? (raw['erased'] as unknown as ErasedMark) : { ...base, copy: true, ...(copy.items.length > 0 ? { items: copy.items } : {}) };
    const stored = scrubbedStoredText(raw, copy.payload, mark);
    const storedEvent = JSON.parse(stored) as Record<string, unknown>;
    scan.scrubbed(seq, raw, copy, storedEvent);
    writes.push({ seq, text: stored });
    copies.push({ seq, digest: payloadDigestOf(storedEvent), ...(copy.items.length > 0 ? { items: copy.items } : {}) });
  }
  const missing = selection.seqs.find((seq) => !seen.has(seq));
  if (missing !== undefined) damaged(missing);
  if (erased.length === 0) return undefined;
  return { erased, copies, writes, event: erasedEventOf(erased, options, copies) };
};
