// Helpers the SDK adapters share: usage mapping, reasoning ids, request options.
import { isRecord } from '../../events/index.js';
import type { MemoryItem } from '../../items/index.js';
import type { ModelUsage } from '../../model/index.js';

export type Json = Record<string, unknown>;

export { isRecord };

const countOf = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);

/** The number at `path` in a provider's usage object (`['prompt_tokens_details', 'cached_tokens']`), if there is one. */
const countAt = (raw: Json, path: readonly string[] | undefined): number | undefined => {
  if (path === undefined) return undefined;
  let value: unknown = raw;
  for (const key of path) value = isRecord(value) ? value[key] : undefined;
  return countOf(value);
};

/**
 * `{inputTokens, outputTokens, totalTokens, cachedInputTokens?, cacheWriteTokens?, raw}` from a provider's usage
 * object: the counts that are present (total = input + output when the provider gives none), the prompt-cache reads
 * and writes where the provider reports them (at `cached` and `cacheWrite`), and the usage object as sent.
 */
export const mapUsage = (
  raw: unknown,
  keys: { input: string; output: string; total?: string; cached?: readonly string[]; cacheWrite?: readonly string[] },
): ModelUsage | undefined => {
  if (!isRecord(raw)) return undefined;
  const inputTokens = countOf(raw[keys.input]);
  const outputTokens = countOf(raw[keys.output]);
  const cachedInputTokens = countAt(raw, keys.cached);
  const cacheWriteTokens = countAt(raw, keys.cacheWrite);
  const totalTokens =
    (keys.total !== undefined ? countOf(raw[keys.total]) : undefined) ??
    (inputTokens !== undefined && outputTokens !== undefined ? inputTokens + outputTokens : undefined);
  return {
    ...(inputTokens !== undefined ? { inputTokens } : {}),
    ...(outputTokens !== undefined ? { outputTokens } : {}),
    ...(totalTokens !== undefined ? { totalTokens } : {}),
    ...(cachedInputTokens !== undefined ? { cachedInputTokens } : {}),
    ...(cacheWriteTokens !== undefined ? { cacheWriteTokens } : {}),
    raw,
  };
};

/**
 * The converters name reasoning items by position (`reasoning_0`, `reasoning_0_1`), which repeats from
 * one answer to the next; prefix them with the response id (`reasoning_<responseId>_0`) so they stay unique.
 */
export const prefixReasoningIds = (items: readonly MemoryItem[], responseId: string | undefined): MemoryItem[] =>
  items.map((item) => {
    const id = (item as Json)['id'];
    return item.type === 'reasoning' && responseId && typeof id === 'string' && id.startsWith('reasoning_')
      ? { ...item, id: `reasoning_${responseId}_${id.slice('reasoning_'.length)}` }
      : item;
  });

/** The user's request options with the call's signal (when there is one). */
export const withSignal = <O extends object>(base: O | undefined, signal: AbortSignal | undefined): O & { signal?: AbortSignal } =>
  ({ ...base, ...(signal ? { signal } : {}) }) as O & { signal?: AbortSignal };
