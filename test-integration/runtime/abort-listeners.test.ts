// A 1,000-step agent run on one AbortSignal through the real \`openai\` client (stub fetch): no abort listener is left
// on the run's signal and nothing warns (it warned MaxListenersExceededWarning after ten steps).
import { getEventListeners } from 'node:events';
import OpenAI from 'openai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agents, defineTool, openMemoryLog } from '../../src/index.js';
import { openAiChatCompletionsClient } from '../../src/adapters/index.js';

const json = (body: unknown): Response => new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
const openai = (answer: () => Response): OpenAI =>
  new OpenAI({ apiKey: 'test', baseURL: 'http://127.0.0.1:9/v1', maxRetries: 0, fetch: (async () => answer()) as typeof fetch });

const warnings: Error[] = [];
const onWarning = (warning: Error): void => void warnings.push(warning);
beforeEach(() => {
  warnings.length = 0;
  process.on('warning', onWarning);
});
afterEach(() => {
  process.off('warning', onWarning);
});

const STEPS = 1_000;

describe('one AbortSignal across a long run', () => {
  it('a 1,000-step agent run on one signal through the Chat Completions adapter', async () => {
    let step = 0;
    const client = openai(() => {
      step++;
      const message = step < STEPS ? { role: 'assistant', content: null, tool_calls: [{ id: `call_${step}`, type: 'function', function: { name: 'echo', arguments: '{"text":"x"}' } }] } : { role: 'assistant', content: 'done' };
      return json({ id: `c${step}`, object: 'chat.completion', created: 0, model: 'm', choices: [{ index: 0, finish_reason: 'stop', message }] });
    });
    const echo = defineTool({ name: 'echo', description: 'echo', parameters: z.object({ text: z.string() }), execute: ({ text }) => text });
    const agent = Agents.react({ modelClient: openAiChatCompletionsClient(client), model: 'm', tools: [echo], log: await openMemoryLog(), contextBudget: { maxItems: 8 }, maxSteps: STEPS });
    const session = await agent.newSession();
    const controller = new AbortController();
    const result = await session.run('go', { signal: controller.signal });
    expect(result.steps).toBe(STEPS);
    expect(result.outputText).toBe('done');
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings.map((w) => `${w.name}: ${w.message}`)).toEqual([]);
  }, 120_000);

});
