// ModelClient request and result types, shared by compaction policies and the runtime.
import type { MemoryItem } from '../items/index.js';

/** A tool as a provider is told about it: JSON Schema parameters. */
export interface ToolSpec {
  readonly type: 'function';
  readonly name: string;
  readonly description?: string;
  readonly parameters: Record<string, unknown>;
}

export interface ModelRequest {
  readonly model: string;
  readonly systemPrompt?: string;
  readonly items: readonly MemoryItem[];
  readonly tools?: readonly ToolSpec[];
}

export interface ModelUsage {
  readonly inputTokens?: number;
  readonly outputTokens?: number;
  readonly totalTokens?: number;
  /** Prompt tokens the provider served from its prompt cache (part of `inputTokens`). */
  readonly cachedInputTokens?: number;
  /** Prompt tokens the provider wrote to its prompt cache (Anthropic's cache creation; part of `inputTokens`). */
  readonly cacheWriteTokens?: number;
  readonly [key: string]: unknown;
}

export interface ModelResult {
  /** The final text of the answer, when the model gave one. */
  readonly outputText?: string;
  /** Assistant messages, function calls and reasoning the model produced. */
  readonly items: readonly MemoryItem[];
  readonly usage?: ModelUsage;
  /**
   * Why the provider ended the answer, in its own words, where it says: Chat Completions' `finish_reason` (`stop`,
   * `tool_calls`, `length`, ...), the Responses API's incomplete reason or status (`max_output_tokens`, `completed`),
   * Anthropic's `stop_reason` (`end_turn`, `tool_use`, `max_tokens`, ...). Recorded in `model.responded`.
   */
  readonly finishReason?: string;
}

/**
 * A piece of a streamed answer. The deltas are for display only; the `finish` part carries the whole answer, the
 * same `ModelResult` that `create` would have returned, and is the last part of a complete stream.
 */
export type ModelStreamPart =
  | { readonly type: 'text-delta'; readonly delta: string }
  | { readonly type: 'reasoning-delta'; readonly delta: string }
  | { readonly type: 'tool-call-delta'; readonly callId: string; readonly name?: string; readonly argumentsDelta: string }
  | { readonly type: 'finish'; readonly result: ModelResult };

/** Anything that turns a request into a result: an SDK adapter, a scripted client, a test double. */
export interface ModelClient {
  create(request: ModelRequest, options?: { readonly signal?: AbortSignal }): Promise<ModelResult>;
  /**
   * The same answer as `create`, streamed: deltas as they arrive, then one `finish` part with the result. A
   * stream that ends without `finish` is a failed call. The runtime uses it when `run(input, { onDelta })` asks.
   */
  stream?(request: ModelRequest, options?: { readonly signal?: AbortSignal }): AsyncIterable<ModelStreamPart>;
  /**
   * What this client will add to or change in the request beyond its items (a provider's first-turn
   * placeholder, ...), or undefined for nothing. The runtime records it in `model.requested` as `adapter`,
   * so an audit or replay sees exactly what the provider was sent.
   */
  describeRequest?(request: ModelRequest): Record<string, unknown> | undefined;
  /**
   * The tokens this client's request carries besides its items (system prompt, tool schemas as its provider shape
   * carries them, reply priming), counted with `tokenizer` (the projector's). The runtime takes them off `maxTokens`
   * before projecting, so `maxTokens` bounds the whole request; without this hook it counts the system prompt as a
   * message and each tool spec's JSON text. Must be synchronous and return a non-negative integer.
   */
  requestOverheadTokens?(
    request: Pick<ModelRequest, 'systemPrompt' | 'tools'>,
    tokenizer: { readonly name: string; count(text: string): number },
  ): number;
}
