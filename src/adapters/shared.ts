// Helpers the SDK adapters share: usage mapping, reasoning ids, request options.
import { isRecord } from '../base/index.js';
import type { MemoryItem } from '../items/index.js';
import type { ModelUsage } from '../model/index.js';
import { contextOverflowFrom } from '../model/index.js';

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

/** A signal of one SDK call that follows the caller's, and `release()`, which takes its one listener off the caller's signal again. */
export interface CallSignal {
  readonly signal: AbortSignal | undefined;
  release(): void;
}

/**
 * A signal of its own for one SDK call, following `signal`. The SDKs add an abort listener to the signal they are
 * given and never remove it, so a run's signal passed to every call collects one listener per step
 * (MaxListenersExceededWarning after ten); this one listener is removed by `release()`.
 * @example const call = followSignal(signal); try { await sdk.create(body, { signal: call.signal }) } finally { call.release() }
 */
export const followSignal = (signal: AbortSignal | undefined): CallSignal => {
  if (!signal) return { signal: undefined, release: () => undefined };
  const controller = new AbortController();
  if (signal.aborted) controller.abort(signal.reason);
  const follow = (): void => controller.abort(signal.reason);
  signal.addEventListener('abort', follow, { once: true });
  return { signal: controller.signal, release: () => signal.removeEventListener('abort', follow) };
};

/**
 * Runs one SDK call on a signal of its own that follows `signal` ({@link followSignal}); the listener is removed
 * when the call settles.
 * @example const answer = await withCallSignal(signal, (s) => client.responses.create(body, { signal: s }));
 */
export const withCallSignal = async <T>(signal: AbortSignal | undefined, call: (signal: AbortSignal | undefined) => Promise<T>): Promise<T> => {
  const own = followSignal(signal);
  try {
    return await call(own.signal);
  } finally {
    own.release();
  }
};

/**
 * A streamed SDK call on a signal of its own that follows `signal` ({@link followSignal}), with a provider's
 * context-overflow error (when the stream is opened or as an error event in it) thrown as `ContextOverflowError`
 * ({@link contextOverflowFrom}). The listener is removed when the stream ends, fails, or its consumer stops early
 * (`return()` runs the `finally`, which also closes the SDK's stream).
 * @example yield* streamOnCallSignal(signal, (s) => streamParts(client, body, s));
 */
export const streamOnCallSignal = async function* <T>(
  signal: AbortSignal | undefined,
  open: (signal: AbortSignal | undefined) => AsyncIterable<T>,
): AsyncGenerator<T> {
  const own = followSignal(signal);
  try {
    yield* open(own.signal);
  } catch (error) {
    throw contextOverflowFrom(error) ?? error;
  } finally {
    own.release();
  }
};
