// Lossless converters between OpenAI Agents SDK `AgentInputItem[]` and memory items (Responses shape).
import { isRecord } from '../../base/index.js';
import type { AgentInputItem } from '@openai/agents';
import { isFunctionCall, isFunctionCallOutput, isMessage, isReasoning, toolCallArguments, toolCallName, toolNamesByCallId } from '../../items/index.js';
import type { MemoryItem } from '../../items/index.js';
import { reasoningTextOf } from '../../runtime/index.js';
import { checkMemoryItems, inputChecks, kindOf, sameText, type InputChecks } from '../shared/input.js';

type Json = Record<string, unknown>;

/** On a message item whose Agents SDK item had no `type` (the SDK allows `{role, content}`). */
export const AGENTS_UNTYPED_KEY = 'agents_untyped';
/** On a `function_call_output`: the Agents SDK `output` when it was not a string (text, image or file objects, parts). */
export const AGENTS_OUTPUT_KEY = 'agents_output';
/** On a reasoning item whose Agents SDK item had no `id`: the id was made up and is left out again. */
export const AGENTS_GENERATED_ID_KEY = 'agents_generated_id';
/** On a call or output of a built-in tool (computer, shell, apply_patch, program): its Agents SDK type. */
export const AGENTS_TYPE_KEY = 'agents_type';

/** Built-in tool calls and their outputs, joined by `callId`: stored as function calls and outputs so projection keeps the pairs. */
const BUILTIN_CALLS: ReadonlySet<string> = new Set(['computer_call', 'shell_call', 'apply_patch_call', 'program']);
const BUILTIN_OUTPUTS: ReadonlySet<string> = new Set(['computer_call_result', 'shell_call_output', 'apply_patch_call_output', 'program_output']);


const omit = (obj: Json, keys: readonly string[]): Json => {
  const out: Json = {};
  for (const [key, value] of Object.entries(obj)) if (!keys.includes(key) && value !== undefined) out[key] = value;
  return out;
};

/** The text a model sees for a function result's output: a string as it is, text parts joined, anything else as JSON. */
export const agentsOutputText = (output: unknown): string => {
  if (typeof output === 'string') return output;
  if (isRecord(output) && output['type'] === 'text' && typeof output['text'] === 'string') return output['text'];
  if (Array.isArray(output) && output.every((p) => isRecord(p) && p['type'] === 'input_text' && typeof p['text'] === 'string')) {
    return output.map((p) => (p as { text: string }).text).join('');
  }
  return JSON.stringify(output) ?? '';
};

/** Options of {@link fromAgentInputItems}. */
export interface FromAgentInputItemsOptions {
  /** Prefix of the ids given to reasoning items that have none (`<prefix>_<index>`); default `reasoning`. */
  readonly reasoningIdPrefix?: string;
}

/**
 * Agents SDK `AgentInputItem[]` → memory items, losing nothing: {@link toAgentInputItems} gives the same
 * items back. Messages keep their shape (`type:'message'`); `function_call` items get `call_id` for
 * `callId`; `function_call_result` items become `function_call_output` items (output as text, a
 * non-string output kept beside it); reasoning keeps its `content`; built-in tool calls and outputs
 * (computer, shell, apply_patch) become function calls and outputs so projection keeps them paired;
 * hosted tool calls and other items pass through as they are.
 * @example
 * fromAgentInputItems([
 *   { role: 'user', content: 'weather?' },
 *   { type: 'function_call', callId: 'c1', name: 'weather', arguments: '{}' },
 *   { type: 'function_call_result', callId: 'c1', name: 'weather', status: 'completed', output: 'sunny' },
 * ])
 * // [{type:'message', role:'user', content:'weather?', agents_untyped:true}, functionCall('c1','weather','{}'), {type:'function_call_output', call_id:'c1', output:'sunny', name:'weather', status:'completed'}]
 */
export const fromAgentInputItems = (items: readonly AgentInputItem[], options: FromAgentInputItemsOptions = {}): MemoryItem[] =>
  agentItemsToMemory(checkAgentInputItems(inputChecks('openai-agents', 'fromAgentInputItems'), items), options);

/** The string keys each item type must have: without them it cannot be paired with its call or result, or sent back. */
const ITEM_KEYS: Readonly<Record<string, readonly string[]>> = {
  function_call: ['callId', 'name'],
  function_call_result: ['callId'],
  ...Object.fromEntries([...BUILTIN_CALLS, ...BUILTIN_OUTPUTS].map((type) => [type, ['callId']])),
};

/**
 * Checks items as the Agents SDK's `AgentInputItem` has them (objects; a message with a string `role` and content a
 * string or an array; calls and results with their `callId`), throwing a `BridgeInputError` that names the path.
 */
export const checkAgentInputItems = (checks: InputChecks, items: unknown): Json[] =>
  checks.list(items, 'AgentInputItem objects').map((raw, index) => {
    const item = checks.record(raw, index, '');
    const type = item['type'];
    if (type !== undefined && typeof type !== 'string') checks.fail(index, '.type', `must be a string or absent, got ${kindOf(type)}`);
    if (type === undefined || type === 'message') {
      checks.string(item, 'role', index, '');
      const content = item['content'];
      if (typeof content !== 'string' && !Array.isArray(content)) checks.fail(index, '.content', `must be a string or an array of parts, got ${kindOf(content)}`);
    }
    for (const key of ITEM_KEYS[type as string] ?? []) checks.string(item, key, index, '');
    return item;
  });

const agentItemsToMemory = (items: readonly Json[], options: FromAgentInputItemsOptions): MemoryItem[] =>
  items.map((item, index): MemoryItem => {
    const type = item['type'];
    if (type === undefined || type === 'message') {
      return { type: 'message', ...omit(item, ['type']), ...(type === undefined ? { [AGENTS_UNTYPED_KEY]: true } : {}) } as MemoryItem;
    }
    if (type === 'function_call') {
      return { type: 'function_call', call_id: item['callId'] as string, ...omit(item, ['type', 'callId']) } as MemoryItem;
    }
    if (type === 'function_call_result') {
      const output = item['output'];
      return {
        type: 'function_call_output',
        call_id: item['callId'] as string,
        output: agentsOutputText(output),
        ...(typeof output === 'string' ? {} : { [AGENTS_OUTPUT_KEY]: output }),
        ...omit(item, ['type', 'callId', 'output']),
      };
    }
    if (type === 'reasoning') {
      const id = item['id'];
      return typeof id === 'string'
        ? { ...item, type: 'reasoning', id }
        : { ...item, type: 'reasoning', id: `${options.reasoningIdPrefix ?? 'reasoning'}_${index}`, [AGENTS_GENERATED_ID_KEY]: true };
    }
    if (typeof type === 'string' && typeof item['callId'] === 'string' && BUILTIN_CALLS.has(type)) {
      const rest = omit(item, ['type', 'callId']);
      return { type: 'function_call', call_id: item['callId'], name: type, arguments: JSON.stringify(rest), [AGENTS_TYPE_KEY]: type };
    }
    if (typeof type === 'string' && typeof item['callId'] === 'string' && BUILTIN_OUTPUTS.has(type)) {
      const rest = omit(item, ['type', 'callId']);
      return { type: 'function_call_output', call_id: item['callId'], output: JSON.stringify(rest), [AGENTS_TYPE_KEY]: type };
    }
    return item as MemoryItem;
  });

const parseRecord = (text: string): Json | undefined => {
  try {
    const parsed: unknown = JSON.parse(text);
    return isRecord(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
};

const FOREIGN_WRAPPERS: ReadonlySet<string> = new Set(['chat_message', 'anthropic_message']);

const assistantContent = (content: unknown): unknown[] =>
  typeof content === 'string'
    ? content.length > 0
      ? [{ type: 'output_text', text: content }]
      : []
    : Array.isArray(content)
      ? content.map((part: unknown) =>
          typeof part === 'string'
            ? { type: 'output_text', text: part }
            : isRecord(part) && (part['type'] === 'text' || part['type'] === 'input_text') && typeof part['text'] === 'string'
              ? { type: 'output_text', text: part['text'] }
              : part,
        )
      : [];

const userContent = (content: unknown): unknown =>
  Array.isArray(content)
    ? content.map((part: unknown) =>
        typeof part === 'string'
          ? { type: 'input_text', text: part }
          : isRecord(part) && (part['type'] === 'text' || part['type'] === 'output_text') && typeof part['text'] === 'string'
            ? { type: 'input_text', text: part['text'] }
            : part,
      )
    : content;

/**
 * Memory items → Agents SDK `AgentInputItem[]`, the inverse of {@link fromAgentInputItems}. Items from other
 * sources convert too: a string assistant message becomes `output_text` content (status `completed`),
 * Chat-style `tool_calls` become `function_call` items, reasoning of any provider gets `content`, a
 * developer message a system message. A tool result rewritten by a projector (Tier-1) goes as its text;
 * the tool name comes from the item or its call. Chat and Anthropic wrapper items are left out.
 * @example
 * const input = toAgentInputItems(projection.items);
 */
export const toAgentInputItems = (items: readonly MemoryItem[]): AgentInputItem[] => {
  checkMemoryItems(inputChecks('openai-agents', 'toAgentInputItems'), items);
  return agentItemsPerItem(items).flat();
};

/** {@link toAgentInputItems}, item by item: the Agents SDK items each memory item becomes (none, one, or a message and its calls). */
export const agentItemsPerItem = (items: readonly MemoryItem[]): AgentInputItem[][] => {
  const names = toolNamesByCallId(items);
  const perItem: AgentInputItem[][] = [];
  for (const item of items) {
    const out: Json[] = [];
    perItem.push(out as unknown as AgentInputItem[]);
    const record = item as Json;
    if (isMessage(item)) {
      const role: string = item.role;
      const untyped = record[AGENTS_UNTYPED_KEY] === true;
      const rest = omit(record, ['type', 'role', 'content', 'tool_calls', AGENTS_UNTYPED_KEY]);
      const typeKey = untyped ? {} : { type: 'message' };
      if (role === 'assistant') {
        const fromAgents = Array.isArray(item.content) && typeof record['status'] === 'string';
        out.push(
          fromAgents
            ? { ...typeKey, role, content: item.content, ...rest }
            : { ...typeKey, role, status: 'completed', content: assistantContent(item.content), ...omit(rest, ['status']) },
        );
        for (const call of item.tool_calls ?? []) {
          out.push({ type: 'function_call', callId: call.id, name: toolCallName(call) ?? '', arguments: toolCallArguments(call) });
        }
      } else if (role === 'user' || role === 'system' || role === 'developer') {
        out.push({ ...typeKey, role: role === 'developer' ? 'system' : role, content: role === 'user' ? userContent(item.content) : item.content, ...rest });
      }
      // a Chat-style tool message has no Agents SDK form: left out
    } else if (isFunctionCall(item)) {
      const builtin = record[AGENTS_TYPE_KEY];
      if (typeof builtin === 'string') out.push({ type: builtin, callId: item.call_id, ...(parseRecord(item.arguments) ?? {}) });
      else out.push({ type: 'function_call', callId: item.call_id, ...omit(record, ['type', 'call_id']) });
    } else if (isFunctionCallOutput(item)) {
      const builtin = record[AGENTS_TYPE_KEY];
      const parsed = typeof item.output === 'string' ? parseRecord(item.output) : undefined;
      if (typeof builtin === 'string' && parsed) {
        out.push({ type: builtin, callId: item.call_id, ...parsed });
      } else {
        const kept = record[AGENTS_OUTPUT_KEY];
        const text = typeof item.output === 'string' ? item.output : (JSON.stringify(item.output) ?? '');
        out.push({
          type: 'function_call_result',
          callId: item.call_id,
          name: typeof record['name'] === 'string' ? record['name'] : (names.get(item.call_id) ?? ''),
          status: 'completed',
          output: kept !== undefined && sameText(agentsOutputText(kept), text) ? kept : text,
          ...omit(record, ['type', 'call_id', 'output', 'name', AGENTS_OUTPUT_KEY, AGENTS_TYPE_KEY, 'is_error', 'empty_content']),
        });
      }
    } else if (isReasoning(item)) {
      const generated = record[AGENTS_GENERATED_ID_KEY] === true;
      const content = Array.isArray(record['content']) ? record['content'] : [{ type: 'input_text', text: reasoningTextOf(item) ?? '' }];
      out.push({
        ...omit(record, ['summary', 'text', 'output', 'content', 'encrypted_content', 'signature', AGENTS_GENERATED_ID_KEY, ...(generated ? ['id'] : [])]),
        type: 'reasoning',
        content,
      });
    } else if (!FOREIGN_WRAPPERS.has(item.type)) {
      out.push(record);
    }
  }
  return perItem;
};
