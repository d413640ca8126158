// Constructors and type guards for the known MemoryItem shapes.
import type {
  ContentPart,
  FunctionCallItem,
  FunctionCallOutputItem,
  MemoryItem,
  MessageItem,
  ReasoningItem,
  ToolCall,
} from './types.js';

/** `userMessage('fix the test')` → `{type:'message', role:'user', content:'fix the test'}` */
export const userMessage = (text: string): MessageItem => ({ type: 'message', role: 'user', content: text });

/** A system message, as the summary is shown to the model. */
export const systemMessage = (text: string): MessageItem => ({ type: 'message', role: 'system', content: text });

/** An assistant message, optionally carrying Chat-style tool calls. */
export const assistantMessage = (text: string, toolCalls?: readonly ToolCall[]): MessageItem =>
  toolCalls && toolCalls.length > 0
    ? { type: 'message', role: 'assistant', content: text, tool_calls: toolCalls }
    : { type: 'message', role: 'assistant', content: text };

/** A Responses-style function call; `args` may be an object (serialised to JSON) or a JSON string. */
export const functionCall = (callId: string, name: string, args: string | object = {}): FunctionCallItem => ({
  type: 'function_call',
  call_id: callId,
  name,
  arguments: typeof args === 'string' ? args : JSON.stringify(args),
});

/** The output of a function call, joined to it by `call_id`. */
export const functionCallOutput = (callId: string, output: string): FunctionCallOutputItem => ({
  type: 'function_call_output',
  call_id: callId,
  output,
});

/** A reasoning item with a text summary. */
export const reasoning = (id: string, summary: string): ReasoningItem => ({ type: 'reasoning', id, summary });

export const isMessage = (item: MemoryItem): item is MessageItem =>
  item.type === 'message' && typeof (item as { role?: unknown }).role === 'string';

export const isUserMessage = (item: MemoryItem): item is MessageItem => isMessage(item) && item.role === 'user';

export const isFunctionCall = (item: MemoryItem): item is FunctionCallItem =>
  item.type === 'function_call' && typeof (item as { call_id?: unknown }).call_id === 'string';

export const isFunctionCallOutput = (item: MemoryItem): item is FunctionCallOutputItem =>
  item.type === 'function_call_output' && typeof (item as { call_id?: unknown }).call_id === 'string';

export const isReasoning = (item: MemoryItem): item is ReasoningItem => item.type === 'reasoning';

const partText = (part: unknown): string => {
  if (typeof part === 'string') return part;
  if (part !== null && typeof part === 'object') {
    const p = part as ContentPart;
    if (typeof p.text === 'string') return p.text;
  }
  return '';
};

/** The plain text of a message ('' when it has none). Text parts of array content are joined with '\n'. */
export const textOf = (item: MemoryItem | null | undefined): string => {
  if (!item || item.type !== 'message') return '';
  const content = (item as { content?: unknown }).content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map(partText)
      .filter((t) => t.length > 0)
      .join('\n');
  }
  return '';
};

/**
 * The last assistant message of a list (a model's answer), or undefined; entries that are not objects are passed over.
 * @example textOf(lastAssistantMessage(result.items)) // the answer's text
 */
export const lastAssistantMessage = (items: readonly MemoryItem[]): MessageItem | undefined => {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    if (item !== null && typeof item === 'object' && isMessage(item) && item.role === 'assistant') return item;
  }
  return undefined;
};

/**
 * The items an input of `run` or `addUserInput` stands for: a string is one user message, a list is copied, an item is one item.
 * @example itemsOfInput('fix the test') // [{ type: 'message', role: 'user', content: 'fix the test' }]
 */
export const itemsOfInput = (input: string | MemoryItem | readonly MemoryItem[]): MemoryItem[] =>
  typeof input === 'string' ? [userMessage(input)] : Array.isArray(input) ? [...(input as readonly MemoryItem[])] : [input as MemoryItem];

/** The tool name of a call, flat (`name`) or nested (`function.name`), or undefined. */
export const toolCallName = (call: ToolCall): string | undefined => {
  if (typeof call.name === 'string' && call.name.length > 0) return call.name;
  const fn = call.function;
  if (fn && typeof fn.name === 'string' && fn.name.length > 0) return fn.name;
  return undefined;
};

/** The arguments of a call as text, flat or nested ('' when none). */
export const toolCallArguments = (call: ToolCall): string => {
  if (typeof call.arguments === 'string') return call.arguments;
  const fn = call.function;
  if (fn && typeof fn.arguments === 'string') return fn.arguments;
  return '';
};
