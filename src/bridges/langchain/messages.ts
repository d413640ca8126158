// Converters between LangChain.js `BaseMessage` instances and memory items, through LangChain's own stored-message form.
import { isRecord } from '../../base/index.js';
import {
  AIMessageChunk,
  ChatMessageChunk,
  FunctionMessageChunk,
  HumanMessageChunk,
  isBaseMessage,
  isBaseMessageChunk,
  mapChatMessagesToStoredMessages,
  mapStoredMessagesToChatMessages,
  SystemMessageChunk,
  ToolMessageChunk,
} from '@langchain/core/messages';
import type { BaseMessage, StoredMessage } from '@langchain/core/messages';
import { isFunctionCall, isFunctionCallOutput, isMessage, toolCallArguments, toolCallName, toolNamesByCallId } from '../../items/index.js';
import type { MemoryItem, ToolCall } from '../../items/index.js';
import { checkMemoryItems, inputChecks, kindOf, sameText, type InputChecks } from '../shared/input.js';

type Json = Record<string, unknown>;

/** On an item made from a LangChain message: the message's type and its fields besides content and tool calls. */
export const LANGCHAIN_KEY = 'langchain';
/** The item type that keeps, as LangChain stores it, a message no item shape holds (function, remove, chat with a custom role). */
export const LANGCHAIN_MESSAGE_ITEM_TYPE = 'langchain_message';


const omit = (obj: Json, keys: readonly string[]): Json => {
  const out: Json = {};
  for (const [key, value] of Object.entries(obj)) if (!keys.includes(key) && value !== undefined) out[key] = value;
  return out;
};

const ROLE_OF: Readonly<Record<string, 'user' | 'system' | 'assistant'>> = { human: 'user', system: 'system', ai: 'assistant' };

const contentText = (content: unknown): string => {
  if (typeof content === 'string') return content;
  if (Array.isArray(content) && content.every((p) => isRecord(p) && p['type'] === 'text' && typeof p['text'] === 'string')) {
    return content.map((p) => (p as { text: string }).text).join('');
  }
  return JSON.stringify(content) ?? '';
};

const toItem = (stored: StoredMessage): MemoryItem => {
  const data = stored.data as unknown as Json;
  const role = ROLE_OF[stored.type];
  if (role) {
    const calls = stored.type === 'ai' && Array.isArray(data['tool_calls']) ? (data['tool_calls'] as Json[]) : [];
    const toolCalls: ToolCall[] = calls.map((call) => ({
      id: String(call['id'] ?? ''),
      type: 'function',
      name: String(call['name'] ?? ''),
      arguments: JSON.stringify(call['args'] ?? {}),
      ...(call['type'] !== undefined ? { lc_type: call['type'] } : {}),
    }));
    const extras = omit(data, ['content', 'tool_calls']);
    return {
      type: 'message',
      role,
      content: data['content'] as string,
      ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
      [LANGCHAIN_KEY]: { type: stored.type, ...(stored.type === 'ai' && calls.length === 0 && Array.isArray(data['tool_calls']) ? { tool_calls: [] } : {}), ...extras },
    };
  }
  if (stored.type === 'tool' && typeof data['tool_call_id'] === 'string') {
    const content = data['content'];
    const output = contentText(content);
    return {
      type: 'function_call_output',
      call_id: data['tool_call_id'],
      output,
      ...(typeof data['name'] === 'string' ? { name: data['name'] } : {}),
      [LANGCHAIN_KEY]: { type: 'tool', ...(typeof content === 'string' ? {} : { content }), ...omit(data, ['content', 'tool_call_id', 'name']) },
    };
  }
  return { type: LANGCHAIN_MESSAGE_ITEM_TYPE, message: stored };
};

/**
 * LangChain `BaseMessage[]` → memory items, one item per message: human, system and AI messages become
 * message items (an AI message's `tool_calls` as Chat-style `tool_calls`, arguments as JSON text), a
 * `ToolMessage` a `function_call_output` joined by `tool_call_id`; LangChain's other fields (ids, metadata,
 * `additional_kwargs`, usage) are kept under `langchain`, so {@link toBaseMessages} rebuilds the same messages.
 * @example
 * fromBaseMessages([new HumanMessage('hi'), new AIMessage('hello')])
 * // [{type:'message', role:'user', content:'hi', langchain:{type:'human', ...}}, {type:'message', role:'assistant', content:'hello', langchain:{type:'ai', ...}}]
 */
export const fromBaseMessages = (messages: readonly BaseMessage[]): MemoryItem[] => {
  const checked = checkBaseMessages(inputChecks('langchain', 'fromBaseMessages'), messages);
  return mapChatMessagesToStoredMessages([...checked]).map((stored, index) => {
    const item = toItem(stored);
    if (!isBaseMessageChunk(checked[index])) return item;
    // A chunk class (AIMessageChunk, ...) is marked so toBaseMessages gives a chunk back (LangChain's stored form has no chunks).
    return { ...item, [LANGCHAIN_KEY]: { ...(isRecord(item[LANGCHAIN_KEY]) ? (item[LANGCHAIN_KEY] as Json) : {}), [CHUNK_KEY]: true } };
  });
};

/** Under {@link LANGCHAIN_KEY}: the message was of a chunk class. */
const CHUNK_KEY = 'chunk';

const CHUNK_CLASSES: Readonly<Record<string, new (fields: Json) => BaseMessage>> = {
  human: HumanMessageChunk as never,
  ai: AIMessageChunk as never,
  system: SystemMessageChunk as never,
  tool: ToolMessageChunk as never,
  function: FunctionMessageChunk as never,
  generic: ChatMessageChunk as never,
};

/**
 * The message as its chunk class, every own field kept (LangChain's stored form rebuilds plain classes only), and an AI
 * chunk's `tool_call_chunks` from its stored data (the plain AIMessage has no such field).
 */
const asChunk = (message: BaseMessage, stored: StoredMessage): BaseMessage => {
  const Class = CHUNK_CLASSES[message.getType()];
  if (!Class) return message;
  const fields: Json = Object.fromEntries(Object.entries(message).filter(([key]) => key !== 'type' && !key.startsWith('lc_')));
  const chunks = (stored.data as unknown as Json)['tool_call_chunks'];
  // Only a non-empty list: @langchain/core 1.0 rebuilds tool_calls from any tool_call_chunks given, even [] (losing them).
  return new Class(message.getType() === 'ai' && Array.isArray(chunks) && chunks.length > 0 ? { ...fields, tool_call_chunks: chunks } : fields);
};

/** Checks that every element is a LangChain `BaseMessage` (a class instance with `getType` and `toDict`), throwing a `BridgeInputError` that names it. */
export const checkBaseMessages = (checks: InputChecks, messages: unknown): BaseMessage[] =>
  checks.list(messages, 'BaseMessage instances').map((message, index) => {
    if (!isBaseMessage(message)) checks.fail(index, '', `must be a LangChain BaseMessage (HumanMessage, AIMessage, ...), got ${kindOf(message)}`);
    return message as BaseMessage;
  });

const TYPE_OF: Readonly<Record<string, string>> = { user: 'human', system: 'system', developer: 'system', assistant: 'ai' };

const lcToolCall = (call: ToolCall): Json => {
  let args: unknown = {};
  try {
    args = JSON.parse(toolCallArguments(call) || '{}');
  } catch {
    args = { input: toolCallArguments(call) };
  }
  return { id: call.id, name: toolCallName(call) ?? '', args, ...(call['lc_type'] !== undefined ? { type: call['lc_type'] } : {}) };
};

/**
 * Memory items → LangChain `BaseMessage[]`, the inverse of {@link fromBaseMessages}. Items from other
 * sources convert too: Responses `function_call` items join the AI message before them (or a new one), a
 * tool result rewritten by a projector (Tier-1) goes as its text with the name of its call. Reasoning and
 * items of other types have no LangChain message and are left out.
 * @example
 * const messages = toBaseMessages(projection.items); // for model.invoke(messages)
 */
export const toBaseMessages = (items: readonly MemoryItem[]): BaseMessage[] => {
  checkMemoryItems(inputChecks('langchain', 'toBaseMessages'), items);
  const names = toolNamesByCallId(items);
  const stored: StoredMessage[] = [];
  const chunks: boolean[] = [];
  let openAi: Json | undefined; // the data of the AI message function_call items join
  for (const item of items) {
    const record = item as Json;
    const lc = isRecord(record[LANGCHAIN_KEY]) ? (record[LANGCHAIN_KEY] as Json) : {};
    if (isMessage(item)) {
      const type = typeof lc['type'] === 'string' && ROLE_OF[lc['type']] === (item.role === 'developer' ? 'system' : item.role) ? lc['type'] : TYPE_OF[item.role];
      if (!type) {
        openAi = undefined;
        continue;
      }
      const data: Json = { ...omit(lc, ['type', CHUNK_KEY]), content: item.content };
      if (type === 'ai') {
        const calls = (item.tool_calls ?? []).map(lcToolCall);
        if (calls.length > 0 || Array.isArray(lc['tool_calls'])) data['tool_calls'] = calls;
        openAi = data;
      } else openAi = undefined;
      stored.push({ type, data } as unknown as StoredMessage);
      chunks.push(lc[CHUNK_KEY] === true);
    } else if (isFunctionCall(item)) {
      const call = lcToolCall({ id: item.call_id, name: item.name, arguments: item.arguments });
      if (openAi) openAi['tool_calls'] = [...((openAi['tool_calls'] as Json[] | undefined) ?? []), call];
      else {
        openAi = { content: '', tool_calls: [call] };
        stored.push({ type: 'ai', data: openAi } as unknown as StoredMessage);
        chunks.push(false);
      }
    } else if (isFunctionCallOutput(item)) {
      openAi = undefined;
      const kept = lc['content'];
      const output = typeof item.output === 'string' ? item.output : (JSON.stringify(item.output) ?? '');
      const content = kept !== undefined && sameText(contentText(kept), output) ? kept : output;
      // A LangChain ToolMessage without a name stays without; a result from elsewhere (a Tier-1 placeholder) takes its call's name.
      const name = typeof record['name'] === 'string' ? record['name'] : isRecord(record[LANGCHAIN_KEY]) ? undefined : names.get(item.call_id);
      stored.push({
        type: 'tool',
        data: { ...omit(lc, ['type', 'content', CHUNK_KEY]), content, tool_call_id: item.call_id, ...(name !== undefined ? { name } : {}) },
      } as unknown as StoredMessage);
      chunks.push(lc[CHUNK_KEY] === true);
    } else if (item.type === LANGCHAIN_MESSAGE_ITEM_TYPE && isRecord(record['message'])) {
      openAi = undefined;
      stored.push(record['message'] as unknown as StoredMessage);
      chunks.push(lc[CHUNK_KEY] === true);
    }
  }
  return mapStoredMessagesToChatMessages(stored).map((message, i) => (chunks[i] === true ? asChunk(message, stored[i]!) : message));
};
