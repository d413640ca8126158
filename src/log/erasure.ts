// Erasure: which events a selector names, the placeholder payload an erased event keeps, and its rewritten stored text.
import { isEventType, newEventSchemaFor, type NewSessionEvent } from '../events/index.js';
import { canonicalJson, isRecord } from '../base/index.js';
import { ContextLedgerError, InvalidOptionsError } from '../base/errors.js';
import { contentDigestOf, isEnvelopeKey } from './hash-chain.js';

/** What an erased event's strings become. */
export const ERASED_PLACEHOLDER = '[erased]';

/** Which events `log.erase` removes the payload of: seqs, memory item ids (`seq:index`), or every event of the session. */
export type EraseSelector = { readonly seqs: readonly number[] } | { readonly itemIds: readonly string[] } | { readonly all: true };

export interface EraseOptions {
  /** Why (kept in the `event.erased` event and on each erased event). Required. */
  readonly reason: string;
  /** Who asked for it. */
  readonly by?: string;
}

export interface EraseResult {
  /** The seqs whose payload this call removed (already erased ones are left out). */
  readonly erased: readonly number[];
  /** The seq of the `event.erased` event appended, or undefined when nothing was left to erase. */
  readonly seq: number | undefined;
  /**
   * Later events that held copies of the erased content and were scrubbed in the same write (a rewind's carried
   * memory, a restore's or compaction's items, a recall's answer, digests over the content); present only when any.
   */
  readonly copies?: readonly number[];
}

/** The mark an erased event carries (not covered by its hash; verify checks it against the `event.erased` event). */
export interface ErasedMark {
  readonly seq: number;
  readonly at: string;
  readonly reason: string;
  readonly by?: string;
  /** The event was not erased itself: it held copies of erased content, which were scrubbed. */
  readonly copy?: true;
  /** With `copy`: the ids of the event's own items whose content was scrubbed. */
  readonly items?: readonly string[];
}

/**
 * `log.erase` named a session with no events, a seq past the head, an item id that names no item of its event, an
 * `event.erased` event, or an event that is missing or damaged (run `verify`); nothing was written. Bad selectors and
 * options (no `reason`, seq 0, an item id that is not `seq:index`) are `INVALID_OPTIONS`.
 */
export class ErasureRefusedError extends ContextLedgerError {
  static override readonly code = 'ERASURE_REFUSED';
  constructor(
    readonly sessionId: string,
    readonly problem: string,
    /** The seq the problem is at, when there is one. */
    readonly seq?: number,
  ) {
    super(`cannot erase in session ${JSON.stringify(sessionId)}${seq === undefined ? '' : ` (seq ${seq})`}: ${problem}; nothing was written`);
  }
}
/** @deprecated use ErasureRefusedError.isInstance */ export const isErasureRefusedError = (e: unknown): e is ErasureRefusedError => ErasureRefusedError.isInstance(e);

/**
 * Keys whose string values are structure, not content: an erased event keeps them so ids, pairs, counts and
 * projection digests stay (a working-memory block's name, the ids a carried memory state names, a compaction's
 * trigger too). Part of the stored format: changing it needs a new chain version.
 */
const STRUCTURE_KEYS: ReadonlySet<string> = new Set([
  'type',
  'role',
  'id',
  'call_id',
  'callId',
  'parentCallId',
  'runId',
  'name',
  'keep',
  'replaces',
  'keptIds',
  'droppedIds',
  'digest',
  'block',
  'summaryId',
  'blocksId',
  'trigger',
]);

const blank = (value: unknown, key: string | undefined): unknown => {
  if (key !== undefined && STRUCTURE_KEYS.has(key)) return value;
  if (typeof value === 'string') return ERASED_PLACEHOLDER;
  if (Array.isArray(value)) return value.map((v) => blank(v, key === 'keptIds' || key === 'droppedIds' ? key : undefined));
  if (isRecord(value)) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value)) out[k] = blank(value[k], k);
    return out;
  }
  return value;
};

/**
 * The placeholder of any value (an item, a request, a block): every string `[erased]` but structure (types, roles,
 * ids, call ids, names); numbers, booleans and array lengths stay.
 * @example placeholderOf({ type: 'message', role: 'user', content: 'my key' }) // { type: 'message', role: 'user', content: '[erased]' }
 */
export const placeholderOf = <T>(value: T): T => blank(value, undefined) as T;

/** Keys a recorded fact in a memory state carries besides its event's payload (what memory keeps of the envelope). */
const FACT_ENVELOPE_KEYS = new Set(['type', 'seq', 'contentDigest', 'contentSalt', 'redactions', 'erased']);

/** A recorded fact (in a carried memory state) as its event type's placeholder, so it still parses as that fact. */
const placeholderFact = (fact: unknown): unknown => {
  if (!isRecord(fact) || typeof fact['type'] !== 'string') return blank(fact, undefined);
  const payload: Record<string, unknown> = {};
  const kept: Record<string, unknown> = {};
  for (const key of Object.keys(fact)) (FACT_ENVELOPE_KEYS.has(key) ? kept : payload)[key] = fact[key];
  const { contentSalt: _salt, contentDigest: _digest, ...envelope } = kept;
  return { ...blank(envelope, undefined) as Record<string, unknown>, type: fact['type'], seq: fact['seq'], ...placeholderPayload(fact['type'], payload) };
};

const valueAt = (root: unknown, path: readonly PropertyKey[]): { found: boolean; value: unknown } => {
  let node: unknown = root;
  for (const part of path) {
    if (node === null || typeof node !== 'object' || !(String(part) in (node as object))) return { found: false, value: undefined };
    node = (node as Record<string, unknown>)[String(part)];
  }
  return { found: true, value: node };
};

const setAt = (root: Record<string, unknown>, path: readonly PropertyKey[], value: unknown): void => {
  let node: Record<string, unknown> = root;
  for (let i = 0; i < path.length - 1; i++) node = node[String(path[i])] as Record<string, unknown>;
  node[String(path[path.length - 1])] = value;
};

/**
 * The payload an erased event keeps: every string replaced by `[erased]` except structure (types, roles,
 * ids, call ids, tool names, kept and dropped ids) and values the event's schema constrains (enums,
 * patterns), so it still decodes as its type with the same items, ids and counts. Numbers, booleans and
 * array lengths stay. Deterministic and idempotent.
 * @example placeholderPayload('tool.result', { callId: 'c1', output: 'sk-…', isError: false }) // { callId: 'c1', output: '[erased]', isError: false }
 */
export const placeholderPayload = (type: string, payload: Record<string, unknown>): Record<string, unknown> => {
  const out = blank(payload, undefined) as Record<string, unknown>;
  // A rewind's carried memory: each recorded fact as its own event type's placeholder (enums kept), so it still parses.
  const memory = payload['memory'];
  if (type === 'session.rewound' && isRecord(memory) && Array.isArray(memory['facts']) && isRecord(out['memory'])) {
    out['memory'] = { ...out['memory'], facts: memory['facts'].map(placeholderFact) };
  }
  // A projection's token counts are keyed by digests of the texts of memory: content, not structure.
  if (type === 'context.projected') delete out['tokenCounts'];
  if (!isEventType(type)) return out;
  const schema = newEventSchemaFor(type);
  for (let round = 0; round < 64; round++) {
    const parsed = schema.safeParse({ ...out, type } as unknown as NewSessionEvent);
    if (parsed.success) return out;
    let restored = 0;
    for (const issue of parsed.error.issues) {
      const path = issue.path;
      if (path.length === 0) continue;
      const original = valueAt(payload, path);
      const current = valueAt(out, path);
      if (original.found && current.found && canonicalJson(current.value) !== canonicalJson(original.value)) {
        setAt(out, path, original.value);
        restored += 1;
      }
    }
    if (restored === 0) break;
  }
  return out;
};

/** Whether `payload` is already what {@link placeholderPayload} makes of it (what verify asks of an erased event). */
export const isPlaceholderPayload = (type: string, payload: Record<string, unknown>): boolean =>
  canonicalJson(placeholderPayload(type, payload)) === canonicalJson(payload);

/** Splits a stored event into its envelope (without `hash`) and its payload. */
const splitStored = (raw: Record<string, unknown>): { envelope: Record<string, unknown>; payload: Record<string, unknown> } => {
  const payload: Record<string, unknown> = {};
  const envelope: Record<string, unknown> = {};
  for (const key of Object.keys(raw)) {
    if (key === 'hash') continue;
    if (isEnvelopeKey(key)) envelope[key] = raw[key];
    else payload[key] = raw[key];
  }
  // chain version 2: the digest of the payload as stored (what its hash covers), recomputed rather than trusted; an
  // event scrubbed before keeps the one it has (its payload is no longer what was hashed)
  if (typeof envelope['contentDigest'] === 'string' && raw['erased'] === undefined) envelope['contentDigest'] = contentDigestOf(raw);
  // the salt goes with the content: without it the kept digest cannot be matched against guesses
  delete envelope['contentSalt'];
  delete envelope['erased'];
  return { envelope, payload };
};

/** The canonical stored text of an event with `hash` last. */
const storedText = (event: Record<string, unknown>, hash: unknown): string => `${canonicalJson(event).slice(0, -1)},"hash":${JSON.stringify(hash)}}`;

/**
 * The stored text of an erased event: its envelope (hash and, in chain version 2, `contentDigest` kept; its
 * `contentSalt` removed), the placeholder payload (of `scrubbed` when given: the payload with copies of other erased
 * content scrubbed first) and the `erased` mark, as canonical JSON with `hash` last.
 */
export const erasedStoredText = (raw: Record<string, unknown>, mark: ErasedMark, scrubbed?: Record<string, unknown>): string => {
  const { envelope, payload } = splitStored(raw);
  return storedText({ ...envelope, ...placeholderPayload(String(raw['type']), scrubbed ?? payload), erased: { ...mark } }, raw['hash']);
};

/**
 * The stored text of an event that held copies of erased content: its envelope as for an erased event (hash and
 * digest kept, salt removed), `payload` (the scrubbed payload) and the mark (`copy: true`), with `hash` last.
 */
export const scrubbedStoredText = (raw: Record<string, unknown>, payload: Record<string, unknown>, mark: ErasedMark): string => {
  const { envelope } = splitStored(raw);
  return storedText({ ...envelope, ...payload, erased: { ...mark } }, raw['hash']);
};

/**
 * The indexes of the memory items an event brings in (what an item id `seq:index` can name): the items of an input or
 * a model answer, a top-level tool result's one, a restore's items, a compaction's inline items.
 */
export const itemIndexesOf = (raw: Record<string, unknown>): number[] => {
  const indexes = (list: unknown): number[] => (Array.isArray(list) ? list.map((_, i) => i) : []);
  switch (raw['type']) {
    case 'user.input':
    case 'model.output':
    case 'model.responded':
    case 'memory.restored':
      return indexes(raw['items']);
    case 'tool.result':
      return raw['parentCallId'] === undefined ? [0] : [];
    case 'memory.compacted':
    case 'memory.edited':
      return Array.isArray(raw['layout']) ? raw['layout'].flatMap((slot, i) => (isRecord(slot) && 'item' in slot ? [i] : [])) : [];
    default:
      return [];
  }
};

/** The erase options, checked. */
export const eraseOptionsOf = (options: unknown): EraseOptions => {
  const issues: { path: string; message: string }[] = [];
  if (!isRecord(options)) {
    throw new InvalidOptionsError('log.erase', [{ path: '', message: 'expected { reason, by? }' }]);
  }
  const reason = options['reason'];
  const by = options['by'];
  if (typeof reason !== 'string' || reason.trim() === '') issues.push({ path: 'reason', message: 'must be a non-empty string (why the content is erased)' });
  if (by !== undefined && (typeof by !== 'string' || by.trim() === '')) issues.push({ path: 'by', message: 'must be a non-empty string when given' });
  if (issues.length > 0) throw new InvalidOptionsError('log.erase', issues);
  return by === undefined ? { reason: reason as string } : { reason: reason as string, by: by as string };
};

/** What a selector names: the seqs (sorted, unique), whether it is `{ all: true }`, and for item ids the indexes each seq must have. */
export interface Selection {
  readonly seqs: readonly number[];
  readonly all: boolean;
  /** seq → the item ids given for it (checked against the event: each must name one of its items). */
  readonly items: ReadonlyMap<number, readonly { readonly id: string; readonly index: number }[]>;
}

/**
 * The seqs a selector names, sorted and unique, checked against the head; `{ all: true }` names every
 * seq (the caller leaves out `event.erased` events).
 */
export const selectedSeqs = (sessionId: string, selector: unknown, head: number): number[] => [...selectionOf(sessionId, selector, head).seqs];

/** {@link selectedSeqs}, with the item ids given per seq. */
export const selectionOf = (sessionId: string, selector: unknown, head: number): Selection => {
  const items = new Map<number, { id: string; index: number }[]>();
  const bad = (message: string): never => {
    throw new InvalidOptionsError('log.erase', [{ path: 'selector', message }]);
  };
  if (!isRecord(selector)) return bad('expected { seqs: [...] }, { itemIds: [...] } or { all: true }');
  const keys = Object.keys(selector);
  if (keys.length !== 1) bad(`give exactly one of seqs, itemIds, all; got ${JSON.stringify(keys)}`);
  const seqs: number[] = [];
  if ('all' in selector) {
    if (selector['all'] !== true) bad('all must be true');
    for (let seq = 1; seq <= head; seq++) seqs.push(seq);
  } else if ('seqs' in selector) {
    const list = selector['seqs'];
    if (!Array.isArray(list) || list.length === 0) bad('seqs must be a non-empty array of positive integers');
    (list as unknown[]).forEach((seq, i) => {
      if (!Number.isSafeInteger(seq) || (seq as number) < 1) bad(`seqs.${i} must be a positive integer, got ${JSON.stringify(seq)}`);
      seqs.push(seq as number);
    });
  } else if ('itemIds' in selector) {
    const list = selector['itemIds'];
    if (!Array.isArray(list) || list.length === 0) bad('itemIds must be a non-empty array of item ids ("seq:index")');
    (list as unknown[]).forEach((id, i) => {
      const match = typeof id === 'string' ? /^([1-9][0-9]*):(0|[1-9][0-9]*)$/.exec(id) : null;
      if (!match) return bad(`itemIds.${i} is not an item id ("seq:index"): ${JSON.stringify(id)}`);
      const seq = Number(match[1]);
      seqs.push(seq);
      const list = items.get(seq) ?? [];
      list.push({ id: id as string, index: Number(match[2]) });
      items.set(seq, list);
    });
  } else {
    bad('expected { seqs: [...] }, { itemIds: [...] } or { all: true }');
  }
  if (head === 0) throw new ErasureRefusedError(sessionId, 'the session has no events');
  const sorted = [...new Set(seqs)].sort((a, b) => a - b);
  const past = sorted.find((seq) => seq > head);
  if (past !== undefined) throw new ErasureRefusedError(sessionId, `the session's head is ${head}`, past);
  return { seqs: sorted, all: 'all' in selector, items };
};

/** Refuses item ids that name no item of the stored event at their seq (`11:99` when event 11 brought one item). */
export const checkItemIds = (sessionId: string, selection: Selection, seq: number, raw: Record<string, unknown>): void => {
  const wanted = selection.items.get(seq);
  if (!wanted) return;
  const indexes = itemIndexesOf(raw);
  const valid = new Set(indexes);
  const bad = wanted.find((w) => !valid.has(w.index));
  if (bad === undefined) return;
  const has = indexes.length === 0 ? 'brings no memory item' : `brings ${indexes.length === 1 ? 'item' : 'items'} ${indexes.map((i) => `${seq}:${i}`).join(', ')}`;
  throw new ErasureRefusedError(sessionId, `item ${bad.id} is not an item of that event (a ${String(raw['type'])} that ${has}); erase by { seqs: [${seq}] } to remove the whole event`, seq);
};
