// What a Chat Completions request costs in tokens, counted the way OpenAI documents it: per message, per string, per
// tool, and what an item adds beyond its texts when it is sent as Chat Completions messages.
import { itemTokenCount, REQUEST_PRIMING_TOKENS, type Tokenizer } from '../context/index.js';
import type { MemoryItem } from '../items/index.js';
import { toChatCompletions, type ChatMessage } from './chat-completions.js';

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
