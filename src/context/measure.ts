// What an item costs: approximate characters and provider-visible tokens, both memoized by item identity.
import { canonicalJson } from '../events/index.js';
import { approxChars } from '../items/index.js';
import type { MemoryItem } from '../items/index.js';
import type { Tokenizer } from './tokenizer.js';

/**
 * Tokens added to every item on top of its text: the role or type marker and the separators a provider wraps
 * around each message, call or output (OpenAI documents 3 per chat message plus the role; 4 is a slight
 * over-estimate, which is the safe side for a budget).
 * @example itemTokenCount(userMessage(''), approxTokenizer) === ITEM_TOKEN_OVERHEAD // true
 */
export const ITEM_TOKEN_OVERHEAD = 4;

const charMemo = new WeakMap<object, number>();

/**
 * `approxChars(item)`, memoized by identity (items in memory are frozen and keep their identity).
 * @example itemApproxChars(userMessage('hi')) // 47, computed once per item object
 */
export const itemApproxChars = (item: MemoryItem): number => {
  const hit = charMemo.get(item);
  if (hit !== undefined) return hit;
  const chars = approxChars(item);
  charMemo.set(item, chars);
  return chars;
};

// Canonical JSON (sorted keys): an item counts the same whatever the order of its keys (live or read back).
const jsonText = (value: unknown): string => (value === undefined ? '' : canonicalJson(value));

/** Calls `emit` with each text a provider is sent for a content value (a string, a part, or a list of parts). */
const emitContent = (content: unknown, emit: (text: string) => void): void => {
  if (typeof content === 'string') {
    emit(content);
    return;
  }
  if (Array.isArray(content)) {
    for (const part of content) emitContent(part, emit);
    return;
  }
  if (content === null || typeof content !== 'object') return;
  const part = content as Record<string, unknown>;
  if (typeof part['text'] === 'string') {
    emit(part['text']);
    return;
  }
  if (part['type'] === 'tool_use') {
    if (typeof part['name'] === 'string') emit(part['name']);
    emit(jsonText(part['input'] ?? {}));
    return;
  }
  if (part['type'] === 'tool_result') {
    emitContent(part['content'], emit);
    return;
  }
  emit(jsonText(part));
};

/** Calls `emit` with each text of an item that a provider would be sent (see {@link itemTokenCount}). */
const emitProviderTexts = (item: MemoryItem, emit: (text: string) => void): void => {
  const record = item as Record<string, unknown>;
  switch (item.type) {
    case 'message': {
      emitContent(record['content'], emit);
      const calls = record['tool_calls'];
      if (Array.isArray(calls)) {
        for (const call of calls) {
          if (call === null || typeof call !== 'object') continue;
          const c = call as { name?: unknown; arguments?: unknown; function?: { name?: unknown; arguments?: unknown } };
          const name = typeof c.name === 'string' ? c.name : c.function?.name;
          const args = typeof c.arguments === 'string' ? c.arguments : c.function?.arguments;
          if (typeof name === 'string') emit(name);
          if (typeof args === 'string') emit(args);
        }
      }
      return;
    }
    case 'function_call':
      if (typeof record['name'] === 'string') emit(record['name']);
      if (typeof record['arguments'] === 'string') emit(record['arguments']);
      else emit(jsonText(record['arguments']));
      return;
    case 'function_call_output':
      emitContent(record['output'], emit);
      return;
    case 'reasoning':
      emitContent(record['summary'], emit);
      emitContent(record['content'], emit);
      emitContent(record['text'], emit);
      emitContent(record['output'], emit);
      return;
    default:
      emit(jsonText(item));
  }
};

const tokenMemos = new WeakMap<Tokenizer, WeakMap<object, number>>();

/** The memoized counter of one tokenizer, for loops that count many items. */
export const itemTokenCounter = (tokenizer: Tokenizer): ((item: MemoryItem) => number) => {
  let memo = tokenMemos.get(tokenizer);
  if (!memo) {
    memo = new WeakMap();
    tokenMemos.set(tokenizer, memo);
  }
  const cache = memo;
  return (item) => {
    const hit = cache.get(item);
    if (hit !== undefined) return hit;
    let total = ITEM_TOKEN_OVERHEAD;
    emitProviderTexts(item, (text) => {
      if (text.length > 0) total += tokenizer.count(text);
    });
    cache.set(item, total);
    return total;
  };
};

/**
 * The tokens an item costs when sent: {@link ITEM_TOKEN_OVERHEAD} plus the tokenizer's count of each text a
 * provider is sent for it, counted separately: message text (string content, `text` of content parts,
 * `tool_use` names and inputs, `tool_result` contents, and the JSON of any other part), each `tool_calls`
 * entry's name and arguments, a function call's name and arguments, a tool output, a reasoning item's
 * summary, content, text and placeholder; for items of other types, their JSON. Ids and other keys are not
 * counted. Memoized per tokenizer by item identity, so history is tokenized once, not every turn: do not
 * mutate an item after it has been counted (items in memory are frozen).
 * @example itemTokenCount(userMessage('hello world'), approxTokenizer) // 4 + 3
 */
export const itemTokenCount = (item: MemoryItem, tokenizer: Tokenizer): number => itemTokenCounter(tokenizer)(item);
