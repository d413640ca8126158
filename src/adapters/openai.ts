// ModelClient adapters over a user-supplied `openai` SDK client: Chat Completions and Responses.
import type { OpenAI } from 'openai';
import { toolCallArguments, toolCallName } from '../items/index.js';
import type { MemoryItem, ToolCall } from '../items/index.js';
import type { ModelClient, ModelRequest, ModelResult, ModelStreamPart, ToolSpec } from '../model/index.js';
import { ContextOverflowError, contextOverflowFrom, mapContextOverflow, overflowTokensOf } from '../model/index.js';
import { ProviderResponseError } from './errors.js';
import { InvalidOptionsError } from '../base/errors.js';
import { EMPTY_CONTENT_KEY, fromChatCompletions, toChatCompletions } from '../providers/index.js';
import type { ChatMessage } from '../providers/index.js';
import { isRecord, mapUsage, prefixReasoningIds, streamOnCallSignal, withCallSignal, withSignal } from './shared.js';
import type { Json } from './shared.js';
import { chatCompletionsRequestTokens } from '../providers/request-tokens.js';
import type { Tokenizer } from '../context/index.js';
import type { ProviderCompaction, ProviderCompactor } from '../compact/index.js';

type ChatParams = OpenAI.ChatCompletionCreateParamsNonStreaming;
type ResponsesParams = OpenAI.Responses.ResponseCreateParamsNonStreaming;

/** SDK request options sent with every request (`timeout`, `headers`, ...); the signal comes from `create`. */
export type OpenAiRequestOptions = Omit<OpenAI.RequestOptions, 'signal'>;

/** Options of {@link openAiChatCompletionsClient}. */
export interface OpenAiChatCompletionsOptions {
  /**
   * Extra request parameters sent with every request: `temperature`, `max_completion_tokens`,
   * `tool_choice`, `reasoning_effort`, ... `tools` given here (custom tools) go after the request's tools.
   */
  readonly params?: Partial<Omit<ChatParams, 'model' | 'messages' | 'stream'>>;
  /** The role of the system prompt's message: `'system'` (default) or `'developer'`. */
  readonly systemRole?: 'system' | 'developer';
  /**
   * `'reasoning_content'` (default): reasoning items go back as `reasoning_content` (DeepSeek, vLLM, ...).
   * `'omit'`: left out, for servers that reject the key.
   */
  readonly reasoning?: 'reasoning_content' | 'omit';
  /** Send `strict: true` on every function tool (the schemas must then meet OpenAI's strict-mode rules). Default false. */
  readonly strictTools?: boolean;
  readonly requestOptions?: OpenAiRequestOptions;
}

/** Options of {@link openAiResponsesClient}. */
export interface OpenAiResponsesOptions {
  /**
   * Extra request parameters sent with every request: `temperature`, `max_output_tokens`, `reasoning`,
   * `store`, `include`, `tool_choice`, ... `tools` given here (hosted tools such as web search) go after
   * the request's function tools.
   */
  readonly params?: Partial<Omit<ResponsesParams, 'model' | 'input' | 'instructions' | 'stream'>>;
  /** `strict` of every function tool. Default false: the Responses API would otherwise assume true. */
  readonly strictTools?: boolean;
  readonly requestOptions?: OpenAiRequestOptions;
}

// ---------------------------------------------------------------------------------------------
// Chat Completions

const chatTool = (tool: ToolSpec, strict: boolean): Json => ({
  type: 'function',
  function: {
    name: tool.name,
    ...(tool.description !== undefined ? { description: tool.description } : {}),
    parameters: tool.parameters,
    ...(strict ? { strict: true } : {}),
  },
});

const isEmptyValue = (value: unknown): boolean =>
  value === null || value === undefined || value === '' || (Array.isArray(value) && value.length === 0);

/**
 * A response message without the keys the API fills with "nothing" (`refusal: null`, `annotations: []`,
 * `audio: null`, `function_call: null`, `tool_calls: []`, `reasoning_content: ''`, ...), so they do not
 * ride along on the items. `role` and `content` stay as they are.
 */
const withoutEmptyKeys = (message: Json): Json =>
  Object.fromEntries(Object.entries(message).filter(([key, value]) => key === 'role' || key === 'content' || !isEmptyValue(value)));

const chatText = (content: unknown): string | undefined => {
  if (typeof content === 'string') return content.length > 0 ? content : undefined;
  if (!Array.isArray(content)) return undefined;
  const text = content
    .map((part: unknown) => (isRecord(part) && typeof part['text'] === 'string' ? part['text'] : ''))
    .join('');
  return text.length > 0 ? text : undefined;
};

/** The `messages` a Chat Completions request carries for a model request: the system prompt first, then the items (strict). */
export const chatCompletionsMessages = (
  request: Pick<ModelRequest, 'systemPrompt' | 'items'>,
  options: Pick<OpenAiChatCompletionsOptions, 'systemRole' | 'reasoning'> = {},
): ChatMessage[] => [
  ...(request.systemPrompt ? [{ role: options.systemRole ?? 'system', content: request.systemPrompt }] : []),
  ...toChatCompletions(request.items, { strict: true, reasoning: options.reasoning ?? 'reasoning_content' }),
];

/** The request's tools and the caller's own (`params.tools`), as Chat Completions takes them. */
const chatTools = (request: Pick<ModelRequest, 'tools'>, options: OpenAiChatCompletionsOptions): unknown[] => [
  ...(request.tools ?? []).map((tool) => chatTool(tool, options.strictTools ?? false)),
  ...(options.params?.tools ?? []),
];

/** The Chat Completions body of a request (`create` sends it as is, the stream with `stream: true`). */
const chatBody = (request: ModelRequest, options: OpenAiChatCompletionsOptions): Record<string, unknown> => {
  const { tools: _tools, ...params } = options.params ?? {};
  const tools = chatTools(request, options);
  return { ...params, model: request.model, messages: chatCompletionsMessages(request, options), ...(tools.length > 0 ? { tools } : {}) };
};

/**
 * A {@link ModelClient} over `client.chat.completions.create` (OpenAI, or any server that speaks Chat
 * Completions: vLLM, DeepSeek, Ollama, ... through `new OpenAI({ baseURL })`). The system prompt is the
 * first message, items are converted with `toChatCompletions(items, { strict: true })`, and the answer's
 * message comes back through `fromChatCompletions` (reasoning, message, function calls). `outputText` is
 * the message text (undefined when it has none). Errors and aborts reject with the SDK's error.
 * @example
 * import OpenAI from 'openai';
 * const model = openAiChatCompletionsClient(new OpenAI(), { params: { temperature: 0 } });
 * const result = await model.create({ model: 'gpt-4.1', systemPrompt: 'be brief', items: [userMessage('hi')] });
 */
export const openAiChatCompletionsClient = (client: OpenAI, options: OpenAiChatCompletionsOptions = {}): ModelClient => ({
  // The system message and the tools exactly as `create` sends them, counted as OpenAI documents (chatCompletionsRequestTokens).
  requestOverheadTokens(request, tokenizer): number {
    return chatCompletionsRequestTokens({ messages: chatCompletionsMessages({ ...request, items: [] }, options), tools: chatTools(request, options) }, tokenizer as Tokenizer);
  },
  stream: (request, streamOptions) => streamOnCallSignal(streamOptions?.signal, (signal) => streamChatCompletions(client, options, request, signal)),
  async create(request, { signal } = {}): Promise<ModelResult> {
    const body = chatBody(request, options) as unknown as ChatParams;
    const completion = await mapContextOverflow(() => withCallSignal(signal, (callSignal) => client.chat.completions.create(body, withSignal(options.requestOptions, callSignal))));
    const choice = completion.choices[0];
    if (!choice) throw new ProviderResponseError('chat-completions', completion.id, `Chat Completions response ${completion.id} has no choices`);
    const message = withoutEmptyKeys(choice.message as unknown as Json);
    const items = prefixReasoningIds(fromChatCompletions([message as ChatMessage]), completion.id);
    const outputText = chatText(message['content']);
    const usage = mapUsage(completion.usage, {
      input: 'prompt_tokens',
      output: 'completion_tokens',
      total: 'total_tokens',
      cached: ['prompt_tokens_details', 'cached_tokens'],
    });
    const finishReason = typeof choice.finish_reason === 'string' && (choice.finish_reason as string) !== '' ? choice.finish_reason : undefined;
    return { items, ...(outputText !== undefined ? { outputText } : {}), ...(usage ? { usage } : {}), ...(finishReason !== undefined ? { finishReason } : {}) };
  },
});

// ---------------------------------------------------------------------------------------------
// Responses

const responsesTool = (tool: ToolSpec, strict: boolean): Json => ({
  type: 'function',
  name: tool.name,
  ...(tool.description !== undefined ? { description: tool.description } : {}),
  parameters: tool.parameters,
  strict,
});

const pick = (obj: Json, keys: readonly string[]): Json =>
  Object.fromEntries(keys.filter((key) => obj[key] !== undefined).map((key) => [key, obj[key]]));

/** A content part in the form the Responses API takes for this side of the conversation, or undefined. */
const responsesPart = (raw: unknown, assistant: boolean): Json | undefined => {
  const part = typeof raw === 'string' ? { type: 'text', text: raw } : raw;
  if (!isRecord(part)) return undefined;
  const type = part['type'];
  const text = part['text'];
  if (type === 'text' || type === 'input_text' || type === 'output_text') {
    if (typeof text !== 'string' || text.length === 0) return undefined;
    if (!assistant) return type === 'input_text' ? part : { type: 'input_text', text };
    return type === 'output_text' ? { annotations: [], ...part } : { type: 'output_text', text, annotations: [] };
  }
  if (type === 'refusal') return assistant ? part : undefined;
  if (assistant) return undefined;
  if (type === 'input_image' || type === 'input_file' || type === 'input_audio') return part;
  if (type === 'image_url') {
    const image = part['image_url'];
    const url = typeof image === 'string' ? image : isRecord(image) ? image['url'] : undefined;
    const detail = isRecord(image) && typeof image['detail'] === 'string' ? image['detail'] : 'auto';
    return typeof url === 'string' ? { type: 'input_image', image_url: url, detail } : undefined;
  }
  if (type === 'image' && isRecord(part['source'])) {
    const source = part['source'];
    if (source['type'] === 'url' && typeof source['url'] === 'string') return { type: 'input_image', image_url: source['url'], detail: 'auto' };
    if (source['type'] === 'base64' && typeof source['data'] === 'string' && typeof source['media_type'] === 'string') {
      return { type: 'input_image', image_url: `data:${source['media_type']};base64,${source['data']}`, detail: 'auto' };
    }
  }
  return undefined;
};

const RESPONSES_ROLES = new Set(['system', 'developer', 'user', 'assistant']);

const functionCallOf = (call: ToolCall): Json => ({
  type: 'function_call',
  call_id: call.id,
  name: toolCallName(call) ?? '',
  arguments: toolCallArguments(call),
});

const responsesMessage = (item: Json): Json[] => {
  const role = item['role'];
  if (typeof role !== 'string' || !RESPONSES_ROLES.has(role)) return [];
  const calls = role === 'assistant' && Array.isArray(item['tool_calls']) ? (item['tool_calls'] as ToolCall[]) : [];
  const out: Json[] = [];
  const content = item['content'];
  const kept = pick(item, ['type', 'role', 'id', 'status', 'phase']);
  if (typeof content === 'string') {
    // `''` with the empty-content marker stands for a Chat message whose content was null.
    if (!(content === '' && item[EMPTY_CONTENT_KEY] !== undefined)) out.push({ ...kept, content });
  } else if (Array.isArray(content)) {
    const parts = content.map((part: unknown) => responsesPart(part, role === 'assistant')).filter((part) => part !== undefined);
    if (parts.length > 0) out.push({ ...kept, content: parts });
  }
  return [...out, ...calls.map(functionCallOf)];
};

const responsesOutput = (output: unknown): unknown => {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) return output.map((part: unknown) => responsesPart(part, false)).filter((part) => part !== undefined);
  return JSON.stringify(output) ?? '';
};

/**
 * Memory items → Responses `input`: the items as stored, less what the API would reject.
 * - `message`: keeps `type, role, content, id, status, phase`; roles other than system, developer, user and
 *   assistant are left out; content parts from Chat or Anthropic become `input_text` / `output_text` /
 *   `input_image`, other parts are left out; a message left empty (or `''` marked `empty_content`) is left out;
 *   Chat-style `tool_calls` on it become `function_call` items after it.
 * - `function_call`: keeps `type, call_id, name, arguments, id, status` (`arguments` as JSON text).
 * - `function_call_output`: keeps `type, call_id, output, id, status` (an output that is neither string nor
 *   parts becomes JSON text). Dropped: `empty_content`, Anthropic's `is_error`, any other key.
 * - `reasoning`: only items the Responses API produced (id `rs_...`), with `type, id, summary (default []),
 *   content, encrypted_content, status`; reasoning from other providers (Chat `reasoning_content`, Anthropic
 *   thinking) cannot be sent back and is left out, as is a Tier-2 placeholder (`output`).
 * - `chat_message` / `anthropic_message` wrappers: left out. Any other type (hosted tool calls, ...): as stored.
 */
export const toResponsesInput = (items: readonly MemoryItem[]): Json[] =>
  items.flatMap((item): Json[] => {
    const record = item as Json;
    switch (item.type) {
      case 'message':
        return responsesMessage(record);
      case 'function_call': {
        const args = record['arguments'];
        return [
          {
            ...pick(record, ['type', 'call_id', 'name', 'id', 'status']),
            arguments: typeof args === 'string' ? args : (JSON.stringify(args ?? {}) ?? '{}'),
          },
        ];
      }
      case 'function_call_output':
        return [{ ...pick(record, ['type', 'call_id', 'id', 'status']), output: responsesOutput(record['output']) }];
      case 'reasoning': {
        const id = record['id'];
        if (typeof id !== 'string' || !id.startsWith('rs_')) return [];
        const summary = Array.isArray(record['summary']) ? record['summary'] : [];
        return [{ ...pick(record, ['type', 'id', 'encrypted_content', 'status']), summary, ...(Array.isArray(record['content']) ? { content: record['content'] } : {}) }];
      }
      case 'chat_message':
      case 'anthropic_message':
        return [];
      default:
        return [record];
    }
  });

/** A Responses answer's finish reason: why it is incomplete (`max_output_tokens`, `content_filter`) when it is, else its `status` (`completed`). */
const responsesFinishReason = (response: { readonly status?: unknown; readonly incomplete_details?: unknown }): string | undefined => {
  const reason = isRecord(response.incomplete_details) ? response.incomplete_details['reason'] : undefined;
  if (typeof reason === 'string' && reason !== '') return reason;
  return typeof response.status === 'string' && response.status !== '' ? response.status : undefined;
};

const outputTextOf = (output: readonly unknown[]): string =>
  output
    .flatMap((item) => (isRecord(item) && item['type'] === 'message' && Array.isArray(item['content']) ? item['content'] : []))
    .map((part: unknown) => (isRecord(part) && part['type'] === 'output_text' && typeof part['text'] === 'string' ? part['text'] : ''))
    .join('');

/** The Responses API body of a request (`create` sends it as is, the stream with `stream: true`). */
const responsesBody = (request: ModelRequest, options: OpenAiResponsesOptions): Record<string, unknown> => {
  const { tools: extraTools, ...params } = options.params ?? {};
  const tools = [...(request.tools ?? []).map((tool) => responsesTool(tool, options.strictTools ?? false)), ...(extraTools ?? [])];
  return {
    ...params,
    model: request.model,
    ...(request.systemPrompt ? { instructions: request.systemPrompt } : {}),
    input: toResponsesInput(request.items),
    ...(tools.length > 0 ? { tools } : {}),
  };
};

/**
 * A {@link ModelClient} over `client.responses.create`. `instructions` is the system prompt, `input` the
 * items as stored ({@link toResponsesInput} strips what the API would reject), function tools in the
 * Responses shape. The result items are `response.output` as the API wrote them (messages, function calls,
 * reasoning with their `rs_`/`fc_`/`msg_` ids); `outputText` is `response.output_text` (undefined when empty).
 * A response with `status: 'failed'` rejects with its error; HTTP errors and aborts reject with the SDK's error.
 * @example
 * import OpenAI from 'openai';
 * const model = openAiResponsesClient(new OpenAI(), { params: { reasoning: { effort: 'low' } } });
 * const result = await model.create({ model: 'o4-mini', systemPrompt: 'be brief', items: [userMessage('hi')] });
 */
export const openAiResponsesClient = (client: OpenAI, options: OpenAiResponsesOptions = {}): ModelClient => ({
  stream: (request, streamOptions) => streamOnCallSignal(streamOptions?.signal, (signal) => streamResponses(client, options, request, signal)),
  async create(request, { signal } = {}): Promise<ModelResult> {
    const body = responsesBody(request, options) as unknown as ResponsesParams;
    const response = await mapContextOverflow(() => withCallSignal(signal, (callSignal) => client.responses.create(body, withSignal(options.requestOptions, callSignal))));
    if (response.status === 'failed' && response.error && (response.error.code as string) === 'context_length_exceeded') {
      throw new ContextOverflowError(response.error.message, overflowTokensOf(response.error.message));
    }
    if (response.status === 'failed' && response.error) {
      throw new ProviderResponseError(
        'responses',
        response.id,
        `Responses API response ${response.id} failed: ${response.error.code}: ${response.error.message}`,
      );
    }
    const output = (response.output ?? []) as unknown as MemoryItem[];
    const text = typeof response.output_text === 'string' ? response.output_text : outputTextOf(output);
    const usage = mapUsage(response.usage, {
      input: 'input_tokens',
      output: 'output_tokens',
      total: 'total_tokens',
      cached: ['input_tokens_details', 'cached_tokens'],
    });
    const finishReason = responsesFinishReason(response);
    return { items: output, ...(text.length > 0 ? { outputText: text } : {}), ...(usage ? { usage } : {}), ...(finishReason !== undefined ? { finishReason } : {}) };
  },
});
/** Options of {@link openAiResponsesCompactor}. */
export interface OpenAiResponsesCompactorOptions {
  /** Extra parameters sent with every compaction: `prompt_cache_key`, `service_tier`, ... */
  readonly params?: Partial<Omit<OpenAI.Responses.ResponseCompactParams, 'model' | 'input' | 'instructions'>>;
  readonly requestOptions?: OpenAiRequestOptions;
}

/**
 * A {@link ProviderCompactor} over `client.responses.compact` (the `openai` SDK 6.x): the items go as Responses
 * `input` ({@link toResponsesInput}), the instructions as `instructions`; the response's `output` (the user messages,
 * then one `compaction` item with its `encrypted_content`) replaces them, sent back as stored by
 * {@link openAiResponsesClient}. Usage as `model.responded` records it; the response's other fields (id, created_at)
 * are kept for the record.
 * @example
 * const policy = new ProviderCompactPolicy(openAiResponsesCompactor(new OpenAI()), { model: 'gpt-5.4', compactAboveTokens: 100_000 });
 */
export const openAiResponsesCompactor = (client: OpenAI, options: OpenAiResponsesCompactorOptions = {}): ProviderCompactor => {
  // responses.compact came in openai 6.10.0; an older client would fail at the first compaction, deep in a run.
  if (typeof (client as { responses?: { compact?: unknown } } | undefined)?.responses?.compact !== 'function') {
    throw new InvalidOptionsError('openAiResponsesCompactor', [
      { path: 'client.responses.compact', message: 'is not a function: this openai client has no responses.compact (it came in openai 6.10.0); upgrade openai' },
    ]);
  }
  return openAiCompactorOf(client, options);
};

const openAiCompactorOf = (client: OpenAI, options: OpenAiResponsesCompactorOptions): ProviderCompactor => ({
  provider: 'openai-responses',
  async compact(request, { signal } = {}): Promise<ProviderCompaction> {
    const body = {
      ...options.params,
      model: request.model,
      input: toResponsesInput(request.items),
      ...(request.instructions !== undefined ? { instructions: request.instructions } : {}),
    } as unknown as OpenAI.Responses.ResponseCompactParams;
    const response = await mapContextOverflow(() => withCallSignal(signal, (callSignal) => client.responses.compact(body, withSignal(options.requestOptions, callSignal))));
    const { output, ...rest } = response as unknown as Json;
    const usage = mapUsage(rest['usage'], { input: 'input_tokens', output: 'output_tokens', total: 'total_tokens', cached: ['input_tokens_details', 'cached_tokens'] });
    return {
      items: Array.isArray(output) ? (output as MemoryItem[]) : [],
      ...(usage ? { usage: JSON.parse(JSON.stringify(usage)) as Record<string, unknown> } : {}),
      response: JSON.parse(JSON.stringify(rest)) as Record<string, unknown>,
    };
  },
});

export { ProviderResponseError, isProviderResponseError } from './errors.js';

// ---------------------------------------------------------------------------------------------
// Streaming: the same request with `stream: true`; the finish part carries what `create` would have returned.

interface ChatCallSoFar {
  id: string;
  name: string;
  arguments: string;
}

/**
 * `openAiChatCompletionsClient(...).stream`: Chat Completions with `stream: true` (and `stream_options.include_usage`
 * unless `params.stream_options` says otherwise). Content, `reasoning_content` and each call's argument chunks are
 * yielded as they arrive; the chunks are joined into the message a non-streamed answer has, which becomes the finish
 * part's result exactly as `create` maps it (`finishReason` is the chunk's `finish_reason`). A stream that ends before a
 * `finish_reason` rejects (ProviderResponseError); a context overflow, when the stream is opened or as an error chunk,
 * rejects with `ContextOverflowError` as `create` does. The caller's signal is followed through a signal of the call's
 * own, released when the stream ends, fails or is left early (`streamOnCallSignal`).
 */
const streamChatCompletions = async function* (
  client: OpenAI,
  options: OpenAiChatCompletionsOptions,
  request: ModelRequest,
  signal: AbortSignal | undefined,
): AsyncGenerator<ModelStreamPart> {
  // Usage in the last chunk unless the caller's params say otherwise.
  const body = { stream_options: { include_usage: true }, ...chatBody(request, options), stream: true } as unknown as OpenAI.ChatCompletionCreateParamsStreaming;
  const stream = await client.chat.completions.create(body, withSignal(options.requestOptions, signal));
  let id: string | undefined;
  let content: string | undefined;
  let reasoningText: string | undefined;
  let finishReason: string | undefined;
  let usage: unknown;
  const calls = new Map<number, ChatCallSoFar>();
  for await (const chunk of stream) {
    id ??= chunk.id;
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices?.find((c) => c.index === 0);
    if (!choice) continue;
    const delta = (choice.delta ?? {}) as Json;
    if (typeof delta['content'] === 'string' && delta['content'] !== '') {
      content = (content ?? '') + delta['content'];
      yield { type: 'text-delta', delta: delta['content'] };
    }
    if (typeof delta['reasoning_content'] === 'string' && delta['reasoning_content'] !== '') {
      reasoningText = (reasoningText ?? '') + delta['reasoning_content'];
      yield { type: 'reasoning-delta', delta: delta['reasoning_content'] };
    }
    for (const raw of Array.isArray(delta['tool_calls']) ? (delta['tool_calls'] as Json[]) : []) {
      const index = typeof raw['index'] === 'number' ? raw['index'] : calls.size;
      const fn = isRecord(raw['function']) ? raw['function'] : {};
      let call = calls.get(index);
      const isNew = call === undefined;
      if (!call) {
        call = { id: '', name: '', arguments: '' };
        calls.set(index, call);
      }
      if (typeof raw['id'] === 'string' && raw['id'] !== '') call.id = raw['id'];
      if (typeof fn['name'] === 'string') call.name += fn['name'];
      const argumentsDelta = typeof fn['arguments'] === 'string' ? fn['arguments'] : '';
      call.arguments += argumentsDelta;
      yield { type: 'tool-call-delta', callId: call.id, ...(isNew && call.name !== '' ? { name: call.name } : {}), argumentsDelta };
    }
    if (choice.finish_reason) finishReason = choice.finish_reason;
  }
  if (finishReason === undefined) {
    throw new ProviderResponseError('chat-completions', id, `Chat Completions stream ${id ?? '(no id)'} ended before the answer finished (no finish_reason)`);
  }
  const toolCalls = [...calls.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, call]) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }));
  const message: Json = {
    role: 'assistant',
    content: content ?? null,
    ...(reasoningText !== undefined ? { reasoning_content: reasoningText } : {}),
    ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
  };
  const items = prefixReasoningIds(fromChatCompletions([message as ChatMessage]), id);
  const outputText = chatText(message['content']);
  const mapped = mapUsage(usage, { input: 'prompt_tokens', output: 'completion_tokens', total: 'total_tokens', cached: ['prompt_tokens_details', 'cached_tokens'] });
  yield { type: 'finish', result: { items, ...(outputText !== undefined ? { outputText } : {}), ...(mapped ? { usage: mapped } : {}), finishReason } };
};

/**
 * `openAiResponsesClient(...).stream`: the Responses API with `stream: true`. Text, reasoning (summary or text) and
 * function-call argument deltas are yielded as they arrive; the finish part is `response.completed`'s (or
 * `response.incomplete`'s) response, mapped as `create` maps it. `response.failed`, an `error` event, or a stream that
 * ends before the response is complete reject (ProviderResponseError); a context overflow (a 400 when the stream is
 * opened, or `context_length_exceeded` in `response.failed` or an `error` event) rejects with `ContextOverflowError`.
 */
/** An error the openai SDK threw for an `error` event inside a stream: an APIError with no HTTP status. */
const isStreamErrorEvent = (error: unknown): error is Error & { readonly code?: string | null } =>
  error instanceof Error && error.constructor.name === 'APIError' && (error as { status?: unknown }).status === undefined;

const streamResponses = async function* (
  client: OpenAI,
  options: OpenAiResponsesOptions,
  request: ModelRequest,
  signal: AbortSignal | undefined,
): AsyncGenerator<ModelStreamPart> {
  const body = { ...responsesBody(request, options), stream: true } as unknown as OpenAI.Responses.ResponseCreateParamsStreaming;
  const stream = await client.responses.create(body, withSignal(options.requestOptions, signal));
  const callIdByItem = new Map<string, string>();
  let response: OpenAI.Responses.Response | undefined;
  let responseId: string | undefined;
  try {
    for await (const event of stream) {
      switch (event.type) {
        case 'response.created':
          responseId = event.response.id;
          break;
        case 'response.output_item.added':
          if (event.item.type === 'function_call') {
            if (event.item.id) callIdByItem.set(event.item.id, event.item.call_id);
            yield { type: 'tool-call-delta', callId: event.item.call_id, name: event.item.name, argumentsDelta: event.item.arguments ?? '' };
          }
          break;
        case 'response.output_text.delta':
          yield { type: 'text-delta', delta: event.delta };
          break;
        case 'response.reasoning_summary_text.delta':
        case 'response.reasoning_text.delta':
          yield { type: 'reasoning-delta', delta: event.delta };
          break;
        case 'response.function_call_arguments.delta':
          yield { type: 'tool-call-delta', callId: callIdByItem.get(event.item_id) ?? event.item_id, argumentsDelta: event.delta };
          break;
        case 'response.completed':
        case 'response.incomplete':
          response = event.response;
          break;
        case 'response.failed': {
          const error = event.response.error;
          throw (error ? contextOverflowFrom(error) : undefined) ?? new ProviderResponseError(
            'responses',
            event.response.id,
            `Responses API response ${event.response.id} failed: ${error ? `${error.code}: ${error.message}` : 'no error given'}`,
          );
        }
        case 'error':
          throw contextOverflowFrom(event) ?? new ProviderResponseError('responses', responseId, `Responses API stream error: ${event.code ?? 'error'}: ${event.message}`);
        default:
          break;
      }
    }
  } catch (error) {
    // openai 7.x throws a stream's `error` event itself, as an APIError without an HTTP status (6.x hands it over as
    // an event, above): the same ProviderResponseError either way (an overflow is mapped by streamOnCallSignal).
    if (isStreamErrorEvent(error) && !contextOverflowFrom(error)) {
      throw new ProviderResponseError('responses', responseId, `Responses API stream error: ${error.code ?? 'error'}: ${error.message}`, { cause: error });
    }
    throw error;
  }
  if (!response) throw new ProviderResponseError('responses', responseId, `Responses API stream ${responseId ?? '(no id)'} ended before the response completed`);
  const output = (response.output ?? []) as unknown as MemoryItem[];
  const text = typeof response.output_text === 'string' ? response.output_text : outputTextOf(output);
  const usage = mapUsage(response.usage, { input: 'input_tokens', output: 'output_tokens', total: 'total_tokens', cached: ['input_tokens_details', 'cached_tokens'] });
  const finishReason = responsesFinishReason(response);
  yield { type: 'finish', result: { items: output, ...(text.length > 0 ? { outputText: text } : {}), ...(usage ? { usage } : {}), ...(finishReason !== undefined ? { finishReason } : {}) } };
};
