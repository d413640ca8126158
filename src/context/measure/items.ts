// What an item costs: approximate characters, provider-visible tokens (exact or asked with a limit) and a token lower bound, memoized by item identity.
import { ProjectionCache, registerProjectionCache } from '../caches.js';
import { InvalidOptionsError } from '../../base/errors.js';
import { canonicalJson } from '../../base/canonical.js';
import { approxChars } from '../../items/index.js';
import type { MemoryItem } from '../../items/index.js';
import { tokenizerFromName } from './tokenizer.js';
import type { Tokenizer } from './tokenizer.js';

/**
 * Tokens added to every item on top of its text: the role or type marker and the separators a provider wraps
 * around each message, call or output (OpenAI documents 3 per chat message plus the role; 4 is a slight
 * over-estimate, which is the safe side for a budget).
 * @example itemTokenCount(userMessage(''), approxTokenizer) === ITEM_TOKEN_OVERHEAD // true
 */
export const ITEM_TOKEN_OVERHEAD = 4;

const charMemo = new ProjectionCache<object, number>('approximate characters per item');

/**
 * `approxChars(item)`, memoized by identity (frozen items only: see caches.ts).
 * @example itemApproxChars(userMessage('hi')) // 47, computed once per item object
 */
export const itemApproxChars = (item: MemoryItem): number => {
  const hit = charMemo.get(item);
  if (hit !== undefined) return hit;
  const chars = approxChars(item);
  charMemo.set(item, chars);
  return chars;
};

/** The memoized `approxChars` of `item`, or undefined when it has not been measured. */
export const knownApproxChars = (item: MemoryItem): number | undefined => charMemo.get(item);

/** Records `approxChars(item)` obtained elsewhere (facts saved with a checkpoint). */
export const rememberApproxChars = (item: MemoryItem, chars: number): void => {
  charMemo.set(item, chars);
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

/** `tokenizer.count(text)`, checked: a count must be a non-negative safe integer (lazy counting relies on it). */
const countText = (tokenizer: Tokenizer, text: string): number => {
  const count = tokenizer.count(text);
  if (!Number.isSafeInteger(count) || count < 0) {
    throw new InvalidOptionsError('the tokenizer', [
      {
        path: '',
        message: `tokenizer ${JSON.stringify(tokenizer.name)} counted ${String(count)} tokens for a text of ${text.length} characters: a count must be a non-negative integer`,
      },
    ]);
  }
  return count;
};

/**
 * One tokenizer's counts of items, memoized by item identity: exact counts, and counts asked with a limit
 * ("exact if at most `bound`, otherwise anything above it"), which stop tokenizing once the item's texts
 * already cost more than the limit.
 */
export class ItemTokenMemo {
  readonly tokenizer: Tokenizer;
  private readonly exactCounts = new ProjectionCache<object, number>('exact tokens per item', false);
  /** Whether the last {@link within} call returned the exact count. */
  lastWasExact = false;
  /** The characters the last {@link exact} call gave the tokenizer (0 when the count was memoized). */
  lastExactChars = 0;

  constructor(tokenizer: Tokenizer) {
    this.tokenizer = tokenizer;
  }

  /** The memoized exact count of `item`, or undefined when it has not been counted. */
  known(item: MemoryItem): number | undefined {
    return this.exactCounts.get(item);
  }

  /** Records an exact count obtained elsewhere (an imported count cache). */
  remember(item: MemoryItem, count: number): void {
    this.exactCounts.set(item, count);
  }

  /** The exact count of `item` (see {@link itemTokenCount}). */
  exact(item: MemoryItem): number {
    this.lastExactChars = 0;
    const hit = this.exactCounts.get(item);
    if (hit !== undefined) return hit;
    const tokenizer = this.tokenizer;
    let total = ITEM_TOKEN_OVERHEAD;
    let chars = 0;
    emitProviderTexts(item, (text) => {
      if (text.length > 0) {
        chars += text.length;
        total += countText(tokenizer, text);
      }
    });
    this.lastExactChars = chars;
    this.exactCounts.set(item, total);
    return total;
  }

  /**
   * The exact count of `item` if it is at most `bound`, otherwise some number above `bound` (the texts are
   * counted in order and counting stops once their sum passes `bound`). Sets {@link lastWasExact}.
   */
  within(item: MemoryItem, bound: number): number {
    const hit = this.exactCounts.get(item);
    if (hit !== undefined) {
      this.lastWasExact = true;
      return hit;
    }
    const tokenizer = this.tokenizer;
    let total = ITEM_TOKEN_OVERHEAD;
    let complete = true;
    emitProviderTexts(item, (text) => {
      if (!complete) return;
      if (total > bound) {
        complete = false;
        return;
      }
      if (text.length > 0) total += countText(tokenizer, text);
    });
    if (complete) this.exactCounts.set(item, total);
    this.lastWasExact = complete;
    return total;
  }
}

let tokenMemos = new WeakMap<Tokenizer, ItemTokenMemo>();
registerProjectionCache('token counts per tokenizer and item', () => {
  tokenMemos = new WeakMap();
});

/** The memo of one tokenizer's item counts (one per tokenizer object, shared by every history). */
export const itemTokenMemo = (tokenizer: Tokenizer): ItemTokenMemo => {
  let memo = tokenMemos.get(tokenizer);
  if (!memo) {
    memo = new ItemTokenMemo(tokenizer);
    tokenMemos.set(tokenizer, memo);
  }
  return memo;
};

/** The memoized counter of one tokenizer, for loops that count many items. */
export const itemTokenCounter = (tokenizer: Tokenizer): ((item: MemoryItem) => number) => {
  const memo = itemTokenMemo(tokenizer);
  return (item) => memo.exact(item);
};

// Character classes of the lower bound: whitespace (what `\s` matches, as in the tokenizers' split patterns),
// ASCII letter, ASCII digit, apostrophe, other ASCII (punctuation), and anything else.
const SPACE = 0;
const LETTER = 1;
const DIGIT = 2;
const APOSTROPHE = 3;
const PUNCT = 4;
const OTHER = 5;
const ASCII_CLASS = new Uint8Array(128).map((_, c) =>
  c === 32 || (c >= 9 && c <= 13)
    ? SPACE
    : (c >= 65 && c <= 90) || (c >= 97 && c <= 122)
      ? LETTER
      : c >= 48 && c <= 57
        ? DIGIT
        : c === 39
          ? APOSTROPHE
          : PUNCT,
);
const classOf = (c: number): number => {
  if (c < 128) return ASCII_CLASS[c] as number;
  return c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff
    ? SPACE
    : OTHER;
};
// STARTS[previous * 6 + current] = 1 where a token must begin at the current character: after whitespace
// (anything but whitespace), and between ASCII letters, digits and punctuation where every split pattern ends a
// piece (letter to digit or punctuation, digit to letter, punctuation or apostrophe, punctuation or apostrophe to
// digit). A letter after punctuation is not one (`(foo` is one piece in cl100k and o200k), nor anything
// involving other characters (a non-ASCII digit may continue a number).
const STARTS = new Uint8Array(36);
for (const current of [LETTER, DIGIT, APOSTROPHE, PUNCT, OTHER]) STARTS[SPACE * 6 + current] = 1;
STARTS[LETTER * 6 + DIGIT] = 1;
STARTS[LETTER * 6 + PUNCT] = 1;
STARTS[DIGIT * 6 + LETTER] = 1;
STARTS[DIGIT * 6 + PUNCT] = 1;
STARTS[DIGIT * 6 + APOSTROPHE] = 1;
STARTS[PUNCT * 6 + DIGIT] = 1;
STARTS[APOSTROPHE * 6 + DIGIT] = 1;

/**
 * A lower bound of the tokens of `text` in the OpenAI BPE encodings (r50k, p50k, cl100k, o200k): the number of
 * places where a token must begin: each run of non-whitespace characters (except a run that starts with `/`
 * right after a line break: o200k has tokens such as `";\n//"`), and, inside a run, each change between ASCII
 * letters, digits and punctuation that every encoding's split pattern cuts at (letter to digit or punctuation,
 * digit to anything else ASCII, punctuation to digit). No token of those vocabularies holds two such places
 * (test/context/token-bounds.test.ts checks every token), and a text's tokens cover it, so each lies in a
 * token of its own. About 0.4 of the o200k count on prose and code, 0.8 on tool output.
 * @example textTokenLowerBound('a b\n// c') // 3 (o200k: 4 tokens)
 */
export const textTokenLowerBound = (text: string): number => countStarts(text, Infinity);

/**
 * Some of the places {@link countStarts} counts, found by the engine's string search rather than character by
 * character: the text's first character and each character after a space, when it is printable ASCII (a
 * non-whitespace character after whitespace always starts a run). Stops once the count passes `cap`.
 */
export const countWordStarts = (text: string, cap: number): number => {
  const first = text.charCodeAt(0);
  let starts = first > 32 && first < 127 ? 1 : 0;
  let space = text.indexOf(' ');
  while (space !== -1 && starts <= cap) {
    const next = text.charCodeAt(space + 1);
    if (next > 32 && next < 127) starts += 1;
    space = text.indexOf(' ', space + 1);
  }
  return starts;
};

/** {@link textTokenLowerBound} of `text`, scanning only until the count passes `cap`. */
const countStarts = (text: string, cap: number): number => {
  // A small cap on a long text (an old item asked with the little room left) is usually passed within the first
  // words: found by string search, the count is a part of the places, which settles "more than cap" just as well.
  if (cap < text.length >> 3) {
    const words = countWordStarts(text, cap);
    if (words > cap) return words;
  }
  let starts = 0;
  let previousClass = SPACE;
  let previous = 32;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const currentClass = c < 128 ? (ASCII_CLASS[c] as number) : classOf(c);
    if (STARTS[previousClass * 6 + currentClass] === 1 && !(c === 47 && (previous === 10 || previous === 13))) {
      starts += 1;
      if (starts > cap) return starts;
    }
    previousClass = currentClass;
    previous = c;
  }
  return starts;
};

const lowerBoundMemo = new ProjectionCache<object, number>('token lower bound per item');

/**
 * A lower bound of the tokens `item` costs with any OpenAI BPE encoding: {@link ITEM_TOKEN_OVERHEAD} plus
 * {@link textTokenLowerBound} of each text a provider is sent. Independent of the tokenizer; memoized by identity.
 */
export const itemTokenLowerBound = (item: MemoryItem): number => {
  const hit = lowerBoundMemo.get(item);
  if (hit !== undefined) return hit;
  let total = ITEM_TOKEN_OVERHEAD;
  emitProviderTexts(item, (text) => {
    total += countStarts(text, Infinity);
  });
  lowerBoundMemo.set(item, total);
  return total;
};

/** The memoized {@link itemTokenLowerBound} of `item`, or undefined when it has not been computed. */
export const knownTokenLowerBound = (item: MemoryItem): number | undefined => lowerBoundMemo.get(item);

/** Records {@link itemTokenLowerBound} of `item` obtained elsewhere (facts saved with a checkpoint). */
export const rememberTokenLowerBound = (item: MemoryItem, bound: number): void => {
  lowerBoundMemo.set(item, bound);
};

/**
 * Whether {@link itemTokenLowerBound} holds for `tokenizer`: it is one of the built-in OpenAI BPE tokenizers
 * (the shared instance, so a wrapper with the same name does not qualify).
 */
export const hasBpeLowerBound = (tokenizer: Tokenizer): boolean =>
  tokenizer.name.startsWith('openai:') && tokenizerFromName(tokenizer.name) === tokenizer;

/**
 * {@link itemTokenLowerBound} if it is at most `bound`, otherwise some number above `bound` (the texts are
 * scanned only until the bound is passed). Whether the result is the whole bound is in `.complete` of the result.
 */
export const itemTokenLowerBoundWithin = (item: MemoryItem, bound: number): { readonly value: number; readonly complete: boolean } => {
  const hit = lowerBoundMemo.get(item);
  if (hit !== undefined) return { value: hit, complete: true };
  let total = ITEM_TOKEN_OVERHEAD;
  let complete = true;
  emitProviderTexts(item, (text) => {
    if (!complete) return;
    if (total > bound) {
      complete = false;
      return;
    }
    total += countStarts(text, bound - total);
  });
  if (complete && total > bound) complete = false;
  if (complete) lowerBoundMemo.set(item, total);
  return { value: total, complete };
};

// The state of one itemTokenLowerBoundScan (synchronous and never re-entered: one static visitor, no closure per item).
let scanTotal = 0;
let scanBound = 0;
const scanText = (text: string): void => {
  if (scanTotal > scanBound) return;
  scanTotal += countStarts(text, scanBound - scanTotal);
};

/**
 * {@link itemTokenLowerBound} of `item` if it is at most `bound` (then also memoized), otherwise some number above
 * `bound` (the texts are scanned only until the bound is passed). Unlike {@link itemTokenLowerBoundWithin} it does
 * not look in the memo first: for the small bounds an old item is asked with, scanning the start of its text is
 * cheaper than the lookup.
 */
export const itemTokenLowerBoundScan = (item: MemoryItem, bound: number): number => {
  let total = ITEM_TOKEN_OVERHEAD;
  if (total > bound) return total;
  // The commonest shapes read directly (the texts emitProviderTexts gives them, in its order); the rest through it.
  const record = item as Record<string, unknown>;
  const type = item.type;
  const first = type === 'function_call' ? record['name'] : type === 'function_call_output' ? record['output'] : type === 'message' ? record['content'] : undefined;
  if (typeof first === 'string' && (type !== 'function_call' || typeof record['arguments'] === 'string') && (type !== 'message' || record['tool_calls'] === undefined)) {
    total += countStarts(first, bound - total);
    if (type === 'function_call' && total <= bound) total += countStarts(record['arguments'] as string, bound - total);
  } else {
    scanTotal = total;
    scanBound = bound;
    emitProviderTexts(item, scanText);
    total = scanTotal;
  }
  if (total <= bound) lowerBoundMemo.set(item, total);
  return total;
};

/** The number of non-empty texts of a function call (its name, its arguments as a string): see {@link shapeTexts}. */
export const shapeTextsOfCall = (item: MemoryItem): number => {
  const call = item as { name?: unknown; arguments?: unknown };
  const name = call.name;
  const args = call.arguments;
  return (typeof name === 'string' && name.length > 0 ? 1 : 0) + (typeof args === 'string' && args.length > 0 ? 1 : 0);
};

/**
 * How many non-empty texts an item of the commonest shapes has: a function call's name and string arguments, a
 * function call output's string output, a message's string content (0 for anything else). A non-empty text is at
 * least one token of an OpenAI BPE encoding (see {@link itemTokenFloor}).
 */
export const shapeTexts = (item: MemoryItem): number => {
  const type = item.type;
  if (type === 'function_call') return shapeTextsOfCall(item);
  const text = type === 'function_call_output' ? (item as { output?: unknown }).output : type === 'message' ? (item as { content?: unknown }).content : undefined;
  return typeof text === 'string' && text.length > 0 ? 1 : 0;
};

/**
 * A lower bound of the tokens `item` costs in an OpenAI BPE encoding from its shape alone: {@link ITEM_TOKEN_OVERHEAD},
 * plus one for each non-empty text of the commonest shapes ({@link shapeTexts}: a non-empty text is at least one
 * token). No text is read, so it is the first question asked of an old item when little room is left.
 */
export const itemTokenFloor = (item: MemoryItem): number => ITEM_TOKEN_OVERHEAD + shapeTexts(item);

/**
 * Whether `item` costs at most `bound` tokens in an OpenAI BPE encoding whatever its texts hold: every token covers
 * at least one UTF-8 byte and a UTF-16 unit is at most three, so the count is at most {@link ITEM_TOKEN_OVERHEAD}
 * plus three per character. Answers only for the commonest shapes (false otherwise: the caller counts as usual).
 */
export const fitsWhateverItHolds = (item: MemoryItem, bound: number): boolean => {
  const room = (bound - ITEM_TOKEN_OVERHEAD) / 3;
  if (room < 0) return false;
  const record = item as Record<string, unknown>;
  switch (item.type) {
    case 'function_call': {
      const name = record['name'];
      const args = record['arguments'];
      return typeof name === 'string' && typeof args === 'string' && name.length + args.length <= room;
    }
    case 'function_call_output': {
      const output = record['output'];
      return typeof output === 'string' && output.length <= room;
    }
    case 'message': {
      const content = record['content'];
      return typeof content === 'string' && record['tool_calls'] === undefined && content.length <= room;
    }
    default:
      return false;
  }
};

/** Calls `visit` with each text of `item` that a provider is sent and that tokens are counted for, in order. */
export const forEachProviderText = (item: MemoryItem, visit: (text: string) => void): void => emitProviderTexts(item, visit);

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
export const itemTokenCount = (item: MemoryItem, tokenizer: Tokenizer): number => itemTokenMemo(tokenizer).exact(item);
