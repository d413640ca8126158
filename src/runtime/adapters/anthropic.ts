// ModelClient adapter over a user-supplied `@anthropic-ai/sdk` client: the Messages API.
import type { Anthropic } from '@anthropic-ai/sdk';
import { systemMessage } from '../../items/index.js';
import type { ModelClient, ModelRequest, ModelResult, ModelUsage, ToolSpec } from '../../model/index.js';
import { ANTHROPIC_FIRST_TURN_PLACEHOLDER, fromAnthropicMessages, toAnthropicMessages } from '../providers/index.js';
import type { AnthropicContentBlock, AnthropicMessage, AnthropicSystem } from '../providers/index.js';
import { isRecord, mapUsage, prefixReasoningIds, withSignal } from './shared.js';
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
  /** `{ firstTurnPlaceholder }` when the items start with an assistant or tool turn, which gets a placeholder user turn before it. */
  describeRequest(request) {
    const [first] = anthropicConversation(request, options).messages;
    return first && first.role === 'user' && first.content === ANTHROPIC_FIRST_TURN_PLACEHOLDER ? { firstTurnPlaceholder: ANTHROPIC_FIRST_TURN_PLACEHOLDER } : undefined;
  },
  async create(request, { signal } = {}): Promise<ModelResult> {
    const { tools: extraTools, ...params } = options.params ?? {};
    const { system, messages } = anthropicConversation(request, options);
    const tools = [...(request.tools ?? []).map(anthropicTool), ...(extraTools ?? [])];
    const body = {
      ...params,
      model: request.model,
      max_tokens: options.maxTokens,
      ...(system !== undefined ? { system } : {}),
      messages,
      ...(tools.length > 0 ? { tools } : {}),
    } as unknown as MessagesParams;
    const message = await client.messages.create(body, withSignal(options.requestOptions, signal));
    const content = (message.content as unknown as AnthropicContentBlock[]).map(withoutNullKeys);
    const items = prefixReasoningIds(fromAnthropicMessages({ messages: [{ role: 'assistant', content }] }), message.id);
    const text = content
      .map((block) => (block.type === 'text' && typeof block['text'] === 'string' ? block['text'] : ''))
      .join('');
    const usage = anthropicUsage(message.usage);
    return { items, ...(text.length > 0 ? { outputText: text } : {}), ...(usage ? { usage } : {}) };
  },
});

export { anthropicTokenCounter } from './anthropic-token-count.js';
export type { AnthropicTokenCounterOptions } from './anthropic-token-count.js';
export { ProviderResponseError, isProviderResponseError } from '../errors.js';
