// The streaming adapters map a provider's context overflow as `create` does (when the stream is opened, or as an error
// event inside it), so a streamed run recovers; they record the provider's finish reason. Real SDKs on loopback.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  Agents,
  FactSummaryCompactPolicy,
  assistantMessage,
  isContextOverflowError,
  isProviderResponseError,
  openMemoryLog,
  replaySession,
  userMessage,
  type ModelClient,
  type ModelStreamPart,
  type SessionEvent,
} from '../../src/index.js';
import { anthropicMessagesClient, openAiChatCompletionsClient, openAiResponsesClient } from '../../src/adapters/index.js';
import { checkSessionLaws } from '../../src/testing/index.js';

type Frame = readonly [string | null, unknown];
type Reply = { readonly status: number; readonly body: unknown } | { readonly frames: readonly Frame[] };

let server: Server;
let baseURL = '';
let replies: Reply[] = [];
const bodies: Record<string, unknown>[] = [];

const send = (reply: Reply, res: ServerResponse): void => {
  if ('frames' in reply) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const [event, data] of reply.frames) res.write(`${event !== null ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
    res.end();
    return;
  }
  res.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify(reply.body));
};

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>);
      send(replies.shift() ?? { status: 500, body: { error: { message: 'no reply scripted' } } }, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  replies = [];
  bodies.length = 0;
});

// The providers' real overflow bodies (as in context-overflow.test.ts).
const CHAT_OVERFLOW = {
  message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens. Please reduce the length of the messages.",
  type: 'invalid_request_error',
  param: 'messages',
  code: 'context_length_exceeded',
};
const RESPONSES_OVERFLOW = { message: 'Your input exceeds the context window of this model. Please adjust your input and try again.', type: 'invalid_request_error', param: 'input', code: 'context_length_exceeded' };
const ANTHROPIC_OVERFLOW = { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 208310 tokens > 200000 maximum' } };

const chatChunk = (delta: unknown, finish: string | null = null): Frame => [null, { id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] }];
const chatFrames = (text: string, finish = 'stop', usage: Record<string, unknown> = { prompt_tokens: 50, completion_tokens: 1, total_tokens: 51 }): Frame[] => [
  chatChunk({ role: 'assistant', content: '' }),
  chatChunk({ content: text }),
  chatChunk({}, finish),
  [null, { id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage }],
  [null, '[DONE]'],
];

const responseOf = (status: string, text: string, extra: Record<string, unknown> = {}) => ({
  id: 'resp_s',
  object: 'response',
  created_at: 1,
  status,
  model: 'm',
  error: null,
  incomplete_details: null,
  output: status === 'in_progress' ? [] : [{ type: 'message', id: 'msg_s', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] }],
  usage: { input_tokens: 50, output_tokens: 1, total_tokens: 51, input_tokens_details: { cached_tokens: 32 } },
  ...extra,
});
const responsesFrames = (text: string, end: Frame): Frame[] => {
  let seq = 0;
  const ev = (type: string, data: Record<string, unknown>): Frame => [type, { type, sequence_number: seq++, ...data }];
  return [
    ev('response.created', { response: responseOf('in_progress', text) }),
    ev('response.output_text.delta', { item_id: 'msg_s', output_index: 0, content_index: 0, delta: text, logprobs: [] }),
    [end[0], { sequence_number: seq++, ...(end[1] as Record<string, unknown>) }],
  ];
};
const responsesDone = (text: string): Frame[] => responsesFrames(text, ['response.completed', { type: 'response.completed', response: responseOf('completed', text) }]);

const anthropicFrames = (text: string, stopReason = 'end_turn'): Frame[] => {
  const ev = (type: string, data: Record<string, unknown>): Frame => [type, { type, ...data }];
  return [
    ev('message_start', { message: { id: 'msg_s', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 50, output_tokens: 1 } } }),
    ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text } }),
    ev('content_block_stop', { index: 0 }),
    ev('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 1 } }),
    ev('message_stop', {}),
  ];
};

interface Provider {
  readonly name: string;
  readonly client: () => ModelClient;
  /** The 400 a provider answers a streamed request with when it is too long. */
  readonly openOverflow: Reply;
  /** Overflows reported inside a stream that opened with 200. */
  readonly inStreamOverflows: readonly { readonly name: string; readonly reply: Reply }[];
  readonly tokens: { requestTokens?: number; limitTokens?: number };
  readonly answer: (text: string) => Reply;
  readonly finishReason: string;
}

const providers: Provider[] = [
  {
    name: 'Chat Completions',
    client: () => openAiChatCompletionsClient(new OpenAI({ apiKey: 'k', baseURL, maxRetries: 0 })),
    openOverflow: { status: 400, body: { error: CHAT_OVERFLOW } },
    // An error chunk in the stream (what OpenAI-compatible servers send when the check happens after the headers).
    inStreamOverflows: [{ name: 'an error chunk', reply: { frames: [[null, { error: CHAT_OVERFLOW }]] } }],
    tokens: { requestTokens: 130532, limitTokens: 128000 },
    answer: (text) => ({ frames: chatFrames(text) }),
    finishReason: 'stop',
  },
  {
    name: 'Responses',
    client: () => openAiResponsesClient(new OpenAI({ apiKey: 'k', baseURL, maxRetries: 0 })),
    openOverflow: { status: 400, body: { error: RESPONSES_OVERFLOW } },
    inStreamOverflows: [
      { name: 'an error event', reply: { frames: [['error', { type: 'error', sequence_number: 0, code: RESPONSES_OVERFLOW.code, message: RESPONSES_OVERFLOW.message, param: null }]] } },
      {
        name: 'response.failed',
        reply: { frames: responsesFrames('', ['response.failed', { type: 'response.failed', response: responseOf('failed', '', { output: [], error: { code: 'context_length_exceeded', message: RESPONSES_OVERFLOW.message } }) }]) },
      },
    ],
    tokens: {},
    answer: (text) => ({ frames: responsesDone(text) }),
    finishReason: 'completed',
  },
  {
    name: 'Anthropic Messages',
    client: () => anthropicMessagesClient(new Anthropic({ apiKey: 'k', baseURL, maxRetries: 0 }), { maxTokens: 100 }),
    openOverflow: { status: 400, body: ANTHROPIC_OVERFLOW },
    inStreamOverflows: [{ name: 'an error event', reply: { frames: [['message_start', { type: 'message_start', message: { id: 'msg_s', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: null, usage: { input_tokens: 1, output_tokens: 0 } } }], ['error', ANTHROPIC_OVERFLOW]] } }],
    tokens: { requestTokens: 208310, limitTokens: 200000 },
    answer: (text) => ({ frames: anthropicFrames(text) }),
    finishReason: 'end_turn',
  },
];

const drain = async (parts: AsyncIterable<ModelStreamPart>): Promise<ModelStreamPart[]> => {
  const out: ModelStreamPart[] = [];
  for await (const part of parts) out.push(part);
  return out;
};

const readAll = async (log: Awaited<ReturnType<typeof openMemoryLog>>, id: string): Promise<SessionEvent[]> => {
  const out: SessionEvent[] = [];
  for await (const e of log.read(id)) out.push(e);
  return out;
};

const history = (n: number) => Array.from({ length: n }, (_, i) => (i % 2 === 0 ? userMessage(`request ${i} ${'x'.repeat(200)}`) : assistantMessage(`answer ${i}`)));

describe.each(providers)('$name stream()', (provider) => {
  it('maps the 400 overflow when the stream is opened to ContextOverflowError, as create() does', async () => {
    replies.push(provider.openOverflow);
    const error = await drain(provider.client().stream!({ model: 'm', items: [userMessage('hi')] })).catch((e: unknown) => e);
    expect(isContextOverflowError(error)).toBe(true);
    expect(error).toMatchObject({ code: 'CONTEXT_OVERFLOW', ...provider.tokens });
    expect(bodies[0]).toMatchObject({ stream: true });
    replies.push(provider.openOverflow);
    const created = await provider.client().create({ model: 'm', items: [userMessage('hi')] }).catch((e: unknown) => e);
    expect(created).toMatchObject({ code: 'CONTEXT_OVERFLOW', ...provider.tokens });
  });

  for (const { name, reply } of provider.inStreamOverflows) {
    it(`maps an overflow reported inside the stream (${name}) to ContextOverflowError`, async () => {
      replies.push(reply);
      const error = await drain(provider.client().stream!({ model: 'm', items: [userMessage('hi')] })).catch((e: unknown) => e);
      expect(isContextOverflowError(error)).toBe(true);
      expect(error).toMatchObject(provider.tokens);
    });
  }

  it('another error event stays a provider error, not an overflow', async () => {
    const other =
      provider.name === 'Chat Completions'
        ? { frames: [[null, { error: { message: 'The server had an error', type: 'server_error', code: null } }]] as Frame[] }
        : provider.name === 'Responses'
          ? { frames: [['error', { type: 'error', sequence_number: 0, code: 'server_error', message: 'The server had an error', param: null }]] as Frame[] }
          : { frames: [['error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }]] as Frame[] };
    replies.push(other);
    const error = await drain(provider.client().stream!({ model: 'm', items: [userMessage('hi')] })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(isContextOverflowError(error)).toBe(false);
    if (provider.name === 'Responses') expect(isProviderResponseError(error)).toBe(true);
  });

  it('a streamed run (onDelta) recovers from an overflow, at the opening and inside the stream: model.failed, an overflow compaction, a retry; replay is identical', async () => {
    for (const first of [provider.openOverflow, ...provider.inStreamOverflows.map((o) => o.reply)]) {
      replies = [first, provider.answer('recovered')];
      const log = await openMemoryLog();
      let n = 0;
      const agent = Agents.react({ modelClient: provider.client(), model: 'm', log, ids: () => `id-${++n}`, compactPolicy: new FactSummaryCompactPolicy({ maxItems: 2, compactAbove: 1000 }) });
      const session = await agent.newSession();
      await session.session.memory.record([{ type: 'user.input', items: history(6) }]);
      const deltas: string[] = [];
      const result = await session.run('go on', { onDelta: (d) => void (d.type === 'text-delta' && deltas.push(d.delta)) });
      expect(result.outputText).toBe('recovered');
      expect(deltas.join('')).toBe('recovered');
      const events = await readAll(log, session.id);
      expect(events.find((e) => e.type === 'model.failed')).toMatchObject({ reason: 'context-overflow', ...provider.tokens });
      expect(events.find((e) => e.type === 'memory.compacted')).toMatchObject({ reason: { kind: 'overflow' } });
      expect(events.find((e) => e.type === 'model.responded')).toMatchObject({ finishReason: provider.finishReason });
      expect(events.at(-1)).toMatchObject({ type: 'run.finished' });
      expect(checkSessionLaws(events)).toEqual([]);
      for (const mode of ['project', 'rerun'] as const) expect((await replaySession(log, session.id, { mode })).identical).toBe(true);
    }
  });
});

describe('finish reasons and cache figures of streamed answers', () => {
  it('Chat Completions: finish_reason length is recorded as length (stream and create), with the cached prompt tokens', async () => {
    const usage = { prompt_tokens: 50, completion_tokens: 9, total_tokens: 59, prompt_tokens_details: { cached_tokens: 32 } };
    replies.push({ frames: chatFrames('cut of', 'length', usage) });
    const parts = await drain(openAiChatCompletionsClient(new OpenAI({ apiKey: 'k', baseURL, maxRetries: 0 })).stream!({ model: 'm', items: [userMessage('hi')] }));
    const finish = parts.at(-1) as Extract<ModelStreamPart, { type: 'finish' }>;
    replies.push({
      status: 200,
      body: { id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'cut of' }, finish_reason: 'length' }], usage },
    });
    const created = await openAiChatCompletionsClient(new OpenAI({ apiKey: 'k', baseURL, maxRetries: 0 })).create({ model: 'm', items: [userMessage('hi')] });
    expect(finish.result).toMatchObject({ finishReason: 'length', usage: { cachedInputTokens: 32 } });
    expect(finish.result).toEqual({ ...created, items: finish.result.items });
  });

  it('Responses: an incomplete response gives its reason (max_output_tokens), a complete one its status', async () => {
    const incomplete = responseOf('incomplete', 'cut of', { incomplete_details: { reason: 'max_output_tokens' } });
    replies.push({ frames: responsesFrames('cut of', ['response.incomplete', { type: 'response.incomplete', response: incomplete }]) }, { status: 200, body: incomplete });
    const client = openAiResponsesClient(new OpenAI({ apiKey: 'k', baseURL, maxRetries: 0 }));
    const parts = await drain(client.stream!({ model: 'm', items: [userMessage('hi')] }));
    const created = await client.create({ model: 'm', items: [userMessage('hi')] });
    expect((parts.at(-1) as Extract<ModelStreamPart, { type: 'finish' }>).result).toEqual(created);
    expect(created).toMatchObject({ finishReason: 'max_output_tokens', usage: { cachedInputTokens: 32 } });
  });

  it('Anthropic: stop_reason max_tokens is recorded (stream and create)', async () => {
    replies.push(
      { frames: anthropicFrames('cut of', 'max_tokens') },
      { status: 200, body: { id: 'msg_s', type: 'message', role: 'assistant', model: 'm', content: [{ type: 'text', text: 'cut of' }], stop_reason: 'max_tokens', stop_sequence: null, usage: { input_tokens: 50, output_tokens: 1 } } },
    );
    const client = anthropicMessagesClient(new Anthropic({ apiKey: 'k', baseURL, maxRetries: 0 }), { maxTokens: 100 });
    const parts = await drain(client.stream!({ model: 'm', items: [userMessage('hi')] }));
    const created = await client.create({ model: 'm', items: [userMessage('hi')] });
    expect((parts.at(-1) as Extract<ModelStreamPart, { type: 'finish' }>).result).toEqual(created);
    expect(created.finishReason).toBe('max_tokens');
  });
});
