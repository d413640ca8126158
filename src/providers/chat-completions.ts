// Converters between memory items (OpenAI Responses shape) and OpenAI Chat Completions `messages`.
import { isRecord } from '../base/index.js';
import { isFunctionCall, isFunctionCallOutput, isMessage, isReasoning, toolCallArguments, toolCallName } from '../items/index.js';
import type { MemoryItem, ToolCall } from '../items/index.js';

/** A Chat Completions role; roles the API does not define (mini-SWE-agent's `exit`) are kept as they are. */
export type ChatRole = 'system' | 'developer' | 'user' | 'assistant' | 'tool' | (string & {});

/** A part of array content (`text`, `image_url`, `input_audio`, `file`, `refusal`, ...). */
export interface ChatContentPart {
  readonly type: string;
  readonly text?: string;
  readonly [key: string]: unknown;
}

/** A tool call on an assistant message: `{id, type:'function', function:{name, arguments}}`. */
export interface ChatToolCall {
  readonly id: string;
  readonly type: 'function' | (string & {});
  readonly function?: { readonly name: string; readonly arguments: string; readonly [key: string]: unknown };
  readonly [key: string]: unknown;
}

/** One Chat Completions message. Keys the API does not define (`extra`, `provider_specific_fields`, ...) are kept. */
export interface ChatMessage {
  readonly role: ChatRole;
  readonly content?: string | readonly ChatContentPart[] | null;
  readonly name?: string;
  readonly tool_calls?: readonly ChatToolCall[];
  readonly tool_call_id?: string;
  /** Reasoning text (DeepSeek, vLLM and other OpenAI-compatible servers). */
  readonly reasoning_content?: string | null;
  readonly [key: string]: unknown;
}

/** Options of {@link toChatCompletions}. */
export interface ToChatCompletionsOptions {
  /**
   * `'reasoning_content'` (default): reasoning items become `reasoning_content` on the assistant message that follows.
   * `'omit'`: reasoning items are left out (for servers that reject `reasoning_content` in requests).
   */
  readonly reasoning?: 'reasoning_content' | 'omit';
  /**
   * `false` (default): lossless; unknown roles, wrapped messages and keys the API does not define are kept.
   * `true`: only what the Chat Completions API accepts: known roles, standard keys, nested tool calls, standard parts.
   */
  readonly strict?: boolean;
}

/** How a provider wrote content that the item holds as `''`: `null`, or no `content` key at all. */
export type EmptyContent = 'null' | 'omitted';

/** The item key that records {@link EmptyContent}, so that null or missing content round-trips. */
export const EMPTY_CONTENT_KEY = 'empty_content';

/** The item type that keeps, verbatim, a Chat message no item shape can hold (no role, invalid content, clashing keys). */
export const CHAT_MESSAGE_ITEM_TYPE = 'chat_message';

type Json = Record<string, unknown>;

// Helpers shared with anthropic.ts (not re-exported from the providers index).

/** A plain JSON object (not null, not an array). */
export { isRecord };

/** The keys of `obj` not in `keys`, as a new object (own keys only; safe for any key name). */
export const omitKeys = (obj: Json, keys: ReadonlySet<string>): Json =>
  Object.fromEntries(Object.entries(obj).filter(([key]) => !keys.has(key)));

/** Only the keys of `obj` that are in `keys`. */
export const pickKeys = (obj: Json, keys: ReadonlySet<string>): Json =>
  Object.fromEntries(Object.entries(obj).filter(([key]) => keys.has(key)));

/** Does `obj` have any of `keys` as own key? */
export const hasAnyKey = (obj: Json, keys: ReadonlySet<string>): boolean => Object.keys(obj).some((key) => keys.has(key));

const keySet = (...keys: string[]): ReadonlySet<string> => new Set(keys);

/** Item content for provider content: strings and arrays as they are, `null` / missing as `''` plus the marker. */
export const readContent = (
  holder: Json,
  key: string,
): { readonly content: unknown; readonly marker: Json } | undefined => {
  const value = holder[key];
  if (typeof value === 'string' || Array.isArray(value)) return { content: value, marker: {} };
  if (value === null) return { content: '', marker: { [EMPTY_CONTENT_KEY]: 'null' } };
  if (value === undefined) return { content: '', marker: { [EMPTY_CONTENT_KEY]: 'omitted' } };
  return undefined;
};

/** Provider content for item content, honouring the empty-content marker. */
export const writeContent = (content: unknown, marker: unknown): Json => {
  if (content === '' && marker === 'null') return { content: null };
  if (content === '' && marker === 'omitted') return {};
  return content === undefined ? {} : { content };
};

const partsText = (value: unknown): string | undefined => {
  if (typeof value === 'string') return value;
  if (!Array.isArray(value)) return undefined;
  const texts: string[] = [];
  for (const part of value) {
    if (typeof part === 'string') texts.push(part);
    else if (isRecord(part) && typeof part['text'] === 'string') texts.push(part['text']);
  }
  return texts.length > 0 ? texts.join('\n\n') : undefined;
};

/**
 * The text of a reasoning item: `content` (string or parts), else `text`, else `summary`, else the
 * `output` a Tier-2 trim leaves; several parts are joined with a blank line. Undefined when it has none.
 * @example reasoningTextOf({type:'reasoning', id:'r', summary:[{type:'summary_text', text:'plan'}]}) // 'plan'
 */
export const reasoningTextOf = (item: MemoryItem): string | undefined => {
  const output = (item as Json)['output'];
  return reasoningOwnTextOf(item) ?? (typeof output === 'string' ? output : undefined);
};

/** The reasoning text the model wrote (`content`, `text`, `summary`), not a Tier-2 placeholder. */
export const reasoningOwnTextOf = (item: MemoryItem): string | undefined => {
  const record = item as Json;
  return (
    partsText(record['content']) ??
    (typeof record['text'] === 'string' ? record['text'] : undefined) ??
    partsText(record['summary'])
  );
};

/** A reasoning item holding raw reasoning text, as the Responses API writes it. */
export const reasoningItem = (id: string, text: string): MemoryItem => ({
  type: 'reasoning',
  id,
  content: [{ type: 'reasoning_text', text }],
});

// ---------------------------------------------------------------------------------------------
// Chat → items

const TOOL_CALL_KEYS = keySet('id', 'type', 'function');
const FUNCTION_KEYS = keySet('name', 'arguments');
const FUNCTION_CALL_ITEM_KEYS = keySet('type', 'call_id', 'name', 'arguments');
const MESSAGE_ITEM_KEYS = keySet('type', EMPTY_CONTENT_KEY);
const OUTPUT_ITEM_KEYS = keySet('type', 'call_id', 'output', EMPTY_CONTENT_KEY);
const TOOL_MESSAGE_KEYS = keySet('role', 'content', 'tool_call_id');

/** A call that maps one-to-one onto a `function_call` item: nested, `type:'function'`, no clashing keys. */
const isSplittableCall = (call: unknown): call is ChatToolCall & { function: { name: string; arguments: string } } => {
  if (!isRecord(call) || typeof call['id'] !== 'string' || call['type'] !== 'function') return false;
  const fn = call['function'];
  if (!isRecord(fn) || typeof fn['name'] !== 'string' || typeof fn['arguments'] !== 'string') return false;
  if (Object.keys(fn).some((key) => !FUNCTION_KEYS.has(key))) return false;
  return !hasAnyKey(omitKeys(call, TOOL_CALL_KEYS), FUNCTION_CALL_ITEM_KEYS);
};

const functionCallFromChat = (call: ChatToolCall & { function: { name: string; arguments: string } }): MemoryItem => ({
  type: 'function_call',
  call_id: call.id,
  name: call.function.name,
  arguments: call.function.arguments,
  ...omitKeys(call, TOOL_CALL_KEYS),
});

const wrapChatMessage = (message: unknown): MemoryItem => ({ type: CHAT_MESSAGE_ITEM_TYPE, message });

/** Would this next message's first item take over a pending reasoning item on the way back? */
const absorbsReasoning = (next: unknown): boolean =>
  isRecord(next) && next['role'] === 'assistant' && typeof next['reasoning_content'] !== 'string';

const assistantToItems = (
  message: Json,
  index: number,
  previous: MemoryItem | undefined,
  next: unknown,
): MemoryItem[] => {
  const read = readContent(message, 'content');
  if (!read) return [wrapChatMessage(message)];
  const rawCalls = message['tool_calls'];
  const calls = Array.isArray(rawCalls) && rawCalls.length > 0 && rawCalls.every(isSplittableCall) ? rawCalls : undefined;
  const reasoningText = typeof message['reasoning_content'] === 'string' ? message['reasoning_content'] : undefined;
  const consumed = new Set(['role', 'content']);
  if (calls) consumed.add('tool_calls');
  if (reasoningText !== undefined) consumed.add('reasoning_content');
  const extras = omitKeys(message, consumed);
  if (hasAnyKey(extras, MESSAGE_ITEM_KEYS)) return [wrapChatMessage(message)];

  const items: MemoryItem[] = [];
  if (reasoningText !== undefined) items.push(reasoningItem(`reasoning_${index}`, reasoningText));
  // A null-content message with nothing of its own leaves no message item, unless its neighbours
  // would then merge with it on the way back (calls joining the previous turn, reasoning the next).
  const previousIsOpen =
    previous !== undefined && (isFunctionCall(previous) || (isMessage(previous) && previous.role === 'assistant'));
  const carriedByCalls = calls !== undefined && (reasoningText !== undefined || !previousIsOpen);
  const carriedByReasoning = calls === undefined && reasoningText !== undefined && !absorbsReasoning(next);
  const messageOmitted =
    message['content'] === null && Object.keys(extras).length === 0 && (carriedByCalls || carriedByReasoning);
  if (!messageOmitted) items.push({ type: 'message', role: 'assistant', content: read.content, ...read.marker, ...extras });
  for (const call of calls ?? []) items.push(functionCallFromChat(call));
  return items;
};

const chatMessageToItems = (
  message: unknown,
  index: number,
  previous: MemoryItem | undefined,
  next: unknown,
): MemoryItem[] => {
  if (!isRecord(message) || typeof message['role'] !== 'string') return [wrapChatMessage(message)];
  const role = message['role'];
  if (role === 'assistant') return assistantToItems(message, index, previous, next);
  const read = readContent(message, 'content');
  if (!read) return [wrapChatMessage(message)];
  const callId = message['tool_call_id'];
  if (role === 'tool' && typeof callId === 'string') {
    const extras = omitKeys(message, TOOL_MESSAGE_KEYS);
    if (hasAnyKey(extras, OUTPUT_ITEM_KEYS)) return [wrapChatMessage(message)];
    return [{ type: 'function_call_output', call_id: callId, output: read.content, ...read.marker, ...extras }];
  }
  const extras = omitKeys(message, keySet('role', 'content'));
  if (hasAnyKey(extras, MESSAGE_ITEM_KEYS)) return [wrapChatMessage(message)];
  return [{ type: 'message', role, content: read.content, ...read.marker, ...extras }];
};

/**
 * Chat Completions `messages` → memory items (Responses shape). An assistant message becomes
 * `reasoning` (from `reasoning_content`), `message` and one `function_call` per tool call; a `tool`
 * message becomes `function_call_output`; other roles, unknown roles included, become messages.
 * Keys the item shapes do not define ride along on the item, so {@link toChatCompletions} gives the
 * messages back deep-equal.
 * @example
 * fromChatCompletions([
 *   { role: 'user', content: 'list files' },
 *   { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: '{"command":"ls"}' } }] },
 *   { role: 'tool', tool_call_id: 'c1', content: 'a.ts' },
 * ])
 * // [userMessage('list files'), functionCall('c1', 'bash', '{"command":"ls"}'), functionCallOutput('c1', 'a.ts')]
 */
export const fromChatCompletions = (messages: readonly ChatMessage[]): MemoryItem[] => {
  const items: MemoryItem[] = [];
  messages.forEach((message, index) => {
    items.push(...chatMessageToItems(message, index, items.at(-1), messages[index + 1]));
  });
  return items;
};

// ---------------------------------------------------------------------------------------------
// items → Chat

const STRICT_MESSAGE_KEYS: Readonly<Record<string, ReadonlySet<string>>> = {
  system: keySet('name'),
  developer: keySet('name'),
  user: keySet('name'),
  assistant: keySet('name', 'refusal'),
};
const STRICT_PART_TYPES = keySet('text', 'image_url', 'input_audio', 'file', 'refusal');

/** A part in the form the Chat Completions API accepts (Responses and Anthropic parts converted), or undefined. */
const strictChatPart = (part: unknown): unknown => {
  if (!isRecord(part)) return typeof part === 'string' ? { type: 'text', text: part } : undefined;
  const type = part['type'];
  if ((type === 'input_text' || type === 'output_text') && typeof part['text'] === 'string') {
    return { type: 'text', text: part['text'] };
  }
  if (type === 'input_image' && typeof part['image_url'] === 'string') {
    return { type: 'image_url', image_url: { url: part['image_url'], ...pickKeys(part, keySet('detail')) } };
  }
  if (type === 'image' && isRecord(part['source'])) {
    const source = part['source'];
    if (source['type'] === 'url' && typeof source['url'] === 'string') return { type: 'image_url', image_url: { url: source['url'] } };
    if (source['type'] === 'base64' && typeof source['data'] === 'string' && typeof source['media_type'] === 'string') {
      return { type: 'image_url', image_url: { url: `data:${source['media_type']};base64,${source['data']}` } };
    }
  }
  return typeof type === 'string' && STRICT_PART_TYPES.has(type) ? part : undefined;
};

const strictContent = (content: unknown): unknown => {
  if (!Array.isArray(content)) return content;
  return content.map(strictChatPart).filter((part) => part !== undefined);
};

const nestedToolCall = (call: ToolCall): ChatToolCall => ({
  id: call.id,
  type: 'function',
  function: { name: toolCallName(call) ?? '', arguments: toolCallArguments(call) },
});

const toolCallFromItem = (item: MemoryItem & { call_id: string; name: string }, strict: boolean): ChatToolCall => {
  const args = (item as Json)['arguments'];
  const call: ChatToolCall = {
    id: item.call_id,
    type: 'function',
    function: { name: item.name, arguments: typeof args === 'string' ? args : (JSON.stringify(args ?? {}) ?? '{}') },
  };
  // A Responses `id` (fc_...) has no place in a Chat tool call: the call id is `call_id`.
  return strict ? call : { ...call, ...omitKeys(item as Json, keySet('type', 'call_id', 'name', 'arguments', 'id', 'function')) };
};

const messageFromItem = (item: Json, role: string, strict: boolean): Json => {
  const content = writeContent(item['content'], item[EMPTY_CONTENT_KEY]);
  if (!strict) return { role, ...content, ...omitKeys(item, keySet('type', 'role', 'content', EMPTY_CONTENT_KEY)) };
  const allowed = STRICT_MESSAGE_KEYS[role] ?? keySet();
  const message: Json = { role, ...('content' in content ? { content: strictContent(content['content']) } : {}), ...pickKeys(item, allowed) };
  const calls = item['tool_calls'];
  if (role === 'assistant' && Array.isArray(calls) && calls.length > 0) {
    return { ...message, tool_calls: (calls as ToolCall[]).map(nestedToolCall) };
  }
  return message;
};

const toolMessageFromItem = (item: Json & { call_id: string }, strict: boolean): Json => {
  const output = item['output'];
  const content =
    typeof output === 'string' || Array.isArray(output)
      ? writeContent(output, item[EMPTY_CONTENT_KEY])
      : { content: JSON.stringify(output) ?? '' };
  const message: Json = { role: 'tool', tool_call_id: item.call_id, ...content };
  if (strict) return 'content' in message ? { ...message, content: strictContent(message['content']) } : message;
  return { ...message, ...omitKeys(item, keySet('type', 'call_id', 'output', EMPTY_CONTENT_KEY, 'role', 'tool_call_id', 'content')) };
};

const STRICT_ROLES = keySet('system', 'developer', 'user', 'assistant');

/**
 * Memory items → Chat Completions `messages`. Function calls join the assistant message right
 * before them (or a new one with `content: null`); a reasoning item becomes `reasoning_content` on
 * the assistant message that follows it (or on a message of its own when none follows); outputs
 * become `role:'tool'` messages. Items of unknown types have no Chat form and are left out.
 * @example
 * toChatCompletions([userMessage('hi'), assistantMessage('hello')])
 * // [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }]
 * toChatCompletions(items, { strict: true, reasoning: 'omit' }) // what a strict server accepts
 */
export const toChatCompletions = (
  items: readonly MemoryItem[],
  options: ToChatCompletionsOptions = {},
): ChatMessage[] => {
  const strict = options.strict ?? false;
  const keepReasoning = (options.reasoning ?? 'reasoning_content') === 'reasoning_content';
  const out: Json[] = [];
  let open: Json | undefined; // the assistant message later function calls join
  let pending: string | undefined; // reasoning waiting for its assistant message

  const flushReasoning = (): void => {
    if (pending !== undefined) out.push({ role: 'assistant', content: null, reasoning_content: pending });
    pending = undefined;
  };
  const startAssistant = (message: Json): Json => {
    const started = pending !== undefined ? { ...message, reasoning_content: pending } : message;
    pending = undefined;
    out.push(started);
    open = started;
    return started;
  };
  const emit = (message: Json): void => {
    open = undefined;
    flushReasoning();
    out.push(message);
  };

  for (const item of items) {
    if (isFunctionCall(item)) {
      const target = open ?? startAssistant({ role: 'assistant', content: null });
      const existing = Array.isArray(target['tool_calls']) ? (target['tool_calls'] as unknown[]) : [];
      target['tool_calls'] = [...existing, toolCallFromItem(item, strict)];
    } else if (isReasoning(item)) {
      const text = keepReasoning ? reasoningTextOf(item) : undefined;
      if (text === undefined) continue;
      open = undefined;
      flushReasoning();
      pending = text;
    } else if (isFunctionCallOutput(item)) {
      emit(toolMessageFromItem(item, strict));
    } else if (isMessage(item)) {
      const role: string = item.role;
      if (strict && !STRICT_ROLES.has(role)) continue;
      const message = messageFromItem(item, role, strict);
      if (role === 'assistant') {
        open = undefined;
        startAssistant(message);
      } else {
        emit(message);
      }
    } else if (item.type === CHAT_MESSAGE_ITEM_TYPE && !strict && 'message' in item) {
      emit(item['message'] as Json);
    }
  }
  flushReasoning();
  return out as unknown as ChatMessage[];
};
