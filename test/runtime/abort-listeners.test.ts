// One signal for many model calls: the adapters leave no abort listener behind (the SDKs add one per request and
// never remove it, which warned MaxListenersExceededWarning after ten steps). Real SDK clients over a stub fetch.
// The 1,000-step agent run is in test-integration/runtime/abort-listeners.test.ts.
import { getEventListeners } from 'node:events';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { userMessage } from '../../src/index.js';
import type { ModelClient } from '../../src/model/index.js';
import { anthropicMessagesClient, anthropicTokenCounter, openAiChatCompletionsClient, openAiResponsesClient } from '../../src/runtime/adapters/index.js';

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
