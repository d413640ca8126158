// Tier-1 (old tool results become placeholders) and Tier-2 (old reasoning is cleared): rewritten copies, never the source.
import { ProjectionCache } from './caches.js';
import { isUserMessage, toolNamesByCallId } from '../items/index.js';
import type { FunctionCallOutputItem, MemoryItem, ReasoningItem } from '../items/index.js';

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

/**
 * Tier-1: replaces all but the newest `keep` tool results (`function_call_output` items) of `working` by
 * placeholders, clearing a multiple of `step` results. Marks rewritten indices in `rewritten`.
 */
export const clearOldToolResults = (
  source: readonly MemoryItem[],
  working: MemoryItem[],
  rewritten: Uint8Array,
  keep: number,
  step: number,
): TierOutcome => {
  const outputs: number[] = [];
  for (let i = 0; i < source.length; i++) if ((source[i] as MemoryItem).type === 'function_call_output') outputs.push(i);
  const over = outputs.length - keep;
  const count = over > 0 ? Math.floor(over / step) * step : 0;
  if (count === 0) return { count: 0 };
  const names = toolNamesByCallId(source);
  for (let k = 0; k < count; k++) {
    const index = outputs[k] as number;
    const item = source[index] as MemoryItem;
    const rawId = (item as { call_id?: unknown }).call_id;
    const callId = typeof rawId === 'string' ? rawId : undefined;
    const name = callId ? names.get(callId) : undefined;
    working[index] = clearedOutput(item, callId, name);
    rewritten[index] = 1;
  }
  return { count };
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
    rewritten[i] = 2;
    count += 1;
  }
  return { count };
};
