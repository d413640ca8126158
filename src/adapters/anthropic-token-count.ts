// Exact Claude token counts through the Messages API's count_tokens, fetched before projecting and cached per text.
import { InvalidOptionsError, UncountedTextError } from '../base/errors.js';
import { ProviderResponseError } from './errors.js';
import { withCallSignal } from './shared.js';
import type { Anthropic } from '@anthropic-ai/sdk';
import { textDigest, type PrefetchingTokenizer } from '../context/index.js';

/** Options of {@link anthropicTokenCounter}. */
export interface AnthropicTokenCounterOptions {
  /** The model whose tokenizer counts (count_tokens needs one). */
  readonly model: string;
  /** Requests in flight at once while prefetching (default 4). */
  readonly concurrency?: number;
  /** Most texts kept in the cache (default 100,000; the oldest go first). */
  readonly maxCachedTexts?: number;
}

/**
 * A tokenizer for Claude budgets counted by the API (`client.messages.countTokens`) through your SDK client.
 * The runtime calls `prefetch` with the texts of memory before each projection (counts are remote and
 * asynchronous; `count` is synchronous and only reads the cache), records the counts in `context.projected`
 * (`tokenCounts`), and a replay or `checkSessionLaws` reads them back instead of asking again. A text counts
 * as the tokens of a user message holding it less the tokens of a one-character message plus one, so the
 * per-message framing is not counted once per text (the projector adds its own per-item overhead).
 * @example
 * import Anthropic from '@anthropic-ai/sdk';
 * const tokenizer = anthropicTokenCounter(new Anthropic(), { model: 'claude-sonnet-4-5' });
 * const agent = Agents.react({ ..., contextProjector: new TypeAwareContextProjector({ tokenizer }), contextBudget: { maxTokens: 150_000 } });
 */
export const anthropicTokenCounter = (client: Anthropic, options: AnthropicTokenCounterOptions): PrefetchingTokenizer => {
  const { model } = options;
  if (typeof model !== 'string' || model.length === 0) throw new InvalidOptionsError('anthropicTokenCounter', [{ path: 'model', message: 'is required' }]);
  const concurrency = options.concurrency ?? 4;
  const maxCached = options.maxCachedTexts ?? 100_000;
  const cache = new Map<string, number>();
  let framing: Promise<number> | undefined;

  const tokensOf = async (text: string, signal: AbortSignal | undefined): Promise<number> => {
    const result = await withCallSignal(signal, (callSignal) => client.messages.countTokens({ model, messages: [{ role: 'user', content: text }] }, callSignal ? { signal: callSignal } : {}));
    if (typeof result.input_tokens !== 'number') throw new ProviderResponseError('anthropic', undefined, `count_tokens answered without input_tokens for model ${model}`);
    return result.input_tokens;
  };

  const name = `anthropic:${model}`;
  return Object.freeze({
    name,
    count: (text: string): number => {
      if (text.length === 0) return 0;
      const found = cache.get(text);
      if (found === undefined) {
        throw new UncountedTextError(name, `a text of ${text.length} characters was not counted; prefetch the items' texts before projecting`);
      }
      return found;
    },
    async prefetch(texts: readonly string[], { signal }: { readonly signal?: AbortSignal } = {}): Promise<void> {
      const missing = [...new Set(texts)].filter((t) => t.length > 0 && !cache.has(t));
      if (missing.length === 0) return;
      framing ??= tokensOf('.', signal).then((n) => n - 1);
      const overhead = await framing.catch((error: unknown) => {
        framing = undefined;
        throw error;
      });
      let next = 0;
      const worker = async (): Promise<void> => {
        while (next < missing.length) {
          const text = missing[next++]!;
          const tokens = Math.max(0, (await tokensOf(text, signal)) - overhead);
          if (cache.size >= maxCached) cache.delete(cache.keys().next().value as string);
          cache.set(text, tokens);
        }
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, missing.length) }, worker));
    },
    countsOf(texts: readonly string[]): Record<string, number> {
      const counts: Record<string, number> = {};
      for (const text of texts) {
        const found = cache.get(text);
        if (found !== undefined) counts[textDigest(text)] = found;
      }
      return counts;
    },
  });
};
