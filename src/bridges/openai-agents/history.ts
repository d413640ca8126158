// The Agents SDK's optional history capabilities on memory: transactions and mutations read, checked and planned as `memory.edited` layouts.
import type { AgentInputItem, SessionHistoryMutation, SessionHistoryTransaction } from '@openai/agents';
import { BridgeInputError, SessionHistoryError } from '../../base/errors.js';
import { type NewSessionEventOf } from '../../events/index.js';
import { canonicalJson, digestOf } from '../../base/index.js';
import type { MemoryItem } from '../../items/index.js';
import type { MemoryEntry } from '../../memory/index.js';
import { inputChecks } from '../shared/input.js';
import { agentItemsPerItem, checkAgentInputItems, fromAgentInputItems } from './items.js';

type Json = Record<string, unknown>;
type Layout = NonNullable<NewSessionEventOf<'memory.edited'>['layout']>;

/** The SDK's wording for each refusal (MemorySession's messages), so code that matches them keeps working. */
export const HISTORY_MESSAGES = {
  arguments: 'Session history transaction arguments are invalid.',
  operationId: 'Session history transaction operationId must be a non-empty string.',
  transaction: 'Session history transaction must be an object.',
  appendFields: 'Session history append transaction fields are invalid.',
  suffixFields: 'Session history suffix transaction fields are invalid.',
  type: 'Unsupported session history transaction type.',
  data: 'Session history transaction items contain invalid or unsupported data.',
  conflict: 'Session history operation was already applied with a different transaction.',
  suffix: 'Session history suffix no longer matches the transaction precondition.',
  mutations: 'Session history mutations are invalid.',
} as const;

const isArrayIndex = (key: string, length: number): boolean => /^(0|[1-9]\d*)$/.test(key) && Number(key) < length;

/**
 * A copy of `value` as plain JSON data, or a throw: only null, booleans, finite numbers, strings, dense plain arrays
 * and plain objects of enumerable data properties (no accessors, symbols, cycles, class instances, typed arrays, bigints,
 * functions); an `undefined` property is left out, as JSON does. The log holds JSON, so what it cannot hold is refused
 * before anything is written (the SDK's MemorySession also keeps `Uint8Array`s; this session does not).
 */
const snapshotJson = (value: unknown, refuse: (what: string) => never, ancestors: Set<object> = new Set()): unknown => {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) refuse('not a finite number');
    return value;
  }
  if (typeof value !== 'object') refuse(`a ${typeof value}`);
  if (ancestors.has(value)) refuse('a cycle');
  ancestors.add(value);
  try {
    if (Array.isArray(value)) {
      const keys = Reflect.ownKeys(value);
      if (keys.length !== value.length + 1 || keys.some((k) => typeof k !== 'string' || (k !== 'length' && !isArrayIndex(k, value.length)))) refuse('an irregular array');
      const out: unknown[] = [];
      for (let i = 0; i < value.length; i++) {
        const descriptor = Object.getOwnPropertyDescriptor(value, String(i));
        if (!descriptor?.enumerable || !('value' in descriptor) || descriptor.value === undefined) refuse('an array hole');
        out.push(snapshotJson(descriptor!.value, refuse, ancestors));
      }
      return out;
    }
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) refuse('a class instance');
    const out: Json = {};
    for (const key of Reflect.ownKeys(value)) {
      if (typeof key !== 'string') refuse('a symbol key');
      const descriptor = Object.getOwnPropertyDescriptor(value, key);
      if (!descriptor?.enumerable || !('value' in descriptor)) refuse('a hidden or computed property');
      if (descriptor!.value !== undefined) out[key as string] = snapshotJson(descriptor!.value, refuse, ancestors);
    }
    return out;
  } finally {
    ancestors.delete(value);
  }
};

/** Agents SDK items as JSON, checked as `AgentInputItem`s; a throw when they are not. */
const snapshotItems = (value: unknown, refuse: (what: string) => never): AgentInputItem[] => {
  const items = snapshotJson(value, refuse) as AgentInputItem[];
  checkAgentInputItems(inputChecks('openai-agents', 'applyHistoryTransaction'), items);
  return items;
};

/** A checked transaction: its operation id, the transaction as JSON data, and the digest of that data. */
export interface CheckedTransaction {
  readonly operationId: string;
  readonly transaction: SessionHistoryTransaction;
  readonly digest: string;
}

/**
 * Reads `applyHistoryTransaction`'s arguments once (a getter is not called twice) and checks them as the SDK's
 * MemorySession does: a non-empty `operationId`; `{type:'append_items', items}` or `{type:'replace_suffix',
 * expectedSuffix, replacement}` with no other field; items the log can hold. Throws a `SessionHistoryError` (`invalid`)
 * whose message is the SDK's, never the items.
 */
export const checkTransaction = (sessionId: string, args: unknown): CheckedTransaction => {
  const invalid = (message: string, operationId?: string, cause?: unknown): SessionHistoryError =>
    new SessionHistoryError(sessionId, 'invalid', operationId, message, cause === undefined ? undefined : { cause });
  if (typeof args !== 'object' || args === null) throw invalid(HISTORY_MESSAGES.arguments);
  let operationId: unknown;
  let raw: unknown;
  try {
    operationId = Reflect.get(args, 'operationId');
    raw = Reflect.get(args, 'transaction');
  } catch {
    throw invalid(HISTORY_MESSAGES.arguments);
  }
  if (typeof operationId !== 'string' || operationId.trim() === '') throw invalid(HISTORY_MESSAGES.operationId);
  if (typeof raw !== 'object' || raw === null) throw invalid(HISTORY_MESSAGES.transaction, operationId);
  const id = operationId;
  const refuse = (): never => {
    throw invalid(HISTORY_MESSAGES.data, id);
  };
  let record: Json;
  try {
    record = snapshotJson(raw, refuse) as Json;
    structuredClone(raw); // as the SDK: what cannot be cloned (a Proxy) is refused too
  } catch (e) {
    if (SessionHistoryError.isInstance(e)) throw e;
    throw invalid(HISTORY_MESSAGES.data, operationId);
  }
  if (typeof record !== 'object' || record === null || Array.isArray(record)) throw invalid(HISTORY_MESSAGES.transaction, operationId);
  const keys = Object.keys(record).sort().join(',');
  let transaction: SessionHistoryTransaction;
  try {
    if (record['type'] === 'append_items') {
      if (keys !== 'items,type' || !Array.isArray(record['items'])) throw invalid(HISTORY_MESSAGES.appendFields, operationId);
      transaction = { type: 'append_items', items: snapshotItems(record['items'], refuse) };
    } else if (record['type'] === 'replace_suffix') {
      if (keys !== 'expectedSuffix,replacement,type' || !Array.isArray(record['expectedSuffix']) || !Array.isArray(record['replacement'])) {
        throw invalid(HISTORY_MESSAGES.suffixFields, operationId);
      }
      transaction = { type: 'replace_suffix', expectedSuffix: snapshotItems(record['expectedSuffix'], refuse), replacement: snapshotItems(record['replacement'], refuse) };
    } else throw invalid(HISTORY_MESSAGES.type, operationId);
  } catch (e) {
    if (BridgeInputError.isInstance(e)) throw invalid(HISTORY_MESSAGES.data, operationId, e);
    throw e;
  }
  return { operationId, transaction, digest: digestOf(transaction) };
};

/** Checks `applyHistoryMutations`' arguments: `{ mutations: [{type:'replace_function_call', callId, replacement: a function_call}] }`. */
export const checkMutations = (sessionId: string, args: unknown): SessionHistoryMutation[] => {
  const invalid = (cause?: unknown): SessionHistoryError =>
    new SessionHistoryError(sessionId, 'invalid', undefined, HISTORY_MESSAGES.mutations, cause === undefined ? undefined : { cause });
  if (typeof args !== 'object' || args === null) throw invalid();
  let mutations: unknown;
  try {
    mutations = snapshotJson(Reflect.get(args, 'mutations'), () => {
      throw invalid();
    });
  } catch (e) {
    throw SessionHistoryError.isInstance(e) ? e : invalid(e);
  }
  if (!Array.isArray(mutations)) throw invalid();
  for (const mutation of mutations as Json[]) {
    if (typeof mutation !== 'object' || mutation === null || mutation['type'] !== 'replace_function_call' || typeof mutation['callId'] !== 'string') throw invalid();
    const replacement = mutation['replacement'] as Json | undefined;
    if (typeof replacement !== 'object' || replacement === null || replacement['type'] !== 'function_call' || replacement['callId'] !== mutation['callId']) throw invalid();
    try {
      checkAgentInputItems(inputChecks('openai-agents', 'applyHistoryMutations'), [replacement]);
    } catch (e) {
      throw invalid(e);
    }
  }
  return mutations as SessionHistoryMutation[];
};

/** A planned edit: memory's items after it (kept by id, or inline) and the ids it removes; undefined when nothing changes. */
export interface PlannedEdit {
  readonly layout: Layout;
  readonly droppedIds: string[];
}

/**
 * `replace_suffix` on memory: memory's entries, as the SDK sees them (`getItems()`), must end with `expectedSuffix`
 * (compared as JSON), at an entry boundary, on items only (not the summary or working memory). The replacement's leading
 * items that equal the suffix's, entry for entry, keep their ids; the rest are written inline. Throws `suffix-mismatch`.
 */
export const planReplaceSuffix = (
  sessionId: string,
  operationId: string,
  entries: readonly MemoryEntry[],
  itemIds: ReadonlySet<string>,
  expectedSuffix: readonly AgentInputItem[],
  replacement: readonly AgentInputItem[],
): PlannedEdit => {
  const mismatch = (): SessionHistoryError => new SessionHistoryError(sessionId, 'suffix-mismatch', operationId, HISTORY_MESSAGES.suffix);
  const perEntry = agentItemsPerItem(entries.map((e) => e.item));
  // Walk back from the end, whole entries at a time, until the suffix's length is covered.
  let covered = 0;
  let start = entries.length;
  while (covered < expectedSuffix.length && start > 0) {
    start -= 1;
    covered += perEntry[start]!.length;
  }
  if (covered !== expectedSuffix.length) throw mismatch();
  const suffixEntries = entries.slice(start);
  if (suffixEntries.some((e) => !itemIds.has(e.id))) throw mismatch();
  const actual = perEntry.slice(start).flat();
  if (canonicalJson(actual) !== canonicalJson(expectedSuffix)) throw mismatch();
  const layout: Layout = entries.slice(0, start).filter((e) => itemIds.has(e.id)).map((e) => ({ keep: e.id }));
  let r = 0;
  let kept = 0;
  for (let i = start; i < entries.length; i++) {
    const own = perEntry[i]!;
    if (own.length === 0 || r + own.length > replacement.length || canonicalJson(replacement.slice(r, r + own.length)) !== canonicalJson(own)) break;
    layout.push({ keep: entries[i]!.id });
    r += own.length;
    kept += 1;
  }
  for (const item of fromAgentInputItems(replacement.slice(r))) layout.push({ item });
  return { layout, droppedIds: suffixEntries.slice(kept).map((e) => e.id) };
};

/**
 * `replace_function_call` mutations on memory, in order, as the SDK's `applySessionHistoryMutations`: the first function
 * call with the mutation's `callId` becomes the replacement (inline, `replaces` naming it), the later ones are removed.
 * Undefined when no item matches (nothing changes).
 */
export const planMutations = (entries: readonly MemoryEntry[], itemIds: ReadonlySet<string>, mutations: readonly SessionHistoryMutation[]): PlannedEdit | undefined => {
  type Slot = { id?: string; item: MemoryItem; replaces?: string };
  let slots: Slot[] = entries.filter((e) => itemIds.has(e.id)).map((e) => ({ id: e.id, item: e.item }));
  const dropped: string[] = [];
  let changed = false;
  for (const mutation of mutations) {
    const [replacement] = fromAgentInputItems([mutation.replacement]);
    const next: Slot[] = [];
    let placed = false;
    for (const slot of slots) {
      if (slot.item.type === 'function_call' && slot.item['call_id'] === mutation.callId) {
        changed = true;
        const original = slot.id ?? slot.replaces;
        if (slot.id !== undefined) dropped.push(slot.id);
        if (!placed) {
          next.push({ item: replacement!, ...(original !== undefined ? { replaces: original } : {}) });
          placed = true;
        }
        continue;
      }
      next.push(slot);
    }
    slots = next;
  }
  if (!changed) return undefined;
  return {
    layout: slots.map((slot) => (slot.id !== undefined ? { keep: slot.id } : { item: slot.item, ...(slot.replaces !== undefined ? { replaces: slot.replaces } : {}) })),
    droppedIds: dropped,
  };
};
