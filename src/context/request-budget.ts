// The whole request in the budget: what `maxTokens` leaves for items once the request's overhead, the output reserve and a calibration margin are taken off.
import { canonicalJson } from '../base/canonical.js';
import { budgetLimit, itemTokenLimit } from './budget.js';
import type { ContextBudget } from './budget.js';
import { ITEM_TOKEN_OVERHEAD } from './measure/items.js';
import type { Tokenizer } from './measure/tokenizer.js';

/** Tokens every request carries besides its messages: the priming of the model's reply (OpenAI documents 3). */
export const REQUEST_PRIMING_TOKENS = 3;

/** What a request carries besides its items: the system prompt and the tool specs (as the runtime builds them). */
export interface OverheadPrompt {
  readonly systemPrompt?: string | undefined;
  readonly tools?: readonly Record<string, unknown>[] | undefined;
}

/** What the runtime takes off `maxTokens` besides `reserveOutputTokens`. */
export interface RequestAllowance {
  /** The request's fixed overhead (system prompt, tools, priming), counted with the projector's tokenizer. */
  readonly overheadTokens: number;
  /** A safety margin (`calibrate`), learned from the drift recorded in earlier steps. */
  readonly marginTokens?: number | undefined;
}

const counted = new WeakMap<Tokenizer, Map<string, number>>();
const MEMO_ENTRIES = 64;

/**
 * The tokens a request carries besides its items, counted with `tokenizer`: the system prompt as a message
 * ({@link ITEM_TOKEN_OVERHEAD} plus its text), each tool spec as its JSON text, and {@link REQUEST_PRIMING_TOKENS}.
 * Memoized per tokenizer by content, so a prompt that does not change is counted once.
 * @example requestOverheadTokens({ systemPrompt: 'be brief', tools: [spec] }, openAiTokenizer())
 */
export const requestOverheadTokens = (prompt: OverheadPrompt, tokenizer: Tokenizer): number => {
  const key = canonicalJson({ s: prompt.systemPrompt ?? null, t: prompt.tools ?? [] });
  let memo = counted.get(tokenizer);
  const hit = memo?.get(key);
  if (hit !== undefined) return hit;
  let total = REQUEST_PRIMING_TOKENS;
  if (prompt.systemPrompt !== undefined && prompt.systemPrompt !== '') total += ITEM_TOKEN_OVERHEAD + tokenizer.count(prompt.systemPrompt);
  for (const tool of prompt.tools ?? []) total += tokenizer.count(canonicalJson(tool));
  if (!memo) counted.set(tokenizer, (memo = new Map()));
  if (memo.size >= MEMO_ENTRIES) memo.delete(memo.keys().next().value as string);
  memo.set(key, total);
  return total;
};

/**
 * The budget a projector is given so that `maxTokens` bounds the whole request: `maxTokens` less
 * `reserveOutputTokens`, the request's overhead and the calibration margin (at least 1, so the first pinned
 * item and the newest item are still sent; 0 stays 0), with `reserveOutputTokens` removed (it is taken off
 * here, not again by the projector). A budget without `maxTokens` only loses `reserveOutputTokens`. Pure:
 * the runtime, the bridges, replay and an overflow retry compute the same budget from the same numbers.
 * @example effectiveBudget({ maxTokens: 16_000, reserveOutputTokens: 4_000 }, { overheadTokens: 1_200 }) // { maxTokens: 10_800 }
 */
export const effectiveBudget = (budget: ContextBudget, allowance: RequestAllowance): ContextBudget => {
  const { reserveOutputTokens, maxTokens, ...rest } = budget;
  if (budgetLimit(maxTokens) === undefined) return maxTokens === undefined ? rest : { ...rest, maxTokens };
  const taken = Math.max(0, allowance.overheadTokens) + Math.max(0, allowance.marginTokens ?? 0);
  return { ...rest, maxTokens: itemTokenLimit(maxTokens, reserveOutputTokens, taken) };
};
