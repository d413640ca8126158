// ModelClient adapter over a user-supplied `@anthropic-ai/sdk` client: the Messages API.
import type { Anthropic } from '@anthropic-ai/sdk';
import { systemMessage } from '../items/index.js';
import type { ModelClient, ModelRequest, ModelResult, ModelStreamPart, ModelUsage, ToolSpec } from '../model/index.js';
import { contextOverflowFrom, mapContextOverflow } from '../model/index.js';
import { ProviderResponseError } from './errors.js';
import { ANTHROPIC_FIRST_TURN_PLACEHOLDER, fromAnthropicMessages, toAnthropicMessages } from '../providers/index.js';
import type { AnthropicContentBlock, AnthropicMessage, AnthropicSystem } from '../providers/index.js';
import { isRecord, mapUsage, prefixReasoningIds, streamOnCallSignal, withCallSignal, withSignal } from './shared.js';
import type { ProviderCompaction, ProviderCompactor } from '../compact/index.js';
import type { Json } from './shared.js';

type MessagesParams = Anthropic.MessageCreateParamsNonStreaming;

/** SDK request options sent with every request (`timeout`, `headers`, ...); the signal comes from `create`. */
export type AnthropicRequestOptions = Omit<Anthropic.RequestOptions, 'signal'>;

/** Options of {@link anthropicMessagesClient}. */
export interface AnthropicMessagesOptions {
  /** `max_tokens` of every request (the Messages API requires it). */
  readonly maxTokens: number;
  /**
   * Extra request parameters sent with every request: `thinking`, `output_config`, `tool_choice`,
   * `stop_sequences`, `cache_control`, `metadata`, ... `tools` given here (server tools such as web search) go after the
   * request's tools.
   */
  readonly params?: Partial<Omit<MessagesParams, 'model' | 'messages' | 'system' | 'max_tokens' | 'stream'>>;
  /** `'thinking'` (default): signed reasoning goes back as `thinking` blocks. `'omit'`: left out. */
  readonly reasoning?: 'thinking' | 'omit';
  /**
   * SDK request options. The SDK refuses a non-streaming request whose `max_tokens` could take more than ten
   * minutes (about 21,000 tokens) unless a `timeout` is given here or on the client.
   */
  readonly requestOptions?: AnthropicRequestOptions;
}

const anthropicTool = (tool: ToolSpec): Json => ({
  name: tool.name,
  ...(tool.description !== undefined ? { description: tool.description } : {}),
  input_schema: { type: 'object', ...tool.parameters },
});

/** A response block without the keys the API sets to null (`citations: null` on text, ...). */
const withoutNullKeys = (block: AnthropicContentBlock): AnthropicContentBlock =>
  Object.fromEntries(Object.entries(block).filter(([, value]) => value !== null)) as AnthropicContentBlock;

const tokens = (value: unknown): number => (typeof value === 'number' ? value : 0);

/**
 * Usage with `inputTokens` = the whole prompt: `input_tokens` plus the cache writes and reads Anthropic counts apart
 * (also given as `cacheWriteTokens` and `cachedInputTokens`).
 */
const anthropicUsage = (raw: unknown): ModelUsage | undefined => {
  const usage = mapUsage(raw, { input: 'input_tokens', output: 'output_tokens', cached: ['cache_read_input_tokens'], cacheWrite: ['cache_creation_input_tokens'] });
  if (!usage || !isRecord(raw) || usage.inputTokens === undefined) return usage;
  const inputTokens = usage.inputTokens + tokens(raw['cache_creation_input_tokens']) + tokens(raw['cache_read_input_tokens']);
  return { ...usage, inputTokens, ...(usage.outputTokens !== undefined ? { totalTokens: inputTokens + usage.outputTokens } : {}) };
};

/**
 * `system` and `messages` for a model request: the system prompt first, then the system and developer
 * messages of the items, all in `system`; the rest converted with `toAnthropicMessages(items, { strict: true })`.
 */
export const anthropicConversation = (
  request: Pick<ModelRequest, 'systemPrompt' | 'items'>,
  options: Pick<AnthropicMessagesOptions, 'reasoning'> = {},
): { system?: AnthropicSystem; messages: AnthropicMessage[] } => {
  const items = request.systemPrompt ? [systemMessage(request.systemPrompt), ...request.items] : request.items;
  return toAnthropicMessages(items, { strict: true, reasoning: options.reasoning ?? 'thinking' });
};

/** The Messages API body of a request (`create` sends it as is, the stream with `stream: true`). */
const messagesBody = (request: ModelRequest, options: AnthropicMessagesOptions): Record<string, unknown> => {
  const { tools: extraTools, ...params } = options.params ?? {};
  const { system, messages } = anthropicConversation(request, options);
  const tools = [...(request.tools ?? []).map(anthropicTool), ...(extraTools ?? [])];
  return {
    ...params,
    model: request.model,
    max_tokens: options.maxTokens,
    ...(system !== undefined ? { system } : {}),
    messages,
    ...(tools.length > 0 ? { tools } : {}),
  };
};

/**
 * A {@link ModelClient} over `client.messages.create`. The system prompt and the system messages in the
 * items form `system`; the items become user/assistant turns (`tool_use` / `tool_result` / `thinking`
 * blocks) through `toAnthropicMessages(items, { strict: true })`; tools are `{name, description,
 * input_schema}`. The answer's content blocks come back through `fromAnthropicMessages` (messages,
 * function calls, reasoning with its signature); `outputText` is its text blocks joined (undefined when
 * none). Errors and aborts reject with the SDK's error.
 * @example
 * import Anthropic from '@anthropic-ai/sdk';
 * const model = anthropicMessagesClient(new Anthropic(), { maxTokens: 4096 });
 * const result = await model.create({ model: 'claude-sonnet-4-5', systemPrompt: 'be brief', items: [userMessage('hi')] });
 */
export const anthropicMessagesClient = (client: Anthropic, options: AnthropicMessagesOptions): ModelClient => ({
  stream: (request, streamOptions) => streamOnCallSignal(streamOptions?.signal, (signal) => streamAnthropicMessages(client, options, request, signal)),
  /** `{ firstTurnPlaceholder }` when the items start with an assistant or tool turn, which gets a placeholder user turn before it. */
  describeRequest(request) {
    const [first] = anthropicConversation(request, options).messages;
    return first && first.role === 'user' && first.content === ANTHROPIC_FIRST_TURN_PLACEHOLDER ? { firstTurnPlaceholder: ANTHROPIC_FIRST_TURN_PLACEHOLDER } : undefined;
  },
  async create(request, { signal } = {}): Promise<ModelResult> {
    const body = messagesBody(request, options) as unknown as MessagesParams;
    const message = await mapContextOverflow(() => withCallSignal(signal, (callSignal) => client.messages.create(body, withSignal(options.requestOptions, callSignal))));
    const content = (message.content as unknown as AnthropicContentBlock[]).map(withoutNullKeys);
    const items = prefixReasoningIds(fromAnthropicMessages({ messages: [{ role: 'assistant', content }] }), message.id);
    const text = content
      .map((block) => (block.type === 'text' && typeof block['text'] === 'string' ? block['text'] : ''))
      .join('');
    const usage = anthropicUsage(message.usage);
    const finishReason = typeof message.stop_reason === 'string' && (message.stop_reason as string) !== '' ? message.stop_reason : undefined;
    return { items, ...(text.length > 0 ? { outputText: text } : {}), ...(usage ? { usage } : {}), ...(finishReason !== undefined ? { finishReason } : {}) };
  },
});

/** A content block as the stream builds it: the block `content_block_start` gave, and the JSON text of a tool input so far. */
interface BlockSoFar {
  block: Json;
  json?: string;
}

const parseToolInput = (json: string, messageId: string | undefined): unknown => {
  if (json.trim() === '') return {};
  try {
    return JSON.parse(json);
  } catch {
    throw new ProviderResponseError('anthropic', messageId, `Anthropic stream of message ${messageId ?? '(no id)'}: a tool input is not valid JSON: ${json.slice(0, 200)}`);
  }
};

/**
 * `anthropicMessagesClient(...).stream`: the Messages API with `stream: true`. Text, thinking and tool-input JSON
 * deltas are yielded as they arrive; the events are joined into the message a non-streamed answer has (blocks from
 * `content_block_start` and their deltas, usage from `message_start` updated by `message_delta`), which becomes the
 * finish part's result exactly as `create` maps it (`finishReason` is `message_delta`'s `stop_reason`). An `error` event
 * or a stream that ends before `message_stop` rejects; a context overflow (a 400 when the stream is opened, or an
 * `error` event saying the prompt is too long) rejects with `ContextOverflowError`, as `create` does.
 */
const streamAnthropicMessages = async function* (
  client: Anthropic,
  options: AnthropicMessagesOptions,
  request: ModelRequest,
  signal: AbortSignal | undefined,
): AsyncGenerator<ModelStreamPart> {
  const body = { ...messagesBody(request, options), stream: true } as unknown as Anthropic.MessageCreateParamsStreaming;
  const stream = await client.messages.create(body, withSignal(options.requestOptions, signal));
  let messageId: string | undefined;
  let usage: Json | undefined;
  let stopped = false;
  let stopReason: string | undefined;
  const blocks: BlockSoFar[] = [];
  for await (const raw of stream as AsyncIterable<unknown>) {
    const event = raw as Json;
    switch (event['type']) {
      case 'message_start': {
        const message = isRecord(event['message']) ? event['message'] : {};
        messageId = typeof message['id'] === 'string' ? message['id'] : undefined;
        usage = isRecord(message['usage']) ? { ...message['usage'] } : undefined;
        break;
      }
      case 'content_block_start': {
        const block = isRecord(event['content_block']) ? { ...event['content_block'] } : {};
        const index = typeof event['index'] === 'number' ? event['index'] : blocks.length;
        blocks[index] = { block, ...(block['type'] === 'tool_use' || block['type'] === 'server_tool_use' ? { json: '' } : {}) };
        if (block['type'] === 'tool_use') yield { type: 'tool-call-delta', callId: String(block['id'] ?? ''), name: String(block['name'] ?? ''), argumentsDelta: '' };
        break;
      }
      case 'content_block_delta': {
        const current = blocks[typeof event['index'] === 'number' ? event['index'] : -1];
        const delta = isRecord(event['delta']) ? event['delta'] : {};
        if (!current) break;
        const { block } = current;
        if (delta['type'] === 'text_delta' && typeof delta['text'] === 'string') {
          block['text'] = String(block['text'] ?? '') + delta['text'];
          yield { type: 'text-delta', delta: delta['text'] };
        } else if (delta['type'] === 'thinking_delta' && typeof delta['thinking'] === 'string') {
          block['thinking'] = String(block['thinking'] ?? '') + delta['thinking'];
          yield { type: 'reasoning-delta', delta: delta['thinking'] };
        } else if (delta['type'] === 'signature_delta' && typeof delta['signature'] === 'string') {
          block['signature'] = delta['signature'];
        } else if (delta['type'] === 'input_json_delta' && typeof delta['partial_json'] === 'string' && current.json !== undefined) {
          current.json += delta['partial_json'];
          if (block['type'] === 'tool_use') yield { type: 'tool-call-delta', callId: String(block['id'] ?? ''), argumentsDelta: delta['partial_json'] };
        } else if (delta['type'] === 'citations_delta') {
          block['citations'] = [...(Array.isArray(block['citations']) ? block['citations'] : []), delta['citation']];
        }
        break;
      }
      case 'message_delta': {
        const reason = isRecord(event['delta']) ? event['delta']['stop_reason'] : undefined;
        if (typeof reason === 'string' && reason !== '') stopReason = reason;
        const delta = isRecord(event['usage']) ? event['usage'] : {};
        // The counts message_delta gives are cumulative; a null leaves message_start's count.
        usage = { ...usage, ...Object.fromEntries(Object.entries(delta).filter(([, value]) => value !== null && value !== undefined)) };
        break;
      }
      case 'message_stop':
        stopped = true;
        break;
      case 'error': {
        const error = isRecord(event['error']) ? event['error'] : {};
        throw contextOverflowFrom(event) ?? new ProviderResponseError('anthropic', messageId, `Anthropic stream error: ${String(error['type'] ?? 'error')}: ${String(error['message'] ?? '')}`);
      }
      default:
        break;
    }
  }
  if (!stopped) throw new ProviderResponseError('anthropic', messageId, `Anthropic stream of message ${messageId ?? '(no id)'} ended before message_stop`);
  const content = blocks
    .filter((b): b is BlockSoFar => b !== undefined)
    .map(({ block, json }) => withoutNullKeys((json !== undefined ? { ...block, input: parseToolInput(json, messageId) } : block) as AnthropicContentBlock));
  const items = prefixReasoningIds(fromAnthropicMessages({ messages: [{ role: 'assistant', content }] }), messageId);
  const text = content.map((block) => (block.type === 'text' && typeof block['text'] === 'string' ? block['text'] : '')).join('');
  const mapped = anthropicUsage(usage);
  yield { type: 'finish', result: { items, ...(text.length > 0 ? { outputText: text } : {}), ...(mapped ? { usage: mapped } : {}), ...(stopReason !== undefined ? { finishReason: stopReason } : {}) } };
};

/** Options of {@link anthropicCompactor}. */
export interface AnthropicCompactorOptions {
  /** `max_tokens` of the compaction request (the Messages API requires it). */
  readonly maxTokens: number;
  /** The beta the compaction request needs (default `['compact-2026-09-04']`, as the installed SDK's tool runner sends). */
  readonly betas?: readonly string[];
  /** Extra request parameters: `metadata`, `cache_control`, ... */
  readonly params?: Readonly<Record<string, unknown>>;
  readonly requestOptions?: AnthropicRequestOptions;
}

/**
 * A {@link ProviderCompactor} over Anthropic's compaction request (`client.beta.messages.create` with
 * `compaction: { type: 'summarize', instructions? }`, `@anthropic-ai/sdk` 1.16): the items go as the conversation
 * (`toAnthropicMessages(items, { strict: true })`); the answer's `compaction` block (summary, `encrypted_content`,
 * `signature`, `tool_changes`: sent back verbatim) replaces them as one assistant message, which
 * `anthropicMessagesClient` sends first in later requests (send them with the compaction beta header, as Anthropic
 * asks). A block whose `content` is null is a failed compaction: no items, so the policy records `compaction.failed`.
 * @example
 * const policy = new ProviderCompactPolicy(anthropicCompactor(new Anthropic(), { maxTokens: 4096 }), { model: 'claude-sonnet-4-5', compactAboveTokens: 150_000, maxItems: 6 });
 */
export const anthropicCompactor = (client: Anthropic, options: AnthropicCompactorOptions): ProviderCompactor => ({
  provider: 'anthropic',
  async compact(request, { signal } = {}): Promise<ProviderCompaction> {
    const { system, messages } = anthropicConversation({ items: request.items });
    const body = {
      ...options.params,
      model: request.model,
      max_tokens: options.maxTokens,
      ...(system !== undefined ? { system } : {}),
      messages,
      compaction: { type: 'summarize', ...(request.instructions !== undefined ? { instructions: request.instructions } : {}) },
      betas: [...(options.betas ?? ['compact-2026-09-04'])],
    } as unknown as Anthropic.Beta.Messages.MessageCreateParamsNonStreaming;
    const message = await mapContextOverflow(() => withCallSignal(signal, (callSignal) => client.beta.messages.create(body, withSignal(options.requestOptions, callSignal))));
    const { content, ...rest } = message as unknown as Json;
    const blocks = (Array.isArray(content) ? (content as Json[]) : []).filter((block) => block['type'] === 'compaction' && typeof block['content'] === 'string');
    const usage = anthropicUsage(rest['usage']);
    return {
      items: blocks.length > 0 ? [{ type: 'message', role: 'assistant', content: blocks as never }] : [],
      ...(usage ? { usage: JSON.parse(JSON.stringify(usage)) as Record<string, unknown> } : {}),
      response: JSON.parse(JSON.stringify(rest)) as Record<string, unknown>,
    };
  },
});

export { anthropicTokenCounter } from './anthropic-token-count.js';
export type { AnthropicTokenCounterOptions } from './anthropic-token-count.js';
export { ProviderResponseError, isProviderResponseError } from './errors.js';
