// Converters between memory items (OpenAI Responses shape) and Anthropic Messages `{system, messages}`.
import { isFunctionCall, isFunctionCallOutput, isMessage, isReasoning, toolCallArguments, toolCallName } from '../items/index.js';
import type { MemoryItem, ToolCall } from '../items/index.js';
import {
  EMPTY_CONTENT_KEY,
  hasAnyKey,
  isRecord,
  omitKeys,
  pickKeys,
  readContent,
  reasoningItem,
  reasoningOwnTextOf,
  reasoningTextOf,
  writeContent,
} from './chat-completions.js';

/** `{type:'text', text}`. */
export interface AnthropicTextBlock {
  readonly type: 'text';
  readonly text: string;
  readonly [key: string]: unknown;
}

/** `{type:'tool_use', id, name, input}`: a call, in an assistant turn. */
export interface AnthropicToolUseBlock {
  readonly type: 'tool_use';
  readonly id: string;
  readonly name: string;
  readonly input: Readonly<Record<string, unknown>>;
  readonly [key: string]: unknown;
}

/** `{type:'tool_result', tool_use_id, content?, is_error?}`: an output, in a user turn. */
export interface AnthropicToolResultBlock {
  readonly type: 'tool_result';
  readonly tool_use_id: string;
  readonly content?: string | readonly AnthropicContentBlock[];
  readonly is_error?: boolean;
  readonly [key: string]: unknown;
}

/** `{type:'thinking', thinking, signature}`: extended thinking; the signature must be sent back as received. */
export interface AnthropicThinkingBlock {
  readonly type: 'thinking';
  readonly thinking: string;
  readonly signature?: string;
  readonly [key: string]: unknown;
}

/** `{type:'redacted_thinking', data}`: encrypted thinking. */
export interface AnthropicRedactedThinkingBlock {
  readonly type: 'redacted_thinking';
  readonly data: string;
  readonly [key: string]: unknown;
}

/** Any content block; the ones above are those the converters map, others (images, documents, ...) pass as they are. */
export interface AnthropicContentBlock {
  readonly type: string;
  readonly [key: string]: unknown;
}

/** A turn. The API knows `user` and `assistant`; other roles are kept by the lossless mode only. */
export interface AnthropicMessage {
  readonly role: 'user' | 'assistant' | (string & {});
  readonly content: string | readonly AnthropicContentBlock[];
  readonly [key: string]: unknown;
}

/** The system prompt, apart from the turns. */
export type AnthropicSystem = string | readonly AnthropicTextBlock[];

/** What `messages.create` takes besides the model: the system prompt and the turns. */
export interface AnthropicConversation {
  readonly system?: AnthropicSystem | undefined;
  readonly messages: readonly AnthropicMessage[];
}

/** Options of {@link toAnthropicMessages}. */
export interface ToAnthropicMessagesOptions {
  /** `'thinking'` (default): reasoning items become `thinking` / `redacted_thinking` blocks. `'omit'`: left out. */
  readonly reasoning?: 'thinking' | 'omit';
  /**
   * `false` (default): lossless; unknown roles, wrapped turns and keys the API does not define are kept.
   * `true`: only what the Messages API accepts: user/assistant turns, standard keys, no empty text blocks,
   * no thinking without a signature, Responses/Chat text and image parts converted to Anthropic blocks, and
   * a first turn from the user: when the items start with an assistant or tool item, a
   * {@link ANTHROPIC_FIRST_TURN_PLACEHOLDER} user turn comes first.
   */
  readonly strict?: boolean;
}

/**
 * The user turn the strict export puts first when a conversation would start with an assistant turn (the
 * Messages API rejects that: "first message must use the user role"), as after a projection dropped the
 * opening request.
 */
export const ANTHROPIC_FIRST_TURN_PLACEHOLDER = '(The earlier conversation is not shown. Continue from here.)';

/** The item type that keeps, verbatim, a turn no item shape can hold (no role, invalid content, clashing keys). */
export const ANTHROPIC_MESSAGE_ITEM_TYPE = 'anthropic_message';

type Json = Record<string, unknown>;
const keySet = (...keys: string[]): ReadonlySet<string> => new Set(keys);

// ---------------------------------------------------------------------------------------------
// Anthropic → items

const TURN_KEYS = keySet('role', 'content');
const MESSAGE_ITEM_KEYS = keySet('type', EMPTY_CONTENT_KEY, 'tool_calls');
const TOOL_USE_KEYS = keySet('type', 'id', 'name', 'input');
const TOOL_RESULT_KEYS = keySet('type', 'tool_use_id', 'content');
const THINKING_KEYS = keySet('type', 'thinking', 'signature');
const REDACTED_KEYS = keySet('type', 'data');

const onlyKeys = (obj: Json, keys: ReadonlySet<string>): boolean => Object.keys(obj).every((key) => keys.has(key));

const functionCallFromBlock = (block: unknown): MemoryItem | undefined => {
  if (!isRecord(block) || block['type'] !== 'tool_use') return undefined;
  const { id, name, input } = block;
  if (typeof id !== 'string' || typeof name !== 'string' || !isRecord(input)) return undefined;
  const extras = omitKeys(block, TOOL_USE_KEYS);
  if (hasAnyKey(extras, keySet('call_id', 'arguments'))) return undefined;
  return { type: 'function_call', call_id: id, name, arguments: JSON.stringify(input), ...extras };
};

const outputFromBlock = (block: unknown): MemoryItem | undefined => {
  if (!isRecord(block) || block['type'] !== 'tool_result' || typeof block['tool_use_id'] !== 'string') return undefined;
  const read = readContent(block, 'content');
  if (!read || block['content'] === null) return undefined;
  const extras = omitKeys(block, TOOL_RESULT_KEYS);
  if (hasAnyKey(extras, keySet('call_id', 'output', EMPTY_CONTENT_KEY))) return undefined;
  return { type: 'function_call_output', call_id: block['tool_use_id'], output: read.content, ...read.marker, ...extras };
};

const reasoningFromBlock = (block: unknown, id: string): MemoryItem | undefined => {
  if (!isRecord(block)) return undefined;
  if (block['type'] === 'thinking' && onlyKeys(block, THINKING_KEYS) && typeof block['thinking'] === 'string') {
    const signature = block['signature'];
    if (signature !== undefined && typeof signature !== 'string') return undefined;
    const item = reasoningItem(id, block['thinking']);
    return signature === undefined ? item : { ...item, signature };
  }
  if (block['type'] === 'redacted_thinking' && onlyKeys(block, REDACTED_KEYS) && typeof block['data'] === 'string') {
    return { type: 'reasoning', id, encrypted_content: block['data'] };
  }
  return undefined;
};

const wrapTurn = (message: unknown): MemoryItem => ({ type: ANTHROPIC_MESSAGE_ITEM_TYPE, message });

const turnToItems = (message: unknown, index: number): MemoryItem[] => {
  const role = isRecord(message) ? message['role'] : undefined;
  // A system turn inside `messages` is not Anthropic's; kept verbatim so it is not hoisted into `system`.
  if (!isRecord(message) || typeof role !== 'string' || role === 'system' || role === 'developer') return [wrapTurn(message)];
  const content = message['content'];
  const extras = omitKeys(message, TURN_KEYS);
  if (hasAnyKey(extras, MESSAGE_ITEM_KEYS)) return [wrapTurn(message)];
  if (typeof content === 'string' || (Array.isArray(content) && role !== 'user' && role !== 'assistant')) {
    return [{ type: 'message', role, content, ...extras }];
  }
  if (!Array.isArray(content)) return [wrapTurn(message)];

  const items: MemoryItem[] = [];
  let plain: unknown[] | undefined;
  const flushPlain = (): void => {
    if (plain) items.push({ type: 'message', role, content: plain });
    plain = undefined;
  };
  content.forEach((block: unknown, blockIndex) => {
    const item =
      role === 'user'
        ? outputFromBlock(block)
        : (functionCallFromBlock(block) ?? reasoningFromBlock(block, `reasoning_${index}_${blockIndex}`));
    if (item) {
      flushPlain();
      items.push(item);
    } else {
      (plain ??= []).push(block);
    }
  });
  flushPlain();
  if (items.length === 0) items.push({ type: 'message', role, content: [] });
  if (Object.keys(extras).length > 0) {
    const first = items[0];
    if (first !== undefined && first.type === 'message') items[0] = { ...first, ...extras };
    else items.unshift({ type: 'message', role, content: [], ...extras });
  }
  return items;
};

/**
 * Anthropic `{system?, messages}` → memory items (Responses shape). The system prompt becomes a
 * system message first; `tool_use` blocks become `function_call` items (input as JSON text),
 * `tool_result` blocks `function_call_output` items, `thinking` / `redacted_thinking` blocks
 * `reasoning` items (signature kept), and the other blocks of a turn, in order, messages.
 * @example
 * fromAnthropicMessages({
 *   system: 'be brief',
 *   messages: [
 *     { role: 'user', content: 'list files' },
 *     { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'bash', input: { command: 'ls' } }] },
 *     { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'a.ts' }] },
 *   ],
 * })
 * // [systemMessage('be brief'), userMessage('list files'), functionCall('t1', 'bash', {command:'ls'}), functionCallOutput('t1', 'a.ts')]
 */
export const fromAnthropicMessages = (conversation: AnthropicConversation): MemoryItem[] => {
  const items: MemoryItem[] = [];
  const { system } = conversation;
  if (typeof system === 'string' || Array.isArray(system)) items.push({ type: 'message', role: 'system', content: system });
  conversation.messages.forEach((message, index) => items.push(...turnToItems(message, index)));
  return items;
};

// ---------------------------------------------------------------------------------------------
// items → Anthropic

const STRICT_TOOL_USE_EXTRAS = keySet('cache_control');
const STRICT_TOOL_RESULT_EXTRAS = keySet('is_error', 'cache_control');

const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

const imageBlock = (url: string, extras: Json): Json => {
  const match = DATA_URL.exec(url);
  const source = match ? { type: 'base64', media_type: match[1], data: match[2] } : { type: 'url', url };
  return { type: 'image', source, ...extras };
};

/** A block in the form the Messages API accepts (Responses and Chat parts converted), or undefined. */
const strictBlock = (part: unknown): Json | undefined => {
  if (typeof part === 'string') return part.length > 0 ? { type: 'text', text: part } : undefined;
  if (!isRecord(part)) return undefined;
  const type = part['type'];
  if (type === 'text' || type === 'input_text' || type === 'output_text') {
    const text = part['text'];
    if (typeof text !== 'string' || text.length === 0) return undefined;
    return type === 'text' ? part : { type: 'text', text };
  }
  if (type === 'input_image' && typeof part['image_url'] === 'string') return imageBlock(part['image_url'], {});
  if (type === 'image_url') {
    const image = part['image_url'];
    const url = typeof image === 'string' ? image : isRecord(image) ? image['url'] : undefined;
    return typeof url === 'string' ? imageBlock(url, {}) : undefined;
  }
  return part;
};

const parseInput = (args: string): Json => {
  try {
    const parsed: unknown = JSON.parse(args);
    return isRecord(parsed) ? parsed : {};
  } catch {
    return {};
  }
};

const toolUseFromCall = (call: ToolCall): Json => ({
  type: 'tool_use',
  id: call.id,
  name: toolCallName(call) ?? '',
  input: parseInput(toolCallArguments(call)),
});

/** What one item adds to a turn: its side, its blocks, turn-level keys, and its text when it is a lone string. */
interface Contribution {
  readonly role: string;
  readonly blocks: readonly unknown[];
  readonly extras: Json;
  readonly soleText?: string;
}

const messageContribution = (item: Json, role: string, strict: boolean): Contribution | undefined => {
  const content = item['content'];
  const emptyMarked = content === '' && item[EMPTY_CONTENT_KEY] !== undefined;
  const textBlocks: unknown[] =
    typeof content === 'string' ? (emptyMarked ? [] : [{ type: 'text', text: content }]) : Array.isArray(content) ? content : [];
  const calls = role === 'assistant' && Array.isArray(item['tool_calls']) ? (item['tool_calls'] as ToolCall[]) : [];
  const blocks = [...textBlocks, ...calls.map(toolUseFromCall)];
  const soleText = typeof content === 'string' && !emptyMarked && calls.length === 0 ? content : undefined;
  if (strict) {
    const kept = blocks.map(strictBlock).filter((block) => block !== undefined);
    if (kept.length === 0) return undefined;
    return soleText === undefined ? { role, blocks: kept, extras: {} } : { role, blocks: kept, extras: {}, soleText };
  }
  const extras = omitKeys(item, keySet('type', 'role', 'content', EMPTY_CONTENT_KEY, ...(calls.length > 0 ? ['tool_calls'] : [])));
  return soleText === undefined ? { role, blocks, extras } : { role, blocks, extras, soleText };
};

const toolUseContribution = (item: Json & { call_id: string; name: string }, strict: boolean): Contribution => {
  const args = item['arguments'];
  const block: Json = {
    type: 'tool_use',
    id: item.call_id,
    name: item.name,
    input: typeof args === 'string' ? parseInput(args) : isRecord(args) ? args : {},
  };
  // A Responses `id` (fc_...) has no place in a tool_use block: the block id is `call_id`.
  const extras = omitKeys(item, keySet('type', 'call_id', 'name', 'arguments', 'id', 'input'));
  return { role: 'assistant', blocks: [{ ...block, ...(strict ? pickKeys(extras, STRICT_TOOL_USE_EXTRAS) : extras) }], extras: {} };
};

const toolResultContribution = (item: Json & { call_id: string }, strict: boolean): Contribution => {
  const output = item['output'];
  const content =
    output === '' && item[EMPTY_CONTENT_KEY] !== undefined
      ? {}
      : typeof output === 'string'
        ? { content: output }
        : Array.isArray(output)
          ? { content: strict ? output.map(strictBlock).filter((block) => block !== undefined) : output }
          : { content: JSON.stringify(output) ?? '' };
  const extras = omitKeys(item, keySet('type', 'call_id', 'output', EMPTY_CONTENT_KEY, 'tool_use_id', 'content'));
  const block = { type: 'tool_result', tool_use_id: item.call_id, ...content, ...(strict ? pickKeys(extras, STRICT_TOOL_RESULT_EXTRAS) : extras) };
  return { role: 'user', blocks: [block], extras: {} };
};

const reasoningContribution = (item: MemoryItem, strict: boolean): Contribution | undefined => {
  const text = reasoningTextOf(item);
  // A signature signs the model's own text; a Tier-2 placeholder goes unsigned.
  const signature = reasoningOwnTextOf(item) !== undefined ? (item as Json)['signature'] : undefined;
  if (text !== undefined) {
    if (typeof signature === 'string') return { role: 'assistant', blocks: [{ type: 'thinking', thinking: text, signature }], extras: {} };
    return strict ? undefined : { role: 'assistant', blocks: [{ type: 'thinking', thinking: text }], extras: {} };
  }
  const data = (item as Json)['encrypted_content'];
  return typeof data === 'string' ? { role: 'assistant', blocks: [{ type: 'redacted_thinking', data }], extras: {} } : undefined;
};

interface Turn {
  readonly role: string;
  readonly blocks: unknown[];
  extras: Json;
  contributions: number;
  soleText: string | undefined;
}

const finishTurn = (turn: Turn): Json => ({
  role: turn.role,
  content: turn.contributions === 1 && turn.soleText !== undefined ? turn.soleText : turn.blocks,
  ...turn.extras,
});

/**
 * Memory items → Anthropic `{system, messages}`. System and developer messages, wherever they are,
 * form `system`; function calls become `tool_use` blocks and reasoning `thinking` blocks in
 * assistant turns; outputs become `tool_result` blocks in user turns; consecutive items of the same
 * side share one turn, so roles alternate. Items of unknown types have no Anthropic form and are left out.
 * @example
 * const { system, messages } = toAnthropicMessages([systemMessage('be brief'), userMessage('hi')])
 * // system: 'be brief', messages: [{ role: 'user', content: 'hi' }]
 * toAnthropicMessages(items, { strict: true }) // what the Messages API accepts
 */
export const toAnthropicMessages = (
  items: readonly MemoryItem[],
  options: ToAnthropicMessagesOptions = {},
): { system?: AnthropicSystem; messages: AnthropicMessage[] } => {
  const strict = options.strict ?? false;
  const keepReasoning = (options.reasoning ?? 'thinking') === 'thinking';
  const systemParts: unknown[] = [];
  const messages: unknown[] = [];
  let turn: Turn | undefined;

  const close = (): void => {
    if (turn) messages.push(finishTurn(turn));
    turn = undefined;
  };
  const add = (contribution: Contribution | undefined): void => {
    if (!contribution) return;
    if (!turn || turn.role !== contribution.role) {
      close();
      turn = { role: contribution.role, blocks: [], extras: {}, contributions: 0, soleText: undefined };
    }
    turn.blocks.push(...contribution.blocks);
    turn.extras = { ...turn.extras, ...contribution.extras };
    turn.contributions += 1;
    turn.soleText = contribution.soleText;
  };
  const addVerbatim = (message: unknown): void => {
    close();
    messages.push(message);
  };

  for (const item of items) {
    if (isFunctionCall(item)) add(toolUseContribution(item, strict));
    else if (isFunctionCallOutput(item)) add(toolResultContribution(item, strict));
    else if (isReasoning(item)) add(keepReasoning ? reasoningContribution(item, strict) : undefined);
    else if (isMessage(item)) {
      const role: string = item.role;
      if (role === 'system' || role === 'developer') systemParts.push(item.content);
      else if (role === 'user' || role === 'assistant') add(messageContribution(item, role, strict));
      else if (!strict) {
        const content = writeContent(item.content, item[EMPTY_CONTENT_KEY]);
        addVerbatim({ role, ...content, ...omitKeys(item, keySet('type', 'role', 'content', EMPTY_CONTENT_KEY)) });
      }
    } else if (item.type === ANTHROPIC_MESSAGE_ITEM_TYPE && !strict && 'message' in item) {
      addVerbatim(item['message']);
    }
  }
  close();
  const first = messages[0] as { role?: unknown } | undefined;
  if (strict && first !== undefined && first.role !== 'user') messages.unshift({ role: 'user', content: ANTHROPIC_FIRST_TURN_PLACEHOLDER });

  const system = systemOf(systemParts, strict);
  const result = { messages: messages as unknown as AnthropicMessage[] };
  return system === undefined ? result : { system, ...result };
};

const systemOf = (parts: readonly unknown[], strict: boolean): AnthropicSystem | undefined => {
  const [only] = parts;
  if (parts.length === 1 && typeof only === 'string') return strict && only.length === 0 ? undefined : only;
  const blocks = parts.flatMap((content) =>
    typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? (content as unknown[]) : [],
  );
  const kept = strict ? blocks.map(strictBlock).filter((block) => block !== undefined) : blocks;
  if (parts.length === 0 || (strict && kept.length === 0)) return undefined;
  return kept as unknown as AnthropicTextBlock[];
};
