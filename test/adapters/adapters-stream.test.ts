// Streaming adapters for real: the `openai` and `@anthropic-ai/sdk` clients against a loopback server sending SSE;
// the recorded session equals the non-streamed one, a stream that breaks off or is aborted leaves no answer in memory.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agents, defineTool, isAgentRunError, openMemoryLog, replaySession, type ModelClient, type ModelDelta, type SessionEvent } from '../../src/index.js';
import { anthropicMessagesClient, openAiChatCompletionsClient, openAiResponsesClient } from '../../src/adapters/index.js';
import { checkSessionLaws } from '../../src/testing/runtime-laws.js';

type Handler = (body: Record<string, unknown>, res: ServerResponse) => void;
let server: Server;
let baseURL = '';
const handlers: Handler[] = [];
const streamedFlags: boolean[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
      streamedFlags.push(body['stream'] === true);
      const handler = handlers.shift();
      if (!handler) {
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'no handler' } }));
        return;
      }
      handler(body, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const json = (payload: unknown): Handler => (_body, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(payload));

/** SSE frames: `[event, data]` pairs (event null: a data-only frame); `breakAfter` destroys the socket after that many frames; `hangAfter` keeps it open. */
const sse =
  (frames: ReadonlyArray<readonly [string | null, unknown]>, end: { breakAfter?: number; hangAfter?: number } = {}): Handler =>
  (_body, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    frames.forEach(([event, data], i) => {
      if ((end.breakAfter !== undefined && i >= end.breakAfter) || (end.hangAfter !== undefined && i >= end.hangAfter)) return;
      res.write(`${event !== null ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
    });
    if (end.breakAfter !== undefined) setTimeout(() => res.socket?.destroy(), 10);
    else if (end.hangAfter === undefined) res.end();
  };

const ARGS = '{"path":"src/a.ts","reason":"look at the module before editing it"}';
/** The arguments in many small pieces, as providers send them. */
const pieces = (text: string, size = 4): string[] => Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));

// ------------------------------------------------------------------ Chat Completions

const chatJson = (content: string | null, withCall: boolean, id: string) => ({
  id,
  object: 'chat.completion',
  created: 1,
  model: 'm',
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content,
        refusal: null,
        ...(withCall ? { tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read', arguments: ARGS } }] } : {}),
      },
      finish_reason: withCall ? 'tool_calls' : 'stop',
    },
  ],
  usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
});
const chatChunk = (id: string, delta: unknown, finish: string | null = null) => [null, { id, object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] }] as const;
const chatFrames = (content: string, withCall: boolean, id: string): Array<readonly [string | null, unknown]> => [
  chatChunk(id, { role: 'assistant', content: '' }),
  ...pieces(content, 5).map((p) => chatChunk(id, { content: p })),
  ...(withCall
    ? [
        chatChunk(id, { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'read', arguments: '' } }] }),
        ...pieces(ARGS).map((p) => chatChunk(id, { tool_calls: [{ index: 0, function: { arguments: p } }] })),
      ]
    : []),
  chatChunk(id, {}, withCall ? 'tool_calls' : 'stop'),
  [null, { id, object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }],
  [null, '[DONE]'],
];

// ------------------------------------------------------------------ Responses

const responseOf = (id: string, text: string, withCall: boolean, status = 'completed') => ({
  id,
  object: 'response',
  created_at: 1,
  status,
  model: 'm',
  output:
    status === 'completed'
      ? [
          { type: 'message', id: `msg_${id}`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] },
          ...(withCall ? [{ type: 'function_call', id: `fc_${id}`, call_id: 'call_1', name: 'read', arguments: ARGS, status: 'completed' }] : []),
        ]
      : [],
  usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
  error: null,
});
const responsesFrames = (id: string, text: string, withCall: boolean): Array<readonly [string | null, unknown]> => {
  let seq = 0;
  const ev = (type: string, data: Record<string, unknown>) => [type, { type, sequence_number: seq++, ...data }] as const;
  return [
    ev('response.created', { response: responseOf(id, text, withCall, 'in_progress') }),
    ev('response.output_item.added', { output_index: 0, item: { type: 'message', id: `msg_${id}`, status: 'in_progress', role: 'assistant', content: [] } }),
    ...pieces(text, 5).map((p) => ev('response.output_text.delta', { item_id: `msg_${id}`, output_index: 0, content_index: 0, delta: p, logprobs: [] })),
    ev('response.output_text.done', { item_id: `msg_${id}`, output_index: 0, content_index: 0, text, logprobs: [] }),
    ...(withCall
      ? [
          ev('response.output_item.added', { output_index: 1, item: { type: 'function_call', id: `fc_${id}`, call_id: 'call_1', name: 'read', arguments: '', status: 'in_progress' } }),
          ...pieces(ARGS).map((p) => ev('response.function_call_arguments.delta', { item_id: `fc_${id}`, output_index: 1, delta: p })),
          ev('response.function_call_arguments.done', { item_id: `fc_${id}`, output_index: 1, arguments: ARGS }),
        ]
      : []),
    ev('response.completed', { response: responseOf(id, text, withCall) }),
  ];
};

// ------------------------------------------------------------------ Anthropic

const anthropicJson = (id: string, text: string, withCall: boolean) => ({
  id,
  type: 'message',
  role: 'assistant',
  model: 'm',
  content: [
    { type: 'thinking', thinking: 'Check the module first.', signature: 'sig-1' },
    { type: 'text', text, citations: null },
    ...(withCall ? [{ type: 'tool_use', id: 'toolu_1', name: 'read', input: JSON.parse(ARGS) as unknown }] : []),
  ],
  stop_reason: withCall ? 'tool_use' : 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 2 },
});
const anthropicFrames = (id: string, text: string, withCall: boolean): Array<readonly [string | null, unknown]> => {
  const ev = (type: string, data: Record<string, unknown>) => [type, { type, ...data }] as const;
  return [
    ev('message_start', {
      message: { ...anthropicJson(id, text, withCall), content: [], stop_reason: null, usage: { input_tokens: 10, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 2 } },
    }),
    ev('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
    ...pieces('Check the module first.', 6).map((p) => ev('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: p } })),
    ev('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'sig-1' } }),
    ev('content_block_stop', { index: 0 }),
    ev('content_block_start', { index: 1, content_block: { type: 'text', text: '', citations: null } }),
    ...pieces(text, 5).map((p) => ev('content_block_delta', { index: 1, delta: { type: 'text_delta', text: p } })),
    ev('content_block_stop', { index: 1 }),
    ...(withCall
      ? [
          ev('content_block_start', { index: 2, content_block: { type: 'tool_use', id: 'toolu_1', name: 'read', input: {} } }),
          ...pieces(ARGS).map((p) => ev('content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: p } })),
          ev('content_block_stop', { index: 2 }),
        ]
      : []),
    ev('message_delta', { delta: { stop_reason: withCall ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: 5 } }),
    ev('message_stop', {}),
  ];
};

// ------------------------------------------------------------------ the runs

interface Provider {
  readonly name: string;
  readonly client: () => ModelClient;
  readonly answer: (streamed: boolean, step: 1 | 2) => Handler;
  readonly frames: (step: 1 | 2) => Array<readonly [string | null, unknown]>;
  readonly callId: string;
}

const TEXT = 'Let me look at the module.';
const providers: Provider[] = [
  {
    name: 'chat completions',
    client: () => openAiChatCompletionsClient(new OpenAI({ apiKey: 'k', baseURL, maxRetries: 0 })),
    frames: (step) => chatFrames(step === 1 ? TEXT : 'Done.', step === 1, `chatcmpl-${step}`),
    answer: (streamed, step) => (streamed ? sse(chatFrames(step === 1 ? TEXT : 'Done.', step === 1, `chatcmpl-${step}`)) : json(chatJson(step === 1 ? TEXT : 'Done.', step === 1, `chatcmpl-${step}`))),
    callId: 'call_1',
  },
  {
    name: 'responses',
    client: () => openAiResponsesClient(new OpenAI({ apiKey: 'k', baseURL, maxRetries: 0 })),
    frames: (step) => responsesFrames(`resp_${step}`, step === 1 ? TEXT : 'Done.', step === 1),
    answer: (streamed, step) => (streamed ? sse(responsesFrames(`resp_${step}`, step === 1 ? TEXT : 'Done.', step === 1)) : json(responseOf(`resp_${step}`, step === 1 ? TEXT : 'Done.', step === 1))),
    callId: 'call_1',
  },
  {
    name: 'anthropic',
    client: () => anthropicMessagesClient(new Anthropic({ apiKey: 'k', baseURL, maxRetries: 0 }), { maxTokens: 1024 }),
    frames: (step) => anthropicFrames(`msg_${step}`, step === 1 ? TEXT : 'Done.', step === 1),
    answer: (streamed, step) => (streamed ? sse(anthropicFrames(`msg_${step}`, step === 1 ? TEXT : 'Done.', step === 1)) : json(anthropicJson(`msg_${step}`, step === 1 ? TEXT : 'Done.', step === 1))),
    callId: 'toolu_1',
  },
];

const read = defineTool({ name: 'read', description: 'Read a file', parameters: z.object({ path: z.string(), reason: z.string() }), execute: ({ path }) => `contents of ${path}` });

const runOnce = async (modelClient: ModelClient, onDelta: ((d: ModelDelta) => void) | undefined, signal?: AbortSignal) => {
  const log = await openMemoryLog();
  let n = 0;
  const notes: string[] = [];
  const agent = Agents.react({ modelClient, model: 'm', log, tools: [read], ids: () => `id-${++n}`, onEvent: (e) => void (e.type === 'MODEL_DELTA' && notes.push(e.delta.type)) });
  const session = await agent.newSession();
  const outcome = await session.run('read src/a.ts', { ...(onDelta ? { onDelta } : {}), ...(signal ? { signal } : {}) }).then(
    (r) => r,
    (e: unknown) => e,
  );
  const events: SessionEvent[] = [];
  for await (const e of log.read(session.id)) events.push(e);
  return { outcome, events, notes, log, id: session.id };
};

const comparable = (events: readonly SessionEvent[]) =>
  events.map((e) => {
    const { at: _a, hash: _h, prevHash: _p, contentDigest: _c, contentSalt: _s, ...rest } = e as SessionEvent & { durationMs?: number; contentDigest?: string };
    const { durationMs: _d, ...payload } = rest as typeof rest & { durationMs?: number };
    return payload;
  });

describe.each(providers)('streaming over $name', (provider) => {
  it('records the same session as the non-streamed path; deltas carry the text and the arguments in many pieces', async () => {
    handlers.push(provider.answer(false, 1), provider.answer(false, 2));
    const plain = await runOnce(provider.client(), undefined);
    expect(plain.outcome).toMatchObject({ status: 'finished', outputText: 'Done.' });

    streamedFlags.length = 0;
    handlers.push(provider.answer(true, 1), provider.answer(true, 2));
    const deltas: ModelDelta[] = [];
    const streamed = await runOnce(provider.client(), (d) => deltas.push(d));
    expect(streamedFlags).toEqual([true, true]);
    expect(streamed.outcome).toMatchObject({ status: 'finished', outputText: 'Done.' });
    expect(comparable(streamed.events)).toEqual(comparable(plain.events));
    expect(checkSessionLaws(streamed.events)).toEqual([]);

    const text = deltas.filter((d) => d.type === 'text-delta').map((d) => (d as { delta: string }).delta).join('');
    expect(text).toBe(`${TEXT}Done.`);
    const callDeltas = deltas.filter((d): d is Extract<ModelDelta, { type: 'tool-call-delta' }> => d.type === 'tool-call-delta');
    expect(callDeltas.every((d) => d.callId === provider.callId)).toBe(true);
    expect(callDeltas.map((d) => d.argumentsDelta).join('')).toBe(ARGS);
    expect(callDeltas.filter((d) => d.argumentsDelta !== '').length).toBeGreaterThan(5);
    expect(callDeltas.find((d) => d.name !== undefined)?.name).toBe('read');
    expect(streamed.notes).toEqual(deltas.map((d) => d.type));
    for (const mode of ['project', 'rerun'] as const) expect((await replaySession(streamed.log, streamed.id, { mode })).identical).toBe(true);
  });

  it('a stream that breaks off in the middle fails the run and no partial answer enters memory', async () => {
    const frames = provider.frames(1);
    handlers.push(sse(frames, { breakAfter: Math.floor(frames.length / 2) }));
    const broken = await runOnce(provider.client(), () => undefined);
    expect(isAgentRunError(broken.outcome) && broken.outcome.reason).toBe('error');
    expect(broken.events.some((e) => e.type === 'model.responded')).toBe(false);
    expect(broken.events.at(-1)).toMatchObject({ type: 'run.failed', reason: 'error' });
    expect(checkSessionLaws(broken.events)).toEqual([]);
  });

  it('a stream that ends cleanly but early is an incomplete answer, not a short one', async () => {
    const frames = provider.frames(1);
    handlers.push(sse(frames.slice(0, Math.floor(frames.length / 2))));
    const early = await runOnce(provider.client(), () => undefined);
    expect(isAgentRunError(early.outcome) && early.outcome.message).toMatch(/ended before/);
    expect(early.events.some((e) => e.type === 'model.responded')).toBe(false);
  });

  it('an abort mid-stream records run.failed aborted and no partial answer', async () => {
    const frames = provider.frames(1);
    handlers.push(sse(frames, { hangAfter: frames.length - 2 }));
    const controller = new AbortController();
    const aborted = await runOnce(provider.client(), (d) => {
      if (d.type === 'text-delta') controller.abort(new Error('stop streaming'));
    }, controller.signal);
    expect(isAgentRunError(aborted.outcome) && aborted.outcome.reason).toBe('aborted');
    expect(aborted.events.some((e) => e.type === 'model.responded')).toBe(false);
    expect(aborted.events.at(-1)).toMatchObject({ type: 'run.failed', reason: 'aborted' });
  });
});
