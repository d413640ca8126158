// Projecting for a whole request: the items within what maxTokens leaves after the request's overhead, the per-message framing of the items sent, and the count providers are compared with.
import {
  effectiveBudget,
  itemTokenCount,
  projectForModel,
  REQUEST_PRIMING_TOKENS,
  type ContextBudget,
  type ContextProjection,
  type ContextProjector,
  type RequestAllowance,
  type Tokenizer,
} from '../context/index.js';
import { itemTokenLimit } from '../context/index.js';
import type { MemoryItem } from '../items/index.js';
import { toChatCompletions, type ChatMessage } from './providers/chat-completions.js';

/** Tokens Chat Completions adds to every message (OpenAI's documented count: 3, the role counted as text). */
export const CHAT_MESSAGE_TOKENS = 3;

const countLeaves = (value: unknown, tokenizer: Tokenizer): number => {
  if (typeof value === 'string') return value.length === 0 ? 0 : tokenizer.count(value);
  if (Array.isArray(value)) return value.reduce((sum: number, v) => sum + countLeaves(v, tokenizer), 0);
  if (value !== null && typeof value === 'object') return Object.values(value).reduce((sum: number, v) => sum + countLeaves(v, tokenizer), 0);
  return 0;
};

/**
 * The tokens of a Chat Completions request as OpenAI documents counting them: {@link CHAT_MESSAGE_TOKENS} per message
 * plus every string it carries (role, content and parts, names, tool call ids, types, arguments, `reasoning_content`),
 * each counted by itself, plus {@link REQUEST_PRIMING_TOKENS}; each tool as the JSON text of its definition (more than
 * the TypeScript-like form the server renders tools in). Keys and JSON punctuation are not counted.
 * @example chatCompletionsRequestTokens({ messages: [{ role: 'user', content: 'hi' }] }, openAiTokenizer()) // 3 + 1 + 1 + 3
 */
export const chatCompletionsRequestTokens = (
  body: { readonly messages: readonly ChatMessage[]; readonly tools?: readonly unknown[] | undefined },
  tokenizer: Tokenizer,
): number => {
  let total = REQUEST_PRIMING_TOKENS;
  for (const message of body.messages) total += CHAT_MESSAGE_TOKENS + countLeaves(message, tokenizer);
  for (const tool of body.tools ?? []) total += tokenizer.count(JSON.stringify(tool));
  return total;
};

const framingMemo = new WeakMap<Tokenizer, WeakMap<object, number>>();

/**
 * What an item costs in a Chat Completions request beyond `itemTokenCount` (its texts and the 4-token frame): the
 * call ids, types and part types a message carries, counted from the item serialised alone (in a request, calls and
 * reasoning join their neighbours' messages, which costs less). Never negative; memoized per tokenizer for frozen items.
 * @example itemFramingTokens(functionCallOutput('call_1', 'ok'), openAiTokenizer()) // the tokens of 'call_1'
 */
export const itemFramingTokens = (item: MemoryItem, tokenizer: Tokenizer): number => {
  const frozen = Object.isFrozen(item);
  let memo = framingMemo.get(tokenizer);
  if (frozen) {
    const hit = memo?.get(item);
    if (hit !== undefined) return hit;
  }
  const messages = toChatCompletions([item], { strict: true });
  let sent = 0;
  for (const message of messages) sent += CHAT_MESSAGE_TOKENS + countLeaves(message, tokenizer);
  const framing = Math.max(0, sent - itemTokenCount(item, tokenizer));
  if (frozen) {
    if (!memo) framingMemo.set(tokenizer, (memo = new WeakMap()));
    memo.set(item, framing);
  }
  return framing;
};

/** The tokenizer a projector counts with (its own, else approx-like fallbacks are the caller's business). */
const framingOf = (items: readonly MemoryItem[], tokenizer: Tokenizer): number => {
  let total = 0;
  for (const item of items) total += itemFramingTokens(item, tokenizer);
  return total;
};

const MAX_PASSES = 6;

/**
 * Projects for a whole request: `maxTokens` bounds the items, the request's overhead (`allowance.overheadTokens`:
 * system prompt, tools, priming), the per-message framing of the items sent ({@link itemFramingTokens}) and the
 * margin, less `reserveOutputTokens`. The projector is given {@link effectiveBudget}; when the framing of what it
 * sent does not fit, it projects again with the excess taken off too (a few passes at most). The report gets
 * `overheadTokens` (overhead plus framing of the items sent); when the token limit dropped something, the note
 * `request overhead: …` follows the limits' notes, and the `maxTokens applied` note names the configured `maxTokens`. Pure and deterministic: replay calls it with the recorded allowance.
 * @example projectRequest(projector, memory.getItems(), { maxTokens: 16_000, reserveOutputTokens: 2_000 }, { overheadTokens: 900 }, tokenizer)
 */
export const projectRequest = (
  projector: ContextProjector,
  items: readonly MemoryItem[],
  budget: ContextBudget,
  allowance: RequestAllowance,
  tokenizer: Tokenizer,
): ContextProjection => {
  const base = effectiveBudget(budget, allowance);
  const limited = base.maxTokens !== undefined && base.maxTokens >= 0;
  const whole = limited ? itemTokenLimit(budget.maxTokens, budget.reserveOutputTokens) - Math.max(0, allowance.marginTokens ?? 0) : Infinity;
  let itemLimit = base.maxTokens ?? -1;
  let projection = projectForModel(projector, items, base);
  let framing = framingOf(projection.items, tokenizer);
  for (let pass = 1; limited && pass < MAX_PASSES && itemLimit > 1; pass++) {
    const excess = (projection.report.projectedTokens ?? 0) + allowance.overheadTokens + framing - whole;
    if (excess <= 0) break;
    itemLimit = Math.max(1, itemLimit - excess);
    projection = projectForModel(projector, items, { ...base, maxTokens: itemLimit });
    framing = framingOf(projection.items, tokenizer);
  }
  const overheadTokens = allowance.overheadTokens + framing;
  const configured = budget.maxTokens;
  const notes = projection.report.notes.map((note) => (note.startsWith('maxTokens applied: ') && configured !== undefined ? `maxTokens applied: ${configured}` : note));
  if (limited && projection.report.tokenLimitApplied === true) {
    const reserve = Math.max(0, budget.reserveOutputTokens ?? 0);
    const margin = Math.max(0, allowance.marginTokens ?? 0);
    notes.push(
      `request overhead: ${overheadTokens} token(s) (${allowance.overheadTokens} prompt and tools, ${framing} framing)` +
        `${reserve > 0 ? `, ${reserve} reserved for output` : ''}${margin > 0 ? `, ${margin} calibration margin` : ''}; items had ${itemLimit} of maxTokens ${String(configured)}`,
    );
  }
  return { items: projection.items, report: { ...projection.report, notes, overheadTokens } };
};
