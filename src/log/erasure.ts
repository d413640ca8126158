// Erasure: which events a selector names, the placeholder payload an erased event keeps, and its rewritten stored text.
import { canonicalJson, isEventType, isRecord, newEventSchemaFor, type NewSessionEvent } from '../events/index.js';
import { ContextLedgerError, InvalidOptionsError } from '../errors.js';
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
}

/** The mark an erased event carries (not covered by its hash; verify checks it against the `event.erased` event). */
export interface ErasedMark {
  readonly seq: number;
  readonly at: string;
  readonly reason: string;
  readonly by?: string;
}

/**
 * `log.erase` named a session with no events, a seq past the head, an `event.erased` event, or an event that is
 * missing or damaged (run `verify`); nothing was written. Bad selectors and options (no `reason`, seq 0, an item id
 * that is not `seq:index`) are `INVALID_OPTIONS`.
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

/** Keys whose string values are structure, not content: an erased event keeps them so ids, pairs, counts and projection digests stay. Part of the stored format: changing it needs a new chain version. */
const STRUCTURE_KEYS: ReadonlySet<string> = new Set(['type', 'role', 'id', 'call_id', 'callId', 'parentCallId', 'runId', 'name', 'keep', 'replaces', 'keptIds', 'droppedIds', 'digest']);

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

/**
 * The stored text of an erased event: its envelope (hash and, in chain version 2, `contentDigest` kept),
 * the placeholder payload and the `erased` mark, as canonical JSON with `hash` last.
 */
export const erasedStoredText = (raw: Record<string, unknown>, mark: ErasedMark): string => {
  const payload: Record<string, unknown> = {};
  const envelope: Record<string, unknown> = {};
  for (const key of Object.keys(raw)) {
    if (key === 'hash') continue;
    if (isEnvelopeKey(key)) envelope[key] = raw[key];
    else payload[key] = raw[key];
  }
  // chain version 2: the digest of the payload as stored (what its hash covers), recomputed rather than trusted
  if (typeof envelope['contentDigest'] === 'string') envelope['contentDigest'] = contentDigestOf(raw);
  const next = { ...envelope, ...placeholderPayload(String(raw['type']), payload), erased: { ...mark } };
  return `${canonicalJson(next).slice(0, -1)},"hash":${JSON.stringify(raw['hash'])}}`;
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

/**
 * The seqs a selector names, sorted and unique, checked against the head; `{ all: true }` names every
 * seq (the caller leaves out `event.erased` events).
 */
export const selectedSeqs = (sessionId: string, selector: unknown, head: number): number[] => {
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
      seqs.push(Number(match[1]));
    });
  } else {
    bad('expected { seqs: [...] }, { itemIds: [...] } or { all: true }');
  }
  if (head === 0) throw new ErasureRefusedError(sessionId, 'the session has no events');
  const sorted = [...new Set(seqs)].sort((a, b) => a - b);
  const past = sorted.find((seq) => seq > head);
  if (past !== undefined) throw new ErasureRefusedError(sessionId, `the session's head is ${head}`, past);
  return sorted;
};
