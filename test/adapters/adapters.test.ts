// The SDK adapters for real: the official `openai` and `@anthropic-ai/sdk` clients against a fake provider on 127.0.0.1.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import ts from 'typescript';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { functionCall, functionCallOutput, systemMessage, userMessage } from '../../src/items/index.js';
import type { MemoryItem } from '../../src/items/index.js';
import type { ModelClient, ModelRequest, ToolSpec } from '../../src/model/index.js';
import {
  anthropicMessagesClient,
  openAiChatCompletionsClient,
  openAiResponsesClient,
  toResponsesInput,
} from '../../src/adapters/index.js';

// ---------------------------------------------------------------------------------------------
// A fake provider: records every request, answers from a script.

interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Record<string, unknown>;
}

/** An answer: a status and a JSON body, or `'hang'` (never answers; the abort test ends it). */
type Reply = { readonly status?: number; readonly body: unknown } | 'hang';

interface FakeProvider {
  readonly baseURL: string;
  readonly requests: RecordedRequest[];
  reply(...replies: Reply[]): void;
  /** Resolves when the server has received `count` requests in all. */
  received(count: number): Promise<void>;
  close(): Promise<void>;
}

const startFakeProvider = async (): Promise<FakeProvider> => {
  const requests: RecordedRequest[] = [];
  const replies: Reply[] = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const hanging: ServerResponse[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      requests.push({
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: text.length > 0 ? (JSON.parse(text) as Record<string, unknown>) : {},
      });
      for (const waiter of waiters.filter((w) => requests.length >= w.count)) waiter.resolve();
      const reply = replies.shift() ?? { status: 500, body: { error: { message: 'fake provider: no reply scripted' } } };
      if (reply === 'hang') {
        hanging.push(res);
        return;
      }
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}`,
    requests,
    reply: (...more) => void replies.push(...more),
    received: (count) =>
      requests.length >= count ? Promise.resolve() : new Promise((resolve) => waiters.push({ count, resolve })),
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
};

let provider: FakeProvider;
beforeEach(async () => {
  provider = await startFakeProvider();
});
afterEach(async () => {
  await provider.close();
});

const openAiSdk = (): OpenAI => new OpenAI({ baseURL: provider.baseURL, apiKey: 'test-key', maxRetries: 0 });
const anthropicSdk = (): Anthropic => new Anthropic({ baseURL: provider.baseURL, apiKey: 'test-key', maxRetries: 0 });

// ---------------------------------------------------------------------------------------------
// The conversation every provider plays: the model asks for `bash`, gets its output, answers.

const bashParameters = {
  type: 'object',
  properties: { command: { type: 'string', description: 'The command line' } },
  required: ['command'],
  additionalProperties: false,
};
const bashTool: ToolSpec = { type: 'function', name: 'bash', description: 'Run a shell command', parameters: bashParameters };
const question = userMessage('What is in /tmp?');
const listing = 'a.txt\nb.txt';

const firstTurn = (model: string, items: readonly MemoryItem[] = [question]): ModelRequest => ({
  model,
  systemPrompt: 'You are terse.',
  items,
  tools: [bashTool],
});

// ---------------------------------------------------------------------------------------------

describe('openAiChatCompletionsClient', () => {
  const completion = (id: string, message: Record<string, unknown>, usage: Record<string, unknown>) => ({
    id,
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'gpt-test',
    choices: [{ index: 0, message, logprobs: null, finish_reason: message['tool_calls'] ? 'tool_calls' : 'stop' }],
    usage,
  });

  it('runs a tool-call turn and a final turn through the SDK', async () => {
    provider.reply(
      {
        body: completion(
          'chatcmpl-1',
          {
            role: 'assistant',
            content: null,
            refusal: null,
            annotations: [],
            tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'bash', arguments: '{"command":"ls /tmp"}' } }],
          },
          { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60, prompt_tokens_details: { cached_tokens: 0 } },
        ),
      },
      {
        body: completion(
          'chatcmpl-2',
          {
            role: 'assistant',
            content: 'Two files: a.txt and b.txt.',
            reasoning_content: 'The listing shows two files.',
            refusal: null,
            annotations: [],
          },
          { prompt_tokens: 80, completion_tokens: 12, total_tokens: 92, prompt_tokens_details: { cached_tokens: 64 } },
        ),
      },
    );
    const model = openAiChatCompletionsClient(openAiSdk(), { params: { temperature: 0, max_completion_tokens: 256 } });

    const first = await model.create(firstTurn('gpt-test'));
    const [sent1] = provider.requests;
    expect(sent1?.method).toBe('POST');
    expect(sent1?.path).toBe('/chat/completions');
    expect(sent1?.headers['authorization']).toBe('Bearer test-key');
    expect(sent1?.body).toEqual({
      model: 'gpt-test',
      temperature: 0,
      max_completion_tokens: 256,
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'What is in /tmp?' },
      ],
      tools: [{ type: 'function', function: { name: 'bash', description: 'Run a shell command', parameters: bashParameters } }],
    });
    // `content: null`, `refusal: null` and `annotations: []` leave no empty message item behind.
    expect(first.items).toEqual([functionCall('call_1', 'bash', '{"command":"ls /tmp"}')]);
    expect(first.outputText).toBeUndefined();
    expect(first.usage).toEqual({
      inputTokens: 50,
      outputTokens: 10,
      totalTokens: 60,
      cachedInputTokens: 0,
      raw: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60, prompt_tokens_details: { cached_tokens: 0 } },
    });

    const second = await model.create(firstTurn('gpt-test', [question, ...first.items, functionCallOutput('call_1', listing)]));
    expect(provider.requests[1]?.body['messages']).toEqual([
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'What is in /tmp?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'bash', arguments: '{"command":"ls /tmp"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: listing },
    ]);
    expect(second.items).toEqual([
      { type: 'reasoning', id: 'reasoning_chatcmpl-2_0', content: [{ type: 'reasoning_text', text: 'The listing shows two files.' }] },
      { type: 'message', role: 'assistant', content: 'Two files: a.txt and b.txt.' },
    ]);
    expect(second.outputText).toBe('Two files: a.txt and b.txt.');
    // The provider's prompt-cache reads under a stable name; `inputTokens` still counts the whole prompt.
    expect(second.usage).toMatchObject({ inputTokens: 80, outputTokens: 12, totalTokens: 92, cachedInputTokens: 64 });
    expect(second.usage).not.toHaveProperty('cacheWriteTokens');
  });

  it('sends reasoning back as reasoning_content, or leaves it out; the system prompt can be a developer message', async () => {
    const answer = { body: completion('chatcmpl-3', { role: 'assistant', content: 'ok' }, { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }) };
    provider.reply(answer, answer);
    const items: MemoryItem[] = [
      question,
      { type: 'reasoning', id: 'r1', content: [{ type: 'reasoning_text', text: 'think' }] },
      functionCall('call_1', 'bash', { command: 'ls' }),
      functionCallOutput('call_1', listing),
    ];
    await openAiChatCompletionsClient(openAiSdk()).create({ model: 'm', items });
    await openAiChatCompletionsClient(openAiSdk(), { reasoning: 'omit', systemRole: 'developer' }).create({
      model: 'm',
      systemPrompt: 'sys',
      items,
    });
    const call = { id: 'call_1', type: 'function', function: { name: 'bash', arguments: '{"command":"ls"}' } };
    expect(provider.requests[0]?.body).toEqual({
      model: 'm',
      messages: [
        { role: 'user', content: 'What is in /tmp?' },
        { role: 'assistant', content: null, reasoning_content: 'think', tool_calls: [call] },
        { role: 'tool', tool_call_id: 'call_1', content: listing },
      ],
    });
    expect(provider.requests[1]?.body['messages']).toEqual([
      { role: 'developer', content: 'sys' },
      { role: 'user', content: 'What is in /tmp?' },
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: 'call_1', content: listing },
    ]);
  });
});

// ---------------------------------------------------------------------------------------------

describe('openAiResponsesClient', () => {
  const response = (id: string, output: unknown[], usage: Record<string, unknown>) => ({
    id,
    object: 'response',
    created_at: 1_700_000_000,
    status: 'completed',
    error: null,
    incomplete_details: null,
    instructions: 'You are terse.',
    model: 'gpt-test',
    output,
    parallel_tool_calls: true,
    temperature: 0,
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
    usage,
  });
  const reasoningOut = { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'List the directory.' }] };
  const callOut = {
    type: 'function_call',
    id: 'fc_1',
    call_id: 'call_1',
    name: 'bash',
    arguments: '{"command":"ls /tmp"}',
    status: 'completed',
  };
  const messageOut = {
    type: 'message',
    id: 'msg_1',
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text: 'Two files: a.txt and b.txt.', annotations: [] }],
  };
  const usage = {
    input_tokens: 40,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 12,
    output_tokens_details: { reasoning_tokens: 5 },
    total_tokens: 52,
  };

  it('runs a tool-call turn and a final turn through the SDK, sending the items as stored', async () => {
    // The server sends no `output_text`: the SDK derives it, as it does for the real API.
    provider.reply({ body: response('resp_1', [reasoningOut, callOut], usage) }, { body: response('resp_2', [messageOut], usage) });
    const model = openAiResponsesClient(openAiSdk(), { params: { temperature: 0, max_output_tokens: 256 } });

    const first = await model.create(firstTurn('gpt-test'));
    const [sent1] = provider.requests;
    expect(sent1?.path).toBe('/responses');
    expect(sent1?.headers['authorization']).toBe('Bearer test-key');
    expect(sent1?.body).toEqual({
      model: 'gpt-test',
      temperature: 0,
      max_output_tokens: 256,
      instructions: 'You are terse.',
      input: [{ type: 'message', role: 'user', content: 'What is in /tmp?' }],
      tools: [{ type: 'function', name: 'bash', description: 'Run a shell command', parameters: bashParameters, strict: false }],
    });
    expect(first.items).toEqual([reasoningOut, callOut]);
    expect(first.outputText).toBeUndefined();
    expect(first.usage).toEqual({ inputTokens: 40, outputTokens: 12, totalTokens: 52, cachedInputTokens: 0, raw: usage });

    const second = await model.create(firstTurn('gpt-test', [question, ...first.items, functionCallOutput('call_1', listing)]));
    expect(provider.requests[1]?.body['input']).toEqual([
      { type: 'message', role: 'user', content: 'What is in /tmp?' },
      reasoningOut,
      callOut,
      { type: 'function_call_output', call_id: 'call_1', output: listing },
    ]);
    expect(second.items).toEqual([messageOut]);
    expect(second.outputText).toBe('Two files: a.txt and b.txt.');
    expect(second.usage).toMatchObject({ inputTokens: 40, cachedInputTokens: 0 });
  });

  it('records the cached part of the input as cachedInputTokens', async () => {
    const cached = { ...usage, input_tokens: 2048, input_tokens_details: { cached_tokens: 1920 }, total_tokens: 2060 };
    provider.reply({ body: response('resp_c', [messageOut], cached) });
    const model = openAiResponsesClient(openAiSdk());
    const result = await model.create(firstTurn('gpt-test'));
    expect(result.usage).toEqual({ inputTokens: 2048, outputTokens: 12, totalTokens: 2060, cachedInputTokens: 1920, raw: cached });
  });

  it('sends items from other providers in the shape the Responses API takes', async () => {
    provider.reply({ body: response('resp_3', [messageOut], usage) });
    const items: MemoryItem[] = [
      systemMessage('Summary: earlier work'),
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: 'https://x/y.png' } },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0' } },
        ],
      },
      // From Chat Completions: reasoning_content, a null-content assistant message with a call, a tool message.
      { type: 'reasoning', id: 'reasoning_chatcmpl-1_0', content: [{ type: 'reasoning_text', text: 'hmm' }] },
      { type: 'message', role: 'assistant', content: '', empty_content: 'null', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: '{}' } }] },
      { type: 'function_call_output', call_id: 'c1', output: '', empty_content: 'omitted' },
      // From Anthropic: thinking with a signature, a call with `caller`, a result with `is_error`.
      { type: 'reasoning', id: 'reasoning_msg_1_0_0', content: [{ type: 'reasoning_text', text: 'x' }], signature: 'sig' },
      { type: 'message', role: 'assistant', content: [{ type: 'text', text: 'Running it.' }] },
      { ...functionCall('t1', 'bash', { command: 'false' }), caller: { type: 'direct' } },
      { ...functionCallOutput('t1', 'exit 1'), is_error: true },
      { type: 'message', role: 'tool', content: 'orphan' },
      { type: 'chat_message', message: { role: 'exit', content: 'bye' } },
      // A Tier-2 trimmed Responses reasoning item, and a hosted tool call, as stored.
      { type: 'reasoning', id: 'rs_9', output: '[reasoning cleared]' },
      { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'q' } },
    ];
    await openAiResponsesClient(openAiSdk()).create({ model: 'gpt-test', items });
    const expected = [
      { type: 'message', role: 'system', content: 'Summary: earlier work' },
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'look' },
          { type: 'input_image', image_url: 'https://x/y.png', detail: 'auto' },
          { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0', detail: 'auto' },
        ],
      },
      { type: 'function_call', call_id: 'c1', name: 'bash', arguments: '{}' },
      { type: 'function_call_output', call_id: 'c1', output: '' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Running it.', annotations: [] }] },
      { type: 'function_call', call_id: 't1', name: 'bash', arguments: '{"command":"false"}' },
      { type: 'function_call_output', call_id: 't1', output: 'exit 1' },
      { type: 'reasoning', id: 'rs_9', summary: [] },
      { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'q' } },
    ];
    expect(toResponsesInput(items)).toEqual(expected);
    expect(provider.requests[0]?.body).toEqual({ model: 'gpt-test', input: expected });
  });

  it('rejects a response whose status is failed', async () => {
    provider.reply({
      body: { ...response('resp_4', [], usage), status: 'failed', error: { code: 'server_error', message: 'boom' } },
    });
    await expect(openAiResponsesClient(openAiSdk()).create({ model: 'gpt-test', items: [question] })).rejects.toThrow(
      /resp_4 failed: server_error: boom/,
    );
  });
});

// ---------------------------------------------------------------------------------------------

describe('anthropicMessagesClient', () => {
  const message = (id: string, content: unknown[], usage: Record<string, unknown>) => ({
    id,
    type: 'message',
    role: 'assistant',
    model: 'claude-test',
    content,
    stop_reason: content.some((block) => (block as { type: string }).type === 'tool_use') ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage,
  });
  const usage1 = {
    input_tokens: 30,
    output_tokens: 20,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 100,
    service_tier: 'standard',
  };

  it('runs a tool-call turn and a final turn through the SDK', async () => {
    provider.reply(
      {
        body: message(
          'msg_01',
          [
            { type: 'thinking', thinking: 'I should list the directory.', signature: 'sig-1' },
            { type: 'text', text: 'Let me look.', citations: null },
            { type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'ls /tmp' }, caller: { type: 'direct' } },
          ],
          usage1,
        ),
      },
      {
        body: message(
          'msg_02',
          [
            { type: 'text', text: 'Two files: ', citations: null },
            { type: 'text', text: 'a.txt and b.txt.', citations: null },
          ],
          { input_tokens: 200, output_tokens: 9 },
        ),
      },
    );
    const model = anthropicMessagesClient(anthropicSdk(), { maxTokens: 1024, params: { stop_sequences: ['</done>'] } });
    const summary = systemMessage('Summary: earlier work');

    const first = await model.create(firstTurn('claude-test', [summary, question]));
    const [sent1] = provider.requests;
    expect(sent1?.method).toBe('POST');
    expect(sent1?.path).toBe('/v1/messages');
    expect(sent1?.headers['authorization']).toBe('Bearer test-key');
    expect(sent1?.headers['anthropic-version']).toBeTypeOf('string');
    expect(sent1?.body).toEqual({
      model: 'claude-test',
      max_tokens: 1024,
      stop_sequences: ['</done>'],
      // The request's system prompt first, then the system messages of the items.
      system: [
        { type: 'text', text: 'You are terse.' },
        { type: 'text', text: 'Summary: earlier work' },
      ],
      messages: [{ role: 'user', content: 'What is in /tmp?' }],
      tools: [{ name: 'bash', description: 'Run a shell command', input_schema: bashParameters }],
    });
    expect(first.items).toEqual([
      {
        type: 'reasoning',
        id: 'reasoning_msg_01_0_0',
        content: [{ type: 'reasoning_text', text: 'I should list the directory.' }],
        signature: 'sig-1',
      },
      { type: 'message', role: 'assistant', content: [{ type: 'text', text: 'Let me look.' }] },
      { ...functionCall('toolu_1', 'bash', '{"command":"ls /tmp"}'), caller: { type: 'direct' } },
    ]);
    expect(first.outputText).toBe('Let me look.');
    // Anthropic counts cache reads and writes apart from input_tokens; inputTokens is the whole prompt.
    expect(first.usage).toEqual({ inputTokens: 130, outputTokens: 20, totalTokens: 150, cachedInputTokens: 100, cacheWriteTokens: 0, raw: usage1 });

    const second = await model.create(
      firstTurn('claude-test', [summary, question, ...first.items, functionCallOutput('toolu_1', listing)]),
    );
    expect(provider.requests[1]?.body['messages']).toEqual([
      { role: 'user', content: 'What is in /tmp?' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'I should list the directory.', signature: 'sig-1' },
          { type: 'text', text: 'Let me look.' },
          { type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'ls /tmp' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: listing }] },
    ]);
    expect(second.items).toEqual([
      {
        type: 'message',
        role: 'assistant',
        content: [
          { type: 'text', text: 'Two files: ' },
          { type: 'text', text: 'a.txt and b.txt.' },
        ],
      },
    ]);
    expect(second.outputText).toBe('Two files: a.txt and b.txt.');
    expect(second.usage).toEqual({ inputTokens: 200, outputTokens: 9, totalTokens: 209, raw: { input_tokens: 200, output_tokens: 9 } });
  });

  it('leaves out thinking with reasoning: omit, and sends a lone system prompt as a string', async () => {
    provider.reply({ body: message('msg_03', [{ type: 'text', text: 'ok', citations: null }], { input_tokens: 1, output_tokens: 1 }) });
    const items: MemoryItem[] = [
      question,
      { type: 'reasoning', id: 'r', content: [{ type: 'reasoning_text', text: 't' }], signature: 's' },
      functionCall('toolu_1', 'bash', { command: 'ls' }),
      functionCallOutput('toolu_1', listing),
    ];
    await anthropicMessagesClient(anthropicSdk(), { maxTokens: 64, reasoning: 'omit' }).create({
      model: 'claude-test',
      systemPrompt: 'sys',
      items,
    });
    expect(provider.requests[0]?.body).toEqual({
      model: 'claude-test',
      max_tokens: 64,
      system: 'sys',
      messages: [
        { role: 'user', content: 'What is in /tmp?' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'ls' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: listing }] },
      ],
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Aborts and provider errors, for every adapter: the promise rejects with the SDK's own error.

interface AdapterCase {
  readonly name: string;
  readonly path: string;
  readonly model: () => ModelClient;
  readonly abortError: new (...args: never[]) => Error;
  readonly apiError: new (...args: never[]) => Error;
  readonly errorBody: (message: string) => unknown;
}

const openAiError = (message: string) => ({ error: { message, type: 'invalid_request_error', param: null, code: null } });
const anthropicError = (message: string) => ({ type: 'error', error: { type: 'invalid_request_error', message } });

const cases: AdapterCase[] = [
  {
    name: 'openAiChatCompletionsClient',
    path: '/chat/completions',
    model: () => openAiChatCompletionsClient(openAiSdk()),
    abortError: OpenAI.APIUserAbortError,
    apiError: OpenAI.APIError,
    errorBody: openAiError,
  },
  {
    name: 'openAiResponsesClient',
    path: '/responses',
    model: () => openAiResponsesClient(openAiSdk()),
    abortError: OpenAI.APIUserAbortError,
    apiError: OpenAI.APIError,
    errorBody: openAiError,
  },
  {
    name: 'anthropicMessagesClient',
    path: '/v1/messages',
    model: () => anthropicMessagesClient(anthropicSdk(), { maxTokens: 256 }),
    abortError: Anthropic.APIUserAbortError,
    apiError: Anthropic.APIError,
    errorBody: anthropicError,
  },
];

describe.each(cases)('$name: aborts and errors', ({ path, model, abortError, apiError, errorBody }) => {
  const request: ModelRequest = { model: 'm', systemPrompt: 'sys', items: [question], tools: [bashTool] };

  it('rejects with the SDK abort error when the signal aborts a request in flight', async () => {
    provider.reply('hang');
    const controller = new AbortController();
    const pending = model().create(request, { signal: controller.signal });
    await provider.received(1);
    expect(provider.requests[0]?.path).toBe(path);
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(abortError);
  });

  it('sends nothing when the signal is already aborted', async () => {
    await expect(model().create(request, { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(abortError);
    expect(provider.requests).toHaveLength(0);
  });

  it('rejects with the SDK error on HTTP 500, without retrying (maxRetries: 0)', async () => {
    provider.reply({ status: 500, body: errorBody('the server broke') });
    const error: unknown = await model().create(request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(apiError);
    expect(error).toMatchObject({ status: 500 });
    expect(String((error as Error).message)).toContain('the server broke');
    expect(provider.requests).toHaveLength(1);
  });

  it('rejects with the SDK error on HTTP 400', async () => {
    provider.reply({ status: 400, body: errorBody('messages: invalid request') });
    const error: unknown = await model().create(request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(apiError);
    expect(error).toMatchObject({ status: 400 });
    expect(String((error as Error).message)).toContain('messages: invalid request');
  });
});

describe('adapter modules', () => {
  it('import the SDKs for their types only, so the package runs without them', () => {
    for (const file of ['openai.ts', 'anthropic.ts', 'shared.ts', 'index.ts']) {
      const source = readFileSync(new URL(`../../src/adapters/${file}`, import.meta.url), 'utf8');
      const { outputText } = ts.transpileModule(source, {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true, removeComments: true },
      });
      expect(outputText, file).not.toMatch(/['"](openai|@anthropic-ai\/sdk)['"/]/);
      if (file === 'openai.ts' || file === 'anthropic.ts') expect(outputText).toContain("from '../providers/index.js'");
    }
  });
});

describe('prompt-cache usage', () => {
  it('anthropicMessagesClient records cache reads and writes as cachedInputTokens and cacheWriteTokens', async () => {
    const usage = { input_tokens: 12, output_tokens: 7, cache_creation_input_tokens: 1500, cache_read_input_tokens: 3000 };
    provider.reply({
      body: {
        id: 'msg_c',
        type: 'message',
        role: 'assistant',
        model: 'claude-test',
        content: [{ type: 'text', text: 'ok', citations: null }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage,
      },
    });
    const result = await anthropicMessagesClient(anthropicSdk(), { maxTokens: 64 }).create(firstTurn('claude-test'));
    // inputTokens is the whole prompt: uncached input plus the cache's reads and writes.
    expect(result.usage).toEqual({ inputTokens: 4512, outputTokens: 7, totalTokens: 4519, cachedInputTokens: 3000, cacheWriteTokens: 1500, raw: usage });
  });
});
