// One signal for many model calls: the adapters leave no abort listener behind (the SDKs add one per request and
// never remove it, which warned MaxListenersExceededWarning after ten steps), in create() and in stream() (a stream
// that ends, fails, or is left early). Real SDK clients over a stub fetch.
// The 1,000-step agent run is in test-integration/runtime/abort-listeners.test.ts.
import { getEventListeners } from 'node:events';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agents, defineTool, openMemoryLog, userMessage } from '../../src/index.js';
import type { ModelClient, ModelStreamPart } from '../../src/model/index.js';
import { anthropicMessagesClient, anthropicTokenCounter, openAiChatCompletionsClient, openAiResponsesClient } from '../../src/adapters/index.js';

const json = (body: unknown): Response => new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });

let calls = 0;
const chatAnswer = (): Response =>
  json({ id: `c${++calls}`, object: 'chat.completion', created: 0, model: 'm', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'ok' } }], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } });
const responsesAnswer = (): Response =>
  json({ id: `r${++calls}`, object: 'response', status: 'completed', output: [{ type: 'message', id: `m${calls}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'ok', annotations: [] }] }], usage: { input_tokens: 3, output_tokens: 1, total_tokens: 4 } });
const anthropicAnswer = (): Response =>
  json({ id: `msg${++calls}`, type: 'message', role: 'assistant', model: 'm', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', usage: { input_tokens: 3, output_tokens: 1 } });

const stubFetch = (answer: (url: string) => Response) => (async (url: string | URL | Request) => answer(String(url))) as typeof fetch;
const openai = (answer: () => Response): OpenAI => new OpenAI({ apiKey: 'test', baseURL: 'http://127.0.0.1:9/v1', maxRetries: 0, fetch: stubFetch(answer) });
const anthropic = (): Anthropic =>
  new Anthropic({ apiKey: 'test', baseURL: 'http://127.0.0.1:9', maxRetries: 0, fetch: stubFetch((url) => (url.includes('count_tokens') ? json({ input_tokens: 7 }) : anthropicAnswer())) });

const warnings: Error[] = [];
const onWarning = (warning: Error): void => void warnings.push(warning);
beforeEach(() => {
  warnings.length = 0;
  process.on('warning', onWarning);
});
afterEach(() => {
  process.off('warning', onWarning);
});
/** Warnings are failures here: the leak showed as MaxListenersExceededWarning. */
const expectNoWarnings = async (): Promise<void> => {
  await new Promise((resolve) => setImmediate(resolve)); // process.emitWarning delivers on the next tick
  expect(warnings.map((w) => `${w.name}: ${w.message}`)).toEqual([]);
};

const STEPS = 1_000;

describe('one AbortSignal across 1,000 model calls', () => {
  const clients: readonly [string, () => ModelClient][] = [
    ['Chat Completions', () => openAiChatCompletionsClient(openai(chatAnswer))],
    ['Responses', () => openAiResponsesClient(openai(responsesAnswer))],
    ['Anthropic Messages', () => anthropicMessagesClient(anthropic(), { maxTokens: 64 })],
  ];
  for (const [name, make] of clients) {
    it(`${name}: no listener is left on the signal and nothing warns`, async () => {
      const model = make();
      const signal = new AbortController().signal;
      for (let i = 0; i < STEPS; i++) {
        const result = await model.create({ model: 'm', systemPrompt: 's', items: [userMessage(`q${i}`)] }, { signal });
        expect(result.outputText).toBe('ok');
      }
      expect(getEventListeners(signal, 'abort')).toHaveLength(0);
      await expectNoWarnings();
    });
  }

  it('the Anthropic token counter: no listener left after 1,000 counts on one signal', async () => {
    const counter = anthropicTokenCounter(anthropic(), { model: 'm' });
    const signal = new AbortController().signal;
    await counter.prefetch(Array.from({ length: STEPS }, (_, i) => `text ${i}`), { signal });
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
    await expectNoWarnings();
  });

  it('an abort still reaches the SDK call in flight', async () => {
    const controller = new AbortController();
    const hanging = new OpenAI({
      apiKey: 'test',
      baseURL: 'http://127.0.0.1:9/v1',
      maxRetries: 0,
      fetch: ((_url: unknown, init?: RequestInit) =>
        new Promise<Response>((_resolve, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal?.reason as Error), { once: true }))) as typeof fetch,
    });
    const pending = openAiChatCompletionsClient(hanging).create({ model: 'm', items: [userMessage('q')] }, { signal: controller.signal });
    controller.abort(new Error('stop now'));
    await expect(pending).rejects.toThrow();
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    // An already aborted signal never sends.
    await expect(openAiChatCompletionsClient(openai(chatAnswer)).create({ model: 'm', items: [userMessage('q')] }, { signal: controller.signal })).rejects.toThrow();
  });
});

// ---------------------------------------------------------------------------------------------
// stream(): the same, for streams that end, fail, or whose consumer stops early.

const sseBody = (frames: ReadonlyArray<readonly [string | null, unknown]>): string =>
  frames.map(([event, data]) => `${event !== null ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`).join('');
const sse = (frames: ReadonlyArray<readonly [string | null, unknown]>): Response =>
  new Response(sseBody(frames), { status: 200, headers: { 'content-type': 'text/event-stream' } });

const chatChunk = (delta: unknown, finish: string | null = null) => [null, { id: `c${calls}`, object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] }] as const;
const chatStream = (): Response => {
  ++calls;
  return sse([chatChunk({ role: 'assistant', content: 'o' }), chatChunk({ content: 'k' }), chatChunk({}, 'stop'), [null, '[DONE]']]);
};
const responsesStream = (): Response => {
  ++calls;
  const response = { id: `r${calls}`, object: 'response', status: 'completed', model: 'm', output: [{ type: 'message', id: `m${calls}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'ok', annotations: [] }] }], usage: { input_tokens: 3, output_tokens: 1, total_tokens: 4 } };
  return sse([
    ['response.created', { type: 'response.created', sequence_number: 0, response: { ...response, status: 'in_progress', output: [] } }],
    ['response.output_text.delta', { type: 'response.output_text.delta', sequence_number: 1, item_id: `m${calls}`, output_index: 0, content_index: 0, delta: 'o', logprobs: [] }],
    ['response.output_text.delta', { type: 'response.output_text.delta', sequence_number: 2, item_id: `m${calls}`, output_index: 0, content_index: 0, delta: 'k', logprobs: [] }],
    ['response.completed', { type: 'response.completed', sequence_number: 3, response }],
  ]);
};
const anthropicStream = (): Response => {
  ++calls;
  const ev = (type: string, data: Record<string, unknown>) => [type, { type, ...data }] as const;
  return sse([
    ev('message_start', { message: { id: `msg${calls}`, type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: null, usage: { input_tokens: 3, output_tokens: 1 } } }),
    ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'o' } }),
    ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'k' } }),
    ev('content_block_stop', { index: 0 }),
    ev('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 1 } }),
    ev('message_stop', {}),
  ]);
};
const failing = (): Response => new Response(JSON.stringify({ error: { message: 'bad request', type: 'invalid_request_error' } }), { status: 400, headers: { 'content-type': 'application/json' } });

const streamingClients: readonly [string, (answer: () => Response) => ModelClient, () => Response][] = [
  ['Chat Completions', (answer) => openAiChatCompletionsClient(openai(answer)), chatStream],
  ['Responses', (answer) => openAiResponsesClient(openai(answer)), responsesStream],
  [
    'Anthropic Messages',
    (answer) => anthropicMessagesClient(new Anthropic({ apiKey: 'test', baseURL: 'http://127.0.0.1:9', maxRetries: 0, fetch: stubFetch(answer) }), { maxTokens: 64 }),
    anthropicStream,
  ],
];

const finishOf = async (parts: AsyncIterable<ModelStreamPart>): Promise<ModelStreamPart | undefined> => {
  let last: ModelStreamPart | undefined;
  for await (const part of parts) last = part;
  return last;
};

describe('one AbortSignal across 1,000 streamed model calls', () => {
  for (const [name, make, answer] of streamingClients) {
    it(`${name}: streams that end, fail, or are left after their first part leave no listener, and nothing warns`, async () => {
      const model = make(answer);
      const signal = new AbortController().signal;
      for (let i = 0; i < STEPS; i++) {
        const last = await finishOf(model.stream!({ model: 'm', systemPrompt: 's', items: [userMessage(`q${i}`)] }, { signal }));
        expect(last).toMatchObject({ type: 'finish', result: { outputText: 'ok' } });
      }
      expect(getEventListeners(signal, 'abort')).toHaveLength(0);
      // The consumer stops after the first part (a `break` calls return() on the stream).
      for (let i = 0; i < 50; i++) {
        for await (const part of model.stream!({ model: 'm', items: [userMessage(`q${i}`)] }, { signal })) {
          expect(part.type).toBe('text-delta');
          break;
        }
      }
      expect(getEventListeners(signal, 'abort')).toHaveLength(0);
      // The stream fails when it is opened.
      const refusing = make(failing);
      for (let i = 0; i < 50; i++) await expect(finishOf(refusing.stream!({ model: 'm', items: [userMessage(`q${i}`)] }, { signal }))).rejects.toThrow();
      expect(getEventListeners(signal, 'abort')).toHaveLength(0);
      await expectNoWarnings();
    });
  }

  it('an abort still reaches a stream in flight, and its listener goes', async () => {
    const controller = new AbortController();
    const hanging = new OpenAI({
      apiKey: 'test',
      baseURL: 'http://127.0.0.1:9/v1',
      maxRetries: 0,
      fetch: ((_url: unknown, init?: RequestInit) =>
        new Promise<Response>((_resolve, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal?.reason as Error), { once: true }))) as typeof fetch,
    });
    const pending = finishOf(openAiChatCompletionsClient(hanging).stream!({ model: 'm', items: [userMessage('q')] }, { signal: controller.signal }));
    await new Promise((resolve) => setImmediate(resolve));
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    controller.abort(new Error('stop now'));
    await expect(pending).rejects.toThrow();
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('a 30-step streamed agent run (onDelta) on one signal leaves no listener and nothing warns', async () => {
    let step = 0;
    const model = openAiChatCompletionsClient(
      openai(() => {
        step++;
        const id = `s${step}`;
        const chunk = (delta: unknown, finish: string | null = null) => [null, { id, object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] }] as const;
        return step < 30
          ? sse([chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: `call_${step}`, type: 'function', function: { name: 'echo', arguments: '{"text":"x"}' } }] }), chunk({}, 'tool_calls'), [null, '[DONE]']])
          : sse([chunk({ role: 'assistant', content: 'done' }), chunk({}, 'stop'), [null, '[DONE]']]);
      }),
    );
    const echo = defineTool({ name: 'echo', description: 'echo', parameters: z.object({ text: z.string() }), execute: ({ text }) => text });
    const agent = Agents.react({ modelClient: model, model: 'm', tools: [echo], log: await openMemoryLog(), contextBudget: { maxItems: 8 }, maxSteps: 30 });
    const session = await agent.newSession();
    const controller = new AbortController();
    let deltas = 0;
    const result = await session.run('go', { signal: controller.signal, onDelta: () => void deltas++ });
    expect(result).toMatchObject({ steps: 30, outputText: 'done' });
    expect(deltas).toBeGreaterThanOrEqual(30);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    await expectNoWarnings();
  });
});
