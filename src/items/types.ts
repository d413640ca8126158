// MemoryItem shapes: the OpenAI Responses item shape is canonical; unknown types pass through.

/** A part of a message's content (text, image, Anthropic-style tool_use, ...). Unknown parts pass through. */
export interface ContentPart {
  readonly type: string;
  readonly text?: string;
  readonly [key: string]: unknown;
}

/** A tool call on an assistant message, flat (`name`) or OpenAI nested (`function.name`). */
export interface ToolCall {
  readonly id: string;
  readonly type?: 'function' | (string & {});
  readonly name?: string;
  readonly arguments?: string;
  readonly function?: { readonly name: string; readonly arguments?: string; readonly [key: string]: unknown };
  readonly [key: string]: unknown;
}

export type MessageRole = 'system' | 'developer' | 'user' | 'assistant' | 'tool';

export interface MessageItem {
  readonly type: 'message';
  readonly role: MessageRole;
  readonly content: string | readonly ContentPart[];
  readonly tool_calls?: readonly ToolCall[];
  readonly [key: string]: unknown;
}

export interface FunctionCallItem {
  readonly type: 'function_call';
  readonly call_id: string;
  readonly name: string;
  readonly arguments: string;
  readonly [key: string]: unknown;
}

export interface FunctionCallOutputItem {
  readonly type: 'function_call_output';
  readonly call_id: string;
  readonly output: string;
  readonly [key: string]: unknown;
}

export interface ReasoningItem {
  readonly type: 'reasoning';
  readonly id: string;
  readonly summary?: unknown;
  readonly content?: unknown;
  readonly text?: string;
  readonly [key: string]: unknown;
}

/** Any item of another type: kept and passed through untouched. */
export interface OtherItem {
  readonly type: string;
  readonly [key: string]: unknown;
}

/** One entry of agent memory: a plain JSON object with a string `type`. */
export type MemoryItem = MessageItem | FunctionCallItem | FunctionCallOutputItem | ReasoningItem | OtherItem;
