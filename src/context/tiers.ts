// Tier-1 (old tool results become placeholders) and Tier-2 (old reasoning is cleared): rewritten copies, never the source.
import { ProjectionCache } from './caches.js';
import { callIdsOf, isUserMessage, outputCallIdOf, toolNamesByCallId } from '../items/index.js';
import type { FunctionCallOutputItem, MemoryItem, ReasoningItem } from '../items/index.js';
import type { NormalizedBudget } from './budget.js';

/**
 * Placeholder text for a cleared tool result: `[tool result cleared: NAME(CALL_ID)]`, `[tool result cleared: CALL_ID]`
 * or `[tool result cleared]`.
 * @example clearedToolResultText('call_3', 'read') // '[tool result cleared: read(call_3)]'
 */
export const clearedToolResultText = (callId: string | undefined, name: string | undefined): string => {
  if (callId && name) return `[tool result cleared: ${name}(${callId})]`;
  if (callId) return `[tool result cleared: ${callId}]`;
  return '[tool result cleared]';
};

/** The `output` a trimmed reasoning item carries: `'[reasoning cleared]'`. */
export const CLEARED_REASONING_TEXT = '[reasoning cleared]';

// Rewrites are frozen and cached by source identity, so a history projected every turn yields the same
// copies (whose token counts are then memoized too) instead of new objects each time.
const clearedOutputs = new ProjectionCache<object, { readonly name: string | undefined; readonly copy: MemoryItem }>('Tier-1 cleared copy per output');
const trimmedReasoning = new ProjectionCache<object, MemoryItem>('Tier-2 trimmed copy per reasoning item');

const clearedOutput = (item: MemoryItem, callId: string | undefined, name: string | undefined): MemoryItem => {
  const cached = clearedOutputs.get(item);
  // The name can change between turns (the call was compacted away); the call id cannot.
  if (cached && cached.name === name) return cached.copy;
  const output = clearedToolResultText(callId, name);
  const copy: MemoryItem = Object.freeze(
    callId === undefined
      ? { type: 'function_call_output', output }
      : ({ type: 'function_call_output', call_id: callId, output } satisfies FunctionCallOutputItem),
  );
  clearedOutputs.set(item, { name, copy });
  return copy;
};

const trimmed = (item: MemoryItem): MemoryItem => {
  const cached = trimmedReasoning.get(item);
  if (cached) return cached;
  const { summary: _summary, content: _content, text: _text, ...rest } = item as ReasoningItem;
  const copy: MemoryItem = Object.freeze({ ...rest, output: CLEARED_REASONING_TEXT });
  trimmedReasoning.set(item, copy);
  return copy;
};

/** The outcome of a tier: how many items it rewrote (the rewrites are written into `working`). */
export interface TierOutcome {
  readonly count: number;
}

/** Marks of a rewritten index: cleared by Tier-1 (a result or a call's inputs), trimmed by Tier-2, kept by Tier-1 as shorter than its placeholder. */
export const MARK_CLEARED = 1;
export const MARK_TRIMMED = 2;
export const MARK_SHORT = 3;

/** What Tier-1 needs besides the items: its settings and how to measure an item. */
export interface ToolResultClearing {
  /** Tier-1 before `tier1-short`: a result is cleared whatever its size. */
  readonly legacy?: boolean;
  readonly keep: number;
  readonly step: number;
  readonly keepToolResultsOf: ReadonlySet<string> | undefined;
  readonly clearToolInputs: boolean;
  readonly clearAtLeastTokens: number | undefined;
  readonly clearAboveTokens: number | undefined;
  readonly chars: (item: MemoryItem) => number;
  /** The exact tokens of `item` if at most `bound`, else anything above `bound`. */
  readonly tokensWithin: (item: MemoryItem, bound: number) => number;
  readonly tokens: (item: MemoryItem) => number;
  /** Remembered decisions "the placeholder is not smaller" per source item (frozen items only), for this tokenizer. */
  readonly shortMemo?: WeakMap<object, { readonly copy: MemoryItem; readonly short: boolean }>;
}

/** What Tier-1 did, for the report's notes. */
export interface ToolResultClearingOutcome {
  /** Tool results replaced by placeholders. */
  readonly count: number;
  /** Tool results that kept their text. */
  readonly keptText: number;
  /** Results Tier-1 would have cleared that keep their text because the placeholder is not smaller. */
  readonly short: number;
  /** Results of `keepToolResultsOf` tools (never cleared). */
  readonly exempt: number;
  /** Calls whose arguments were cleared (`clearToolInputs`). */
  readonly inputs: number;
  /** Set when Tier-1 had results to clear but cleared none: which threshold stopped it and the measured value. */
  readonly skipped?: { readonly by: 'clearAboveTokens' | 'clearAtLeastTokens'; readonly value: number };
}

/** Whether the items hold more than `threshold` tokens (counting stops once they do); returns the total counted. */
const tokensAbove = (items: readonly MemoryItem[], threshold: number, tokens: (item: MemoryItem) => number): { above: boolean; total: number } => {
  let total = 0;
  for (const item of items) {
    total += tokens(item);
    if (total > threshold) return { above: true, total };
  }
  return { above: false, total };
};

const CLEARED_ARGUMENTS = '{}';
const clearedCalls = new ProjectionCache<object, { readonly key: string; readonly copy: MemoryItem }>('Tier-1 copy of a call without its inputs');

/** `item` with the arguments of the calls in `ids` cleared (`'{}'`, or `{}` for `tool_use` inputs), or `item` itself when none changes. */
const withoutInputs = (item: MemoryItem, ids: ReadonlySet<string>): MemoryItem => {
  const key = [...ids].sort().join('\u0000');
  const cached = clearedCalls.get(item);
  if (cached && cached.key === key) return cached.copy;
  const record = item as Record<string, unknown>;
  let changed = false;
  let copy: MemoryItem = item;
  // Only the objects made here are frozen, never the caller's.
  const made: object[] = [];
  const make = <T extends object>(value: T): T => {
    made.push(value);
    return value;
  };
  if (item.type === 'function_call') {
    if (ids.has(record['call_id'] as string) && record['arguments'] !== CLEARED_ARGUMENTS) {
      copy = make({ ...item, arguments: CLEARED_ARGUMENTS }) as MemoryItem;
      changed = true;
    }
  } else if (item.type === 'message') {
    const out: Record<string, unknown> = make({ ...record });
    const calls = record['tool_calls'];
    if (Array.isArray(calls)) {
      out['tool_calls'] = make(calls.map((call: unknown) => {
        if (call === null || typeof call !== 'object') return call;
        const c = call as Record<string, unknown>;
        if (typeof c['id'] !== 'string' || !ids.has(c['id'])) return call;
        const fn = c['function'];
        if (fn !== null && typeof fn === 'object' && (fn as Record<string, unknown>)['arguments'] !== undefined && (fn as Record<string, unknown>)['arguments'] !== CLEARED_ARGUMENTS) {
          changed = true;
          return make({ ...c, function: make({ ...(fn as Record<string, unknown>), arguments: CLEARED_ARGUMENTS }) });
        }
        if (c['arguments'] !== undefined && c['arguments'] !== CLEARED_ARGUMENTS) {
          changed = true;
          return make({ ...c, arguments: CLEARED_ARGUMENTS });
        }
        return call;
      }));
    }
    const content = record['content'];
    if (Array.isArray(content)) {
      out['content'] = make(content.map((part: unknown) => {
        if (part === null || typeof part !== 'object') return part;
        const p = part as Record<string, unknown>;
        if (p['type'] !== 'tool_use' || typeof p['id'] !== 'string' || !ids.has(p['id'])) return part;
        const input = p['input'];
        if (input !== null && typeof input === 'object' && !Array.isArray(input) && Object.keys(input).length === 0) return part;
        changed = true;
        return make({ ...p, input: make({}) });
      }));
    }
    if (changed) copy = out as MemoryItem;
  }
  if (!changed) return item;
  for (const value of made) Object.freeze(value);
  clearedCalls.set(item, { key, copy });
  return copy;
};

/**
 * Tier-1: replaces all but the newest `keep` tool results (`function_call_output` items) of `working` by
 * placeholders, clearing a multiple of `step` results; results of `keepToolResultsOf` tools are never candidates,
 * and a result whose placeholder would not be smaller (in characters and tokens) keeps its text (mark
 * {@link MARK_SHORT}). With `clearToolInputs` the calls of cleared results lose their arguments too; with
 * `clearAboveTokens` / `clearAtLeastTokens` nothing is cleared unless the source holds more tokens than that /
 * clearing gains at least that many. Marks rewritten indices in `rewritten`.
 */
export const clearOldToolResults = (
  source: readonly MemoryItem[],
  working: MemoryItem[],
  rewritten: Uint8Array,
  clearing: ToolResultClearing,
): ToolResultClearingOutcome => {
  const names = toolNamesByCallId(source);
  const outputs: number[] = [];
  let total = 0;
  let exempt = 0;
  const exemptNames = clearing.keepToolResultsOf;
  for (let i = 0; i < source.length; i++) {
    const item = source[i] as MemoryItem;
    if (item.type !== 'function_call_output') continue;
    total += 1;
    if (exemptNames !== undefined) {
      const callId = (item as { call_id?: unknown }).call_id;
      const name = typeof callId === 'string' ? names.get(callId) : undefined;
      if (name !== undefined && exemptNames.has(name)) {
        exempt += 1;
        continue;
      }
    }
    outputs.push(i);
  }
  const over = outputs.length - clearing.keep;
  const count = over > 0 ? Math.floor(over / clearing.step) * clearing.step : 0;
  const none = { count: 0, keptText: total, short: 0, exempt, inputs: 0 };
  if (count === 0) return none;
  if (clearing.clearAboveTokens !== undefined) {
    const { above, total: held } = tokensAbove(source, clearing.clearAboveTokens, clearing.tokens);
    if (!above) return { ...none, skipped: { by: 'clearAboveTokens', value: held } };
  }
  const cleared: number[] = [];
  const short: number[] = [];
  const copies = new Map<number, MemoryItem>();
  for (let k = 0; k < count; k++) {
    const index = outputs[k] as number;
    const item = source[index] as MemoryItem;
    const rawId = (item as { call_id?: unknown }).call_id;
    const callId = typeof rawId === 'string' ? rawId : undefined;
    const name = callId ? names.get(callId) : undefined;
    const copy = clearedOutput(item, callId, name);
    if (clearing.legacy !== true) {
      const frozen = Object.isFrozen(item);
      // Remembered with the placeholder it was decided against (the name in it can change between turns).
      const hit = frozen ? clearing.shortMemo?.get(item) : undefined;
      let isShort = hit !== undefined && hit.copy === copy ? hit.short : undefined;
      if (isShort === undefined) {
        const copyTokens = clearing.tokens(copy);
        isShort = clearing.chars(copy) >= clearing.chars(item) || clearing.tokensWithin(item, copyTokens) <= copyTokens;
        if (frozen) clearing.shortMemo?.set(item, { copy, short: isShort });
      }
      if (isShort) {
        short.push(index);
        continue;
      }
    }
    cleared.push(index);
    copies.set(index, copy);
  }
  // The calls of the cleared results, each with the ids whose inputs go (an output answers the nearest earlier unanswered call of its id).
  const callCopies = new Map<number, MemoryItem>();
  if (clearing.clearToolInputs && cleared.length > 0) {
    const clearedSet = new Set(cleared);
    const open = new Map<string, number[]>();
    const idsByCall = new Map<number, Set<string>>();
    for (let i = 0; i < source.length; i++) {
      const item = source[i] as MemoryItem;
      const answered = outputCallIdOf(item);
      if (answered !== undefined) {
        const call = open.get(answered)?.pop();
        if (call !== undefined && clearedSet.has(i)) {
          let ids = idsByCall.get(call);
          if (!ids) idsByCall.set(call, (ids = new Set()));
          ids.add(answered);
        }
      }
      for (const id of callIdsOf(item)) {
        const stack = open.get(id);
        if (stack) stack.push(i);
        else open.set(id, [i]);
      }
    }
    for (const [index, ids] of idsByCall) {
      const item = source[index] as MemoryItem;
      const copy = withoutInputs(item, ids);
      if (copy === item) continue;
      const copyTokens = clearing.tokens(copy);
      if (clearing.chars(copy) >= clearing.chars(item) || clearing.tokensWithin(item, copyTokens) <= copyTokens) continue;
      callCopies.set(index, copy);
    }
  }
  if (clearing.clearAtLeastTokens !== undefined && cleared.length > 0) {
    let gain = 0;
    const threshold = clearing.clearAtLeastTokens;
    for (const [index, copy] of [...copies, ...callCopies]) {
      gain += clearing.tokens(source[index] as MemoryItem) - clearing.tokens(copy);
      if (gain >= threshold) break;
    }
    if (gain < threshold) return { ...none, skipped: { by: 'clearAtLeastTokens', value: gain } };
  }
  for (const [index, copy] of copies) {
    working[index] = copy;
    rewritten[index] = MARK_CLEARED;
  }
  for (const [index, copy] of callCopies) {
    working[index] = copy;
    rewritten[index] = MARK_CLEARED;
  }
  for (const index of short) rewritten[index] = MARK_SHORT;
  return { count: cleared.length, keptText: total - cleared.length, short: short.length, exempt, inputs: callCopies.size };
};

/** The Tier-1 notes, in the reference's form: what was cleared and how many kept their text, then why others kept it. */
export const tier1Notes = (
  outcome: ToolResultClearingOutcome,
  limits: Pick<NormalizedBudget, 'clearAboveTokens' | 'clearAtLeastTokens' | 'keepToolResultsOf' | 'maxRecentToolResults'>,
  legacy = false,
): string[] => {
  const notes: string[] = [];
  if (outcome.skipped) {
    const { by, value } = outcome.skipped;
    notes.push(
      by === 'clearAboveTokens'
        ? `tier1 microcompact: skipped, ${value} source token(s) not above clearAboveTokens ${limits.clearAboveTokens}`
        : `tier1 microcompact: skipped, clearing would gain ${value} token(s), below clearAtLeastTokens ${limits.clearAtLeastTokens}`,
    );
    return notes;
  }
  if (outcome.count > 0) notes.push(`tier1 microcompact: cleared ${outcome.count} old tool result(s), kept recent ${legacy ? String(limits.maxRecentToolResults) : outcome.keptText}`);
  if (outcome.inputs > 0) notes.push(`tier1 microcompact: cleared the inputs of ${outcome.inputs} tool call(s)`);
  if (outcome.short > 0) notes.push(`tier1 microcompact: kept ${outcome.short} tool result(s) shorter than their placeholder`);
  if (outcome.exempt > 0 && (outcome.count > 0 || outcome.short > 0)) notes.push(`tier1 microcompact: kept ${outcome.exempt} tool result(s) of ${[...(limits.keepToolResultsOf ?? [])].join(', ')}`);
  return notes;
};

/**
 * Tier-2: replaces the reasoning items before the last user message (all of them when there is no user
 * message) by copies that keep `type`, `id` and other keys, lose `summary`/`content`/`text`, and carry
 * `output: '[reasoning cleared]'`. Marks rewritten indices in `rewritten` with 2.
 */
export const trimOldReasoning = (source: readonly MemoryItem[], working: MemoryItem[], rewritten: Uint8Array): TierOutcome => {
  let lastUser = -1;
  for (let i = source.length - 1; i >= 0; i--) {
    if (isUserMessage(source[i] as MemoryItem)) {
      lastUser = i;
      break;
    }
  }
  const end = lastUser === -1 ? source.length : lastUser;
  let count = 0;
  for (let i = 0; i < end; i++) {
    const item = source[i] as MemoryItem;
    if (item.type !== 'reasoning') continue;
    working[i] = trimmed(item);
    rewritten[i] = MARK_TRIMMED;
    count += 1;
  }
  return { count };
};
