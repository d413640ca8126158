// Lossless converters between AI SDK `ModelMessage[]` (ai 5 and 6) and memory items (Responses shape).
import { isRecord } from '../../base/index.js';
import type { ModelMessage } from 'ai';
import { isFunctionCall, isFunctionCallOutput, isMessage, isReasoning, toolCallArguments, toolCallName, toolNamesByCallId } from '../../items/index.js';
import type { MemoryItem, ToolCall } from '../../items/index.js';
import { reasoningTextOf } from '../../runtime/index.js';
import { checkMemoryItems, inputChecks, kindOf, sameText, type InputChecks } from '../shared/input.js';

type Json = Record<string, unknown>;

/** On the first item of an assistant or tool message that follows a message of the same side: start a new message there. */
export const AI_SDK_NEW_MESSAGE_KEY = 'ai_sdk_new_message';
/** On the first item of an assistant or tool message: the message's own keys besides `role` and `content` (`providerOptions`, ...). */
export const AI_SDK_MESSAGE_EXTRAS_KEY = 'ai_sdk_message_extras';
/** On a `function_call_output`: the AI SDK `ToolResultOutput` as it was (`json`, `error-text`, `content`, ...). */
export const AI_SDK_OUTPUT_KEY = 'ai_sdk_output';
/** On a `function_call_output` that came from an assistant message (a provider-executed tool): `'assistant'`. */
export const AI_SDK_ROLE_KEY = 'ai_sdk_role';
/**
 * On an image or file part whose data was a `URL` (`'url'`) or bytes (`'bytes'`, stored as base64); with ai 7's tagged
 * file data, `{ type: 'url', url: URL }` (`'tagged-url'`) or `{ type: 'data', data: bytes }` (`'tagged-bytes'`).
 */
export const AI_SDK_DATA_KEY = 'ai_sdk_data';
/** Item types that carry AI SDK parts no Responses item can hold. */
export const AI_SDK_APPROVAL_REQUEST_TYPE = 'ai_sdk_tool_approval_request';
export const AI_SDK_APPROVAL_RESPONSE_TYPE = 'ai_sdk_tool_approval_response';
/**
 * On any object of a message (the message, a part, a tool output): the keys whose value was `undefined`, which JSON (and
 * so the log) cannot hold; {@link toModelMessages} gives them back. (An `undefined` element of an array becomes `null`, as in JSON.)
 */
export const AI_SDK_UNDEFINED_KEY = 'ai_sdk_undefined';

const hasPlainPrototype = (value: unknown): value is Json => {
  if (!isRecord(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
};

/** A copy where every plain object lists its `undefined`-valued keys under {@link AI_SDK_UNDEFINED_KEY} (URLs, bytes and other class instances as they are). */
const markUndefined = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(markUndefined);
  if (!hasPlainPrototype(value)) return value;
  const out: Json = {};
  const missing: string[] = [];
  for (const [key, inner] of Object.entries(value)) {
    if (inner === undefined) missing.push(key);
    else out[key] = markUndefined(inner);
  }
  if (missing.length > 0) out[AI_SDK_UNDEFINED_KEY] = missing;
  return out;
};

/** The inverse of {@link markUndefined}: the listed keys come back with the value `undefined`. */
const restoreUndefined = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(restoreUndefined);
  if (!hasPlainPrototype(value)) return value;
  const out: Json = {};
  for (const [key, inner] of Object.entries(value)) if (key !== AI_SDK_UNDEFINED_KEY) out[key] = restoreUndefined(inner);
  const missing = value[AI_SDK_UNDEFINED_KEY];
  if (Array.isArray(missing)) for (const key of missing) if (typeof key === 'string') out[key] = undefined;
  return out;
};


const omit = (obj: Json, keys: readonly string[]): Json => {
  const out: Json = {};
  for (const [key, value] of Object.entries(obj)) if (!keys.includes(key) && value !== undefined) out[key] = value;
  return out;
};

// ---------------------------------------------------------------------------------------------
// Binary data and URLs: items are JSON, so a URL becomes its text and bytes become base64, with a marker.

const isBytes = (value: unknown): value is Uint8Array | ArrayBuffer => value instanceof Uint8Array || value instanceof ArrayBuffer;

const base64Of = (value: Uint8Array | ArrayBuffer): string => {
  const bytes = value instanceof ArrayBuffer ? new Uint8Array(value) : value;
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
};

const dataToJson = (part: Json, key: string): Json => {
  const value = part[key];
  if (value instanceof URL) return { ...part, [key]: value.href, [AI_SDK_DATA_KEY]: 'url' };
  if (isBytes(value)) return { ...part, [key]: base64Of(value), [AI_SDK_DATA_KEY]: 'bytes' };
  // ai 7's tagged file data
  if (hasPlainPrototype(value) && value['type'] === 'url' && value['url'] instanceof URL) return { ...part, [key]: { ...value, url: value['url'].href }, [AI_SDK_DATA_KEY]: 'tagged-url' };
  if (hasPlainPrototype(value) && value['type'] === 'data' && isBytes(value['data'])) return { ...part, [key]: { ...value, data: base64Of(value['data']) }, [AI_SDK_DATA_KEY]: 'tagged-bytes' };
  return part;
};

const dataFromJson = (part: Json, key: string): Json => {
  const marker = part[AI_SDK_DATA_KEY];
  const value = part[key];
  if (marker === 'tagged-url' && hasPlainPrototype(value) && typeof value['url'] === 'string') return { ...omit(part, [AI_SDK_DATA_KEY]), [key]: { ...value, url: new URL(value['url']) } };
  if (marker === 'tagged-bytes' && hasPlainPrototype(value) && typeof value['data'] === 'string') {
    return { ...omit(part, [AI_SDK_DATA_KEY]), [key]: { ...value, data: new Uint8Array(Buffer.from(value['data'], 'base64')) } };
  }
  if (marker === undefined || typeof value !== 'string') return part;
  const rest = omit(part, [AI_SDK_DATA_KEY]);
  if (marker === 'url') return { ...rest, [key]: new URL(value) };
  if (marker === 'bytes') return { ...rest, [key]: new Uint8Array(Buffer.from(value, 'base64')) };
  return part;
};

const partToJson = (part: unknown): unknown => {
  if (!isRecord(part)) return part;
  if (part['type'] === 'image') return dataToJson(part, 'image');
  if (part['type'] === 'file') return dataToJson(part, 'data');
  return part;
};

// ---------------------------------------------------------------------------------------------
// Tool outputs

/** The text a model sees for an AI SDK tool output: text as it is, anything else as JSON. */
export const toolOutputText = (output: unknown): string => {
  if (!isRecord(output)) return JSON.stringify(output) ?? '';
  const { type, value } = output;
  if ((type === 'text' || type === 'error-text') && typeof value === 'string') return value;
  if (type === 'execution-denied') return typeof output['reason'] === 'string' ? output['reason'] : 'Tool execution denied.';
  return JSON.stringify(value) ?? '';
};

/** Is this AI SDK tool output an error (`error-text`, `error-json`, `execution-denied`)? */
export const isErrorToolOutput = (output: unknown): boolean =>
  isRecord(output) && (output['type'] === 'error-text' || output['type'] === 'error-json' || output['type'] === 'execution-denied');

const isPlainTextOutput = (output: unknown): boolean =>
  isRecord(output) && output['type'] === 'text' && typeof output['value'] === 'string' && Object.keys(output).length === 2;

// ---------------------------------------------------------------------------------------------
// ModelMessage → items

/** Options of {@link fromModelMessages}. */
export interface FromModelMessagesOptions {
  /** Prefix of the ids given to reasoning parts (`<prefix>_<message>_<part>`); default `reasoning`. Use a response id to keep them unique. */
  readonly reasoningIdPrefix?: string;
  /**
   * `'keep'` (default): a key whose value is `undefined` (`providerExecuted`, `filename`, an approval's `reason`, ...) is
   * listed under `ai_sdk_undefined`, so {@link toModelMessages} gives it back even after the items went through the log
   * as JSON. `'drop'`: left out, as JSON would (the recorder and `aiSdkModelClient` record this way: an `undefined` key
   * tells the model nothing).
   */
  readonly undefinedKeys?: 'keep' | 'drop';
}

type Side = 'assistant' | 'tool';

const toolCallItem = (part: Json): MemoryItem => ({
  type: 'function_call',
  call_id: part['toolCallId'] as string,
  name: part['toolName'] as string,
  arguments: JSON.stringify(part['input']) ?? '',
  ...omit(part, ['type', 'toolCallId', 'toolName', 'input']),
});

const toolResultItem = (part: Json, side: Side): MemoryItem => {
  const output = part['output'];
  return {
    type: 'function_call_output',
    call_id: part['toolCallId'] as string,
    output: toolOutputText(output),
    name: part['toolName'] as string,
    ...(isPlainTextOutput(output) ? {} : { [AI_SDK_OUTPUT_KEY]: output }),
    ...(side === 'assistant' ? { [AI_SDK_ROLE_KEY]: 'assistant' } : {}),
    ...omit(part, ['type', 'toolCallId', 'toolName', 'output']),
  };
};

const sideItems = (message: Json, side: Side, messageIndex: number, idPrefix: string): MemoryItem[] => {
  const content = message['content'];
  if (!Array.isArray(content)) return [{ type: 'message', role: side, content: content as string }];
  const items: MemoryItem[] = [];
  let plain: unknown[] | undefined;
  const flush = (): void => {
    if (plain) items.push({ type: 'message', role: side, content: plain as MemoryItem[] });
    plain = undefined;
  };
  content.forEach((raw: unknown, partIndex) => {
    const part = isRecord(raw) ? raw : undefined;
    const type = part?.['type'];
    let item: MemoryItem | undefined;
    if (part && type === 'tool-call') item = toolCallItem(part);
    else if (part && type === 'tool-result') item = toolResultItem(part, side);
    else if (part && type === 'reasoning' && side === 'assistant') {
      item = { type: 'reasoning', id: `${idPrefix}_${messageIndex}_${partIndex}`, ...omit(part, ['type', 'id']) };
    } else if (part && type === 'tool-approval-request') item = { ...part, type: AI_SDK_APPROVAL_REQUEST_TYPE };
    else if (part && type === 'tool-approval-response') item = { ...part, type: AI_SDK_APPROVAL_RESPONSE_TYPE };
    if (item) {
      flush();
      items.push(item);
    } else {
      (plain ??= []).push(partToJson(raw));
    }
  });
  flush();
  if (items.length === 0) items.push({ type: 'message', role: side, content: [] });
  return items;
};

/**
 * AI SDK `ModelMessage[]` → memory items, losing nothing: `toModelMessages` gives the same messages back.
 * System and user messages become one message item each (image and file data as references: a `URL` as
 * its text, bytes as base64, marked so they come back as they were). An assistant or tool message is split
 * into items in order: text and file parts form message items, `tool-call` parts `function_call` items
 * (input as JSON text), `tool-result` parts `function_call_output` items (output as text, the original
 * output object kept beside it), `reasoning` parts `reasoning` items; `providerOptions` stay where they were.
 * @example
 * fromModelMessages([
 *   { role: 'user', content: 'weather in Paris?' },
 *   { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'weather', input: { city: 'Paris' } }] },
 *   { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'weather', output: { type: 'text', value: 'sunny' } }] },
 * ])
 * // [userMessage('weather in Paris?'), functionCall('c1', 'weather', {city:'Paris'}), {...functionCallOutput('c1', 'sunny'), name: 'weather'}]
 */
export const fromModelMessages = (messages: readonly ModelMessage[], options: FromModelMessagesOptions = {}): MemoryItem[] => {
  const checked = checkModelMessages(inputChecks('ai-sdk', 'fromModelMessages'), messages);
  return modelMessagesToItems(options.undefinedKeys === 'drop' ? checked : checked.map(markUndefined) as Json[], options);
};

const ROLES: ReadonlySet<unknown> = new Set(['system', 'user', 'assistant', 'tool']);
/** The string keys each part type must have: without them the part cannot be paired or converted back. */
const PART_KEYS: Readonly<Record<string, readonly string[]>> = {
  'tool-call': ['toolCallId', 'toolName'],
  'tool-result': ['toolCallId', 'toolName'],
  'tool-approval-request': ['approvalId', 'toolCallId'],
  'tool-approval-response': ['approvalId'],
};

/**
 * Checks messages as the AI SDK's `ModelMessage` has them (objects with a known role; content a string or an array of
 * parts with a `type`; tool parts with their ids), throwing a `BridgeInputError` that names the path.
 */
export const checkModelMessages = (checks: InputChecks, messages: unknown): Json[] =>
  checks.list(messages, 'ModelMessage objects').map((raw, index) => {
    const message = checks.record(raw, index, '');
    if (!ROLES.has(message['role'])) checks.fail(index, '.role', `must be 'system', 'user', 'assistant' or 'tool', got ${JSON.stringify(message['role']) ?? 'undefined'}`);
    const content = message['content'];
    if (typeof content !== 'string' && !Array.isArray(content)) checks.fail(index, '.content', `must be a string or an array of parts, got ${kindOf(content)}`);
    if (Array.isArray(content)) {
      content.forEach((rawPart: unknown, p) => {
        const part = checks.record(rawPart, index, `.content[${p}]`);
        const type = checks.string(part, 'type', index, `.content[${p}]`);
        for (const key of PART_KEYS[type] ?? []) checks.string(part, key, index, `.content[${p}]`);
      });
    }
    return message;
  });

/** Checked (and marked) messages → items; see {@link fromModelMessages}. */
const modelMessagesToItems = (messages: readonly Json[], options: FromModelMessagesOptions): MemoryItem[] => {
  const idPrefix = options.reasoningIdPrefix ?? 'reasoning';
  const items: MemoryItem[] = [];
  let previousSide: Side | undefined;
  messages.forEach((message, index) => {
    const role = message['role'];
    if (role === 'assistant' || role === 'tool') {
      const converted = sideItems(message, role, index, idPrefix);
      const extras = omit(message, ['role', 'content']);
      const first = converted[0]!;
      converted[0] = {
        ...first,
        ...(previousSide === role ? { [AI_SDK_NEW_MESSAGE_KEY]: true } : {}),
        ...(Object.keys(extras).length > 0 ? { [AI_SDK_MESSAGE_EXTRAS_KEY]: extras } : {}),
      };
      items.push(...converted);
      previousSide = role;
      return;
    }
    const content = message['content'];
    items.push({
      type: 'message',
      role: role as 'system' | 'user',
      content: (Array.isArray(content) ? content.map(partToJson) : content) as MemoryItem[],
      ...omit(message, ['role', 'content', 'type']),
    });
    previousSide = undefined;
  });
  return items;
};

// ---------------------------------------------------------------------------------------------
// items → ModelMessage

const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

/** A content part in the AI SDK's form: AI SDK parts as they were, Responses/Chat/Anthropic text and image parts converted. */
const partFromJson = (raw: unknown): unknown => {
  if (typeof raw === 'string') return { type: 'text', text: raw };
  if (!isRecord(raw)) return raw;
  const type = raw['type'];
  if (type === 'image') {
    const source = raw['source'];
    if (isRecord(source) && raw['image'] === undefined) {
      // Anthropic image block
      if (source['type'] === 'url' && typeof source['url'] === 'string') return { type: 'image', image: new URL(source['url']) };
      if (source['type'] === 'base64' && typeof source['data'] === 'string') {
        return { type: 'image', image: source['data'], ...(typeof source['media_type'] === 'string' ? { mediaType: source['media_type'] } : {}) };
      }
    }
    return dataFromJson(raw, 'image');
  }
  if (type === 'file') return dataFromJson(raw, 'data');
  if (type === 'input_text' || type === 'output_text') return { type: 'text', text: typeof raw['text'] === 'string' ? raw['text'] : '' };
  const imageUrl = type === 'input_image' ? raw['image_url'] : type === 'image_url' ? (isRecord(raw['image_url']) ? raw['image_url']['url'] : raw['image_url']) : undefined;
  if (typeof imageUrl === 'string') {
    const match = DATA_URL.exec(imageUrl);
    return match ? { type: 'image', image: match[2], mediaType: match[1] } : { type: 'image', image: new URL(imageUrl) };
  }
  return raw;
};

const parseInput = (args: string): unknown => {
  if (args.trim() === '') return {};
  try {
    return JSON.parse(args) as unknown;
  } catch {
    return args;
  }
};

const toolCallPart = (call: ToolCall): Json => ({
  type: 'tool-call',
  toolCallId: call.id,
  toolName: toolCallName(call) ?? '',
  input: parseInput(toolCallArguments(call)),
});

const ITEM_MARKERS = [AI_SDK_NEW_MESSAGE_KEY, AI_SDK_MESSAGE_EXTRAS_KEY];

const systemText = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content.map((part: unknown) => (isRecord(part) && typeof part['text'] === 'string' ? part['text'] : typeof part === 'string' ? part : '')).join('\n')
      : '';

/**
 * Memory items → AI SDK `ModelMessage[]`, the inverse of {@link fromModelMessages}. Items from other
 * sources convert too: Chat-style `tool_calls` become `tool-call` parts, Responses text and image parts
 * AI SDK parts, reasoning of any provider a `reasoning` part, developer messages system messages.
 * Consecutive assistant-side items (messages, calls, reasoning) share one assistant message and
 * consecutive outputs one tool message. A tool result rewritten by a projector (Tier-1 clearing) goes as
 * text; the tool name comes from the item or from its call. Items of other types have no AI SDK form and
 * are left out.
 * @example
 * const messages = toModelMessages(projection.items); // for generateText({ model, messages })
 */
export const toModelMessages = (items: readonly MemoryItem[]): ModelMessage[] => {
  checkMemoryItems(inputChecks('ai-sdk', 'toModelMessages'), items);
  const names = toolNamesByCallId(items);
  const messages: Json[] = [];
  let open: { role: Side; content: unknown[]; extras: Json } | undefined;
  const close = (): void => {
    if (open) messages.push({ role: open.role, content: open.content, ...open.extras });
    open = undefined;
  };
  const addPart = (side: Side, item: Json, part: unknown): void => {
    if (!open || open.role !== side || item[AI_SDK_NEW_MESSAGE_KEY] === true) {
      close();
      open = { role: side, content: [], extras: {} };
    }
    const extras = item[AI_SDK_MESSAGE_EXTRAS_KEY];
    if (isRecord(extras) && open.content.length === 0) open.extras = extras;
    open.content.push(part);
  };

  for (const item of items) {
    const record = item as Json;
    if (isMessage(item)) {
      const role: string = item.role;
      const rest = omit(record, ['type', 'role', 'content', 'tool_calls', ...ITEM_MARKERS]);
      if (role === 'system' || role === 'developer') {
        close();
        messages.push({ role: 'system', content: systemText(item.content), ...(role === 'system' ? rest : {}) });
      } else if (role === 'user') {
        close();
        messages.push({ role: 'user', content: typeof item.content === 'string' ? item.content : item.content.map(partFromJson), ...rest });
      } else if (role === 'assistant') {
        const calls = Array.isArray(item.tool_calls) ? item.tool_calls.map(toolCallPart) : [];
        if (typeof item.content === 'string' && calls.length === 0) {
          close();
          const extras = record[AI_SDK_MESSAGE_EXTRAS_KEY];
          messages.push({ role: 'assistant', content: item.content, ...(isRecord(extras) ? extras : {}) });
          continue;
        }
        const parts = typeof item.content === 'string' ? (item.content.length > 0 ? [{ type: 'text', text: item.content }] : []) : item.content.map(partFromJson);
        if (parts.length === 0 && calls.length === 0) {
          // an empty assistant message: kept as one, so a round trip gives it back
          close();
          const extras = record[AI_SDK_MESSAGE_EXTRAS_KEY];
          open = { role: 'assistant', content: [], extras: isRecord(extras) ? extras : {} };
          continue;
        }
        [...parts, ...calls].forEach((part, i) => addPart('assistant', i === 0 ? record : {}, part));
      }
      else if (role === 'tool' && Array.isArray(item.content)) {
        // parts of a tool message that are neither results nor approvals, or an empty tool message
        if (item.content.length === 0) {
          close();
          const extras = record[AI_SDK_MESSAGE_EXTRAS_KEY];
          open = { role: 'tool', content: [], extras: isRecord(extras) ? extras : {} };
        } else item.content.forEach((part, i) => addPart('tool', i === 0 ? record : {}, partFromJson(part)));
      }
      // a Chat-style tool message (string content) has no AI SDK form: left out
    } else if (isFunctionCall(item)) {
      addPart('assistant', record, {
        type: 'tool-call',
        toolCallId: item.call_id,
        toolName: item.name,
        input: parseInput(item.arguments),
        ...omit(record, ['type', 'call_id', 'name', 'arguments', 'id', 'status', ...ITEM_MARKERS]),
      });
    } else if (isFunctionCallOutput(item)) {
      const kept = record[AI_SDK_OUTPUT_KEY];
      const outputText = typeof item.output === 'string' ? item.output : (JSON.stringify(item.output) ?? '');
      const output = kept !== undefined && sameText(toolOutputText(kept), outputText) ? kept : { type: 'text', value: outputText };
      const name = typeof record['name'] === 'string' ? record['name'] : (names.get(item.call_id) ?? '');
      const side: Side = record[AI_SDK_ROLE_KEY] === 'assistant' ? 'assistant' : 'tool';
      addPart(side, record, {
        type: 'tool-result',
        toolCallId: item.call_id,
        toolName: name,
        output,
        ...omit(record, ['type', 'call_id', 'name', 'output', 'id', 'status', AI_SDK_OUTPUT_KEY, AI_SDK_ROLE_KEY, ...ITEM_MARKERS]),
      });
    } else if (isReasoning(item)) {
      const text = reasoningTextOf(item);
      if (text === undefined) continue; // encrypted-only reasoning of another provider
      addPart('assistant', record, {
        type: 'reasoning',
        text,
        ...omit(record, ['type', 'id', 'text', 'summary', 'content', 'output', 'encrypted_content', 'signature', 'status', ...ITEM_MARKERS]),
      });
    } else if (item.type === AI_SDK_APPROVAL_REQUEST_TYPE) {
      addPart('assistant', record, { ...omit(record, ITEM_MARKERS), type: 'tool-approval-request' });
    } else if (item.type === AI_SDK_APPROVAL_RESPONSE_TYPE) {
      addPart('tool', record, { ...omit(record, ITEM_MARKERS), type: 'tool-approval-response' });
    }
  }
  close();
  return messages.map(restoreUndefined) as ModelMessage[];
};
