// Cost and prompt-cache accounting from the log: usage by stable names, prices per model, and the cacheable prefix of each request.
import { z } from 'zod';
import { CLEARED_REASONING_TEXT, clearedToolResultText, itemTokenCount, type Tokenizer } from '../context/index.js';
import { decodeFateRuns, type SessionEventOf } from '../events/index.js';
import { canonicalJson, isRecord } from '../base/index.js';
import { parseOptions } from '../base/options.js';
import { toolNamesByCallId, type MemoryItem } from '../items/index.js';

/** What a model costs per million tokens: uncached input, output, and (when the provider prices them apart) cache reads and writes. */
export interface ModelPrice {
  readonly input: number;
  readonly output: number;
  /** Input served from the provider's prompt cache (default: `input`). */
  readonly cachedInput?: number;
  /** Input written to the provider's prompt cache (default: `input`). */
  readonly cacheWrite?: number;
}

/** Prices by model name; a key ending in `*` matches every model that starts with what comes before it (the longest key wins). */
export type PriceTable = Readonly<Record<string, ModelPrice>>;

const price = z.number().finite().nonnegative();
/** The schema of a price table: `{ "gpt-4.1": { "input": 2, "output": 8, "cachedInput": 0.5 } }`, per million tokens. */
export const PriceTableSchema = z.record(
  z.string().min(1),
  z.strictObject({ input: price, output: price, cachedInput: price.optional(), cacheWrite: price.optional() }),
);

/**
 * Checks a price table (an InvalidOptionsError names the model and field at fault).
 * @example parsePriceTable({ 'gpt-4.1': { input: 2, output: 8, cachedInput: 0.5 } })
 */
export const parsePriceTable = (value: unknown): PriceTable => parseOptions(PriceTableSchema, value, 'prices') as PriceTable;

/** The token figures of one model call, by stable names; cached and cache-write tokens are parts of `inputTokens`. */
export interface UsageFigures {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cachedInputTokens: number;
  readonly cacheWriteTokens: number;
  /** Whether the provider reported its prompt cache at all (false: the cache figures are 0 because nothing was said). */
  readonly cacheReported: boolean;
}

const numberAt = (value: unknown, ...path: string[]): number | undefined => {
  let at: unknown = value;
  for (const key of path) at = isRecord(at) ? at[key] : undefined;
  return typeof at === 'number' && Number.isFinite(at) && at >= 0 ? at : undefined;
};

/**
 * A recorded `usage` by stable names: `inputTokens`, `outputTokens`, `cachedInputTokens`, `cacheWriteTokens`; for usage
 * recorded before those names, the provider's own fields in `raw` (OpenAI `prompt_tokens_details.cached_tokens` and
 * `input_tokens_details.cached_tokens`, Anthropic `cache_read_input_tokens` and `cache_creation_input_tokens`), and the
 * AI SDK's usage as its bridge records it (`cachedInputTokens`, `inputTokenDetails.cacheReadTokens` / `cacheWriteTokens`).
 * Undefined when it has no input or output count.
 * @example usageFigures({ inputTokens: 1000, outputTokens: 20, cachedInputTokens: 768 })?.cachedInputTokens // 768
 */
export const usageFigures = (usage: unknown): UsageFigures | undefined => {
  if (!isRecord(usage)) return undefined;
  const inputTokens = numberAt(usage, 'inputTokens');
  const outputTokens = numberAt(usage, 'outputTokens');
  if (inputTokens === undefined && outputTokens === undefined) return undefined;
  const raw = usage['raw'];
  const cached =
    numberAt(usage, 'cachedInputTokens') ??
    numberAt(usage, 'inputTokenDetails', 'cacheReadTokens') ??
    numberAt(raw, 'prompt_tokens_details', 'cached_tokens') ??
    numberAt(raw, 'input_tokens_details', 'cached_tokens') ??
    numberAt(raw, 'cache_read_input_tokens');
  const written = numberAt(usage, 'cacheWriteTokens') ?? numberAt(usage, 'inputTokenDetails', 'cacheWriteTokens') ?? numberAt(raw, 'cache_creation_input_tokens');
  return {
    inputTokens: inputTokens ?? 0,
    outputTokens: outputTokens ?? 0,
    cachedInputTokens: cached ?? 0,
    cacheWriteTokens: written ?? 0,
    cacheReported: cached !== undefined || written !== undefined,
  };
};

/**
 * The price of `model` in `prices`: its own key, else the longest `prefix*` key it starts with.
 * @example priceOf({ 'claude-sonnet-4*': { input: 3, output: 15 } }, 'claude-sonnet-4-5')?.input // 3
 */
export const priceOf = (prices: PriceTable, model: string): ModelPrice | undefined => {
  const own = Object.prototype.hasOwnProperty.call(prices, model) ? prices[model] : undefined;
  if (own) return own;
  let best: { length: number; price: ModelPrice } | undefined;
  for (const [key, value] of Object.entries(prices)) {
    if (!key.endsWith('*')) continue;
    const prefix = key.slice(0, -1);
    if (model.startsWith(prefix) && (!best || prefix.length > best.length)) best = { length: prefix.length, price: value };
  }
  return best?.price;
};

/**
 * What a call cost at `price` (per million tokens): uncached input, cache reads and writes at their own prices, and output.
 * @example costOf({ inputTokens: 1e6, outputTokens: 0, cachedInputTokens: 5e5, cacheWriteTokens: 0, cacheReported: true }, { input: 2, output: 8, cachedInput: 0.5 }) // 1.25
 */
export const costOf = (usage: UsageFigures, price: ModelPrice): number => {
  const uncached = Math.max(0, usage.inputTokens - usage.cachedInputTokens - usage.cacheWriteTokens);
  return (
    (uncached * price.input +
      usage.cachedInputTokens * (price.cachedInput ?? price.input) +
      usage.cacheWriteTokens * (price.cacheWrite ?? price.input) +
      usage.outputTokens * price.output) /
    1_000_000
  );
};

/** How much of a request repeats the previous request's beginning (what a provider's prompt cache could reuse). */
export interface CacheablePrefix {
  /** Tokens of the longest common prefix with the previous request: system prompt, tools, then the items as sent. */
  readonly tokens: number;
  /** Tokens of the whole request, counted the same way. */
  readonly requestTokens: number;
  /** tokens / requestTokens (0 for an empty request). */
  readonly share: number;
  /** Items of the prefix (after the system prompt and tools). */
  readonly items: number;
}

/** A step's model call: its usage and cost, and the prefix it shares with the previous call. */
export interface StepAccount {
  readonly model?: string;
  readonly usage?: UsageFigures;
  /** With prices: what the call cost; absent when the model has no price (it is in the totals' `unpricedModels`). */
  readonly cost?: number;
  readonly cacheablePrefix?: CacheablePrefix;
  /** The provider's cache reads over its input tokens, where it reported a cache. */
  readonly measuredCacheShare?: number;
  /**
   * From our own counts, whatever the provider reported: the request's tokens as input, its cacheable prefix as cached
   * input, the answer's items as output, and (with prices) what that costs: the bill of a provider that caches exactly the prefix.
   */
  readonly estimate?: { readonly inputTokens: number; readonly cachedInputTokens: number; readonly outputTokens: number; readonly cost?: number };
}

/** A compaction's own model calls (a summarizer): their usage and cost, counted apart from the steps'. */
export interface CompactionAccount {
  readonly model?: string;
  readonly usage?: UsageFigures;
  readonly cost?: number;
}

/** Usage summed over calls. */
export interface UsageTotals {
  readonly calls: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cachedInputTokens: number;
  readonly cacheWriteTokens: number;
  /** With prices: the cost of the calls that had one. */
  readonly cost?: number;
}

/** The session's accounting: steps' and compactions' calls apart, the cacheable prefix over all requests. */
export interface AccountTotals {
  readonly steps: UsageTotals;
  readonly compactions: UsageTotals;
  /** With prices: steps plus compactions. */
  readonly cost?: number;
  /**
   * With prices: every model that was called (a step's request, a compaction's summarizer) and has no price in the
   * table. Their calls are left out of `cost` and of `estimate.cost`.
   */
  readonly unpricedModels: readonly string[];
  readonly cacheablePrefix: { readonly tokens: number; readonly requestTokens: number; readonly share: number };
  /** The steps' estimates summed (see `StepAccount.estimate`). */
  readonly estimate: { readonly inputTokens: number; readonly cachedInputTokens: number; readonly outputTokens: number; readonly cost?: number };
  /** Over the calls whose provider reported a cache: cached input tokens over input tokens. */
  readonly measuredCache?: { readonly cachedInputTokens: number; readonly inputTokens: number; readonly share: number };
}

/** One item as sent: what identifies its content (memory id and fate) and its tokens. */
interface SentItem {
  readonly key: string;
  readonly tokens: number;
}

interface RequestShape {
  readonly systemPrompt: string | null;
  readonly systemTokens: number;
  readonly tools: string;
  readonly toolTokens: number;
  readonly items: readonly SentItem[];
}

const emptyTotals = () => ({ calls: 0, inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, cost: 0 });

/** An item as the projection sent it under `fate` (Tier-1 and Tier-2 placeholders), for counting its tokens. */
const asSent = (item: MemoryItem, fate: string, names: ReadonlyMap<string, string>): MemoryItem => {
  const record = item as Record<string, unknown>;
  if (fate === 'cleared' && item.type === 'function_call_output') {
    const callId = typeof record['call_id'] === 'string' ? record['call_id'] : undefined;
    return { ...item, output: clearedToolResultText(callId, callId !== undefined ? names.get(callId) : undefined) } as MemoryItem;
  }
  if (fate === 'trimmed' && item.type === 'reasoning') return { type: 'reasoning', id: record['id'], output: CLEARED_REASONING_TEXT } as MemoryItem;
  return item;
};

/**
 * Accounting as a session is read, in log order: `projected` at each `context.projected` (memory's items in order),
 * `requested`, `responded` and `compacted` at those events. Pure bookkeeping: the audit feeds it and reads it out.
 */
export class SessionAccounting {
  readonly #prices: PriceTable | undefined;
  #sent: { step: number; items: readonly SentItem[] } | undefined;
  #previous: RequestShape | undefined;
  readonly #prompts = new Map<number, { systemPrompt: string | null; tools: string }>();
  readonly #steps = new Map<number, { model?: string; prefix?: CacheablePrefix; usage?: UsageFigures; cost?: number; estimate?: NonNullable<StepAccount['estimate']> }>();
  readonly #estimate = { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, cost: 0 };
  readonly #totals = { steps: emptyTotals(), compactions: emptyTotals() };
  readonly #unpriced = new Set<string>();
  readonly #prefix = { tokens: 0, requestTokens: 0 };
  readonly #measured = { cachedInputTokens: 0, inputTokens: 0, calls: 0 };

  constructor(prices?: PriceTable) {
    this.#prices = prices;
  }

  /** At `context.projected`: the items as sent, from memory's visible items in order and the recorded fates. */
  projected(
    step: number,
    event: SessionEventOf<'context.projected'>,
    memory: readonly ({ readonly id: string; readonly item: MemoryItem } | undefined)[],
    tokenizer: Tokenizer,
  ): void {
    let runs;
    try {
      runs = decodeFateRuns(event.fateRuns);
    } catch {
      this.#sent = undefined;
      return;
    }
    let names: ReadonlyMap<string, string> | undefined;
    const items: SentItem[] = [];
    for (const { start, count, fate } of runs) {
      if (fate === 'dropped') continue;
      for (let index = start; index < start + count && index < memory.length; index++) {
        const entry = memory[index];
        if (!entry) continue;
        if (fate !== 'kept' && names === undefined) names = toolNamesByCallId(memory.flatMap((m) => (m ? [m.item] : [])));
        const sent = fate === 'kept' ? entry.item : asSent(entry.item, fate, names ?? new Map());
        // Items never change in memory: its id (and how it was rewritten) names what was sent.
        items.push({ key: fate === 'kept' ? entry.id : `${entry.id}#${fate}`, tokens: itemTokenCount(sent, tokenizer) });
      }
    }
    this.#sent = { step, items };
  }

  /** At `model.requested`: its prompt, and the prefix it shares with the previous request. */
  requested(event: SessionEventOf<'model.requested'>, tokenizer: Tokenizer): void {
    const step = event.step ?? this.#sent?.step ?? 0;
    const prompt =
      event.promptSeq !== undefined && this.#prompts.has(event.promptSeq)
        ? this.#prompts.get(event.promptSeq)!
        : { systemPrompt: event.systemPrompt ?? null, tools: canonicalJson(event.tools ?? []) };
    if (event.promptSeq === undefined) this.#prompts.set(event.seq, prompt);
    const items = this.#sent?.step === step ? this.#sent.items : [];
    const shape: RequestShape = {
      systemPrompt: prompt.systemPrompt,
      systemTokens: prompt.systemPrompt !== null ? tokenizer.count(prompt.systemPrompt) : 0,
      tools: prompt.tools,
      toolTokens: prompt.tools === '[]' ? 0 : tokenizer.count(prompt.tools),
      items,
    };
    const requestTokens = shape.systemTokens + shape.toolTokens + items.reduce((n, i) => n + i.tokens, 0);
    let tokens = 0;
    let common = 0;
    const previous = this.#previous;
    if (previous && previous.systemPrompt === shape.systemPrompt) {
      tokens += shape.systemTokens;
      if (previous.tools === shape.tools) {
        tokens += shape.toolTokens;
        while (common < items.length && common < previous.items.length && items[common]!.key === previous.items[common]!.key) {
          tokens += items[common]!.tokens;
          common += 1;
        }
      }
    }
    this.#previous = shape;
    // Called: with a table that has no price for it, it is unpriced whether or not the provider reports usage (the
    // estimate from our own counts leaves it out too).
    this.#checkPrice(event.model);
    this.#prefix.tokens += tokens;
    this.#prefix.requestTokens += requestTokens;
    this.#steps.set(step, { model: event.model, prefix: { tokens, requestTokens, share: requestTokens > 0 ? tokens / requestTokens : 0, items: common } });
  }

  /** At `model.responded`: the call's usage and cost. */
  responded(event: SessionEventOf<'model.responded'>, tokenizer: Tokenizer): void {
    const step = event.step ?? this.#sent?.step ?? 0;
    const entry = this.#steps.get(step) ?? {};
    if (entry.prefix) {
      const outputTokens = event.items.reduce((n, item) => n + itemTokenCount(item, tokenizer), 0);
      const figures = { inputTokens: entry.prefix.requestTokens, cachedInputTokens: entry.prefix.tokens, outputTokens };
      const price = this.#prices && entry.model !== undefined ? priceOf(this.#prices, entry.model) : undefined;
      const cost = price ? costOf({ ...figures, cacheWriteTokens: 0, cacheReported: true }, price) : undefined;
      this.#estimate.inputTokens += figures.inputTokens;
      this.#estimate.cachedInputTokens += figures.cachedInputTokens;
      this.#estimate.outputTokens += outputTokens;
      this.#estimate.cost += cost ?? 0;
      entry.estimate = { ...figures, ...(cost !== undefined ? { cost } : {}) };
      this.#steps.set(step, entry);
    }
    const usage = usageFigures(event.usage);
    if (!usage) return;
    const cost = this.#cost(usage, entry.model, this.#totals.steps);
    if (usage.cacheReported) {
      this.#measured.cachedInputTokens += usage.cachedInputTokens;
      this.#measured.inputTokens += usage.inputTokens;
      this.#measured.calls += 1;
    }
    this.#steps.set(step, { ...entry, usage, ...(cost !== undefined ? { cost } : {}) });
  }

  /** At `memory.compacted`: its own model calls' usage (a summarizer), priced by the policy's `model` setting. */
  compacted(event: SessionEventOf<'memory.compacted'>): CompactionAccount | undefined {
    const model = typeof event.policy.settings['model'] === 'string' ? (event.policy.settings['model'] as string) : undefined;
    const usage = usageFigures(event.usage);
    // A summarizer was called (its request is recorded) even when it reported no usage.
    if (!usage) {
      if (event.summarizer !== undefined && model !== undefined) this.#checkPrice(model);
      return undefined;
    }
    const cost = this.#cost(usage, model, this.#totals.compactions);
    return { ...(model !== undefined ? { model } : {}), usage, ...(cost !== undefined ? { cost } : {}) };
  }

  /** The account of a step's model call (undefined when the step made none). */
  step(step: number): StepAccount | undefined {
    const entry = this.#steps.get(step);
    if (!entry) return undefined;
    const measured = entry.usage?.cacheReported && entry.usage.inputTokens > 0 ? entry.usage.cachedInputTokens / entry.usage.inputTokens : undefined;
    return {
      ...(entry.model !== undefined ? { model: entry.model } : {}),
      ...(entry.usage ? { usage: entry.usage } : {}),
      ...(entry.cost !== undefined ? { cost: entry.cost } : {}),
      ...(entry.prefix ? { cacheablePrefix: entry.prefix } : {}),
      ...(measured !== undefined ? { measuredCacheShare: measured } : {}),
      ...(entry.estimate ? { estimate: entry.estimate } : {}),
    };
  }

  /** Forgets a step's entry once it has been read out (a long session's accounting stays small). */
  release(step: number): void {
    this.#steps.delete(step);
  }

  totals(): AccountTotals {
    const priced = this.#prices !== undefined;
    const out = (t: ReturnType<typeof emptyTotals>): UsageTotals => {
      const { cost, ...rest } = t;
      return priced ? { ...rest, cost } : rest;
    };
    const { tokens, requestTokens } = this.#prefix;
    const measured = this.#measured;
    return {
      steps: out(this.#totals.steps),
      compactions: out(this.#totals.compactions),
      ...(priced ? { cost: this.#totals.steps.cost + this.#totals.compactions.cost } : {}),
      unpricedModels: [...this.#unpriced].sort(),
      cacheablePrefix: { tokens, requestTokens, share: requestTokens > 0 ? tokens / requestTokens : 0 },
      estimate: { inputTokens: this.#estimate.inputTokens, cachedInputTokens: this.#estimate.cachedInputTokens, outputTokens: this.#estimate.outputTokens, ...(priced ? { cost: this.#estimate.cost } : {}) },
      ...(measured.calls > 0
        ? { measuredCache: { cachedInputTokens: measured.cachedInputTokens, inputTokens: measured.inputTokens, share: measured.inputTokens > 0 ? measured.cachedInputTokens / measured.inputTokens : 0 } }
        : {}),
    };
  }

  /** Notes `model` as unpriced when there is a table and it has no price for it. */
  #checkPrice(model: string): void {
    if (this.#prices && !priceOf(this.#prices, model)) this.#unpriced.add(model);
  }

  #cost(usage: UsageFigures, model: string | undefined, sum: ReturnType<typeof emptyTotals>): number | undefined {
    sum.calls += 1;
    sum.inputTokens += usage.inputTokens;
    sum.outputTokens += usage.outputTokens;
    sum.cachedInputTokens += usage.cachedInputTokens;
    sum.cacheWriteTokens += usage.cacheWriteTokens;
    if (!this.#prices) return undefined;
    const price = model !== undefined ? priceOf(this.#prices, model) : undefined;
    if (!price) {
      this.#unpriced.add(model ?? '(unknown model)');
      return undefined;
    }
    const cost = costOf(usage, price);
    sum.cost += cost;
    return cost;
  }
}
