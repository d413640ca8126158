// The ModelClient contract: what the runtime and the LLM summarizer rely on from any client (SDK adapter or your own).
import assert from 'node:assert/strict';
import { MemoryItemSchema } from '../events/index.js';
import { functionCallOutput, textOf, toolCallsOf, type MemoryItem } from '../items/index.js';
import type { ModelClient, ModelRequest, ToolSpec } from '../model/index.js';
import type { ContractTestApi } from './contract-api.js';
import { deepFreeze } from '../base/index.js';

/** One scripted answer of the provider behind a client. */
export type ModelContractTurn =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'tool-call'; readonly callId: string; readonly name: string; readonly arguments: Record<string, unknown> }
  | { readonly kind: 'error'; readonly status: number; readonly message: string }
  /** Never answers; the suite aborts the request. */
  | { readonly kind: 'hang' };

export interface ModelClientHarness {
  /** A client whose provider answers the given turns in order; `close` releases servers and sockets. */
  open(turns: readonly ModelContractTurn[]): Promise<{ readonly client: ModelClient; close?(): Promise<void> }>;
  /** The model name to put in requests (default 'contract-model'). */
  readonly model?: string;
}

const weatherTool: ToolSpec = {
  type: 'function',
  name: 'get_weather',
  description: 'Current weather of a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
};

const assertValidItems = (items: readonly MemoryItem[]): void => {
  assert.ok(Array.isArray(items), 'result.items must be an array');
  items.forEach((item, index) => {
    const parsed = MemoryItemSchema.safeParse(item);
    assert.ok(parsed.success, `result.items[${index}] is not a memory item: ${JSON.stringify(item)}`);
    assert.doesNotThrow(() => JSON.stringify(item), `result.items[${index}] is not JSON`);
  });
};

/**
 * Registers the ModelClient contract for `name`: text answers, tool calls with ids and parsed arguments, a tool
 * output sent back, provider errors rejecting, aborts rejecting, requests left unmutated, usage well-formed.
 * @example describeModelClientContract({ describe, it }, 'my client', { open: async (turns) => ({ client: myClient(turns) }) })
 */
export const describeModelClientContract = (api: ContractTestApi, name: string, harness: ModelClientHarness): void => {
  const model = harness.model ?? 'contract-model';
  const request = (items: readonly MemoryItem[], tools?: readonly ToolSpec[]): ModelRequest =>
    deepFreeze({ model, systemPrompt: 'You are terse.', items, ...(tools ? { tools } : {}) });
  const withClient = async (turns: readonly ModelContractTurn[], body: (client: ModelClient) => Promise<void>): Promise<void> => {
    const opened = await harness.open(turns);
    try {
      await body(opened.client);
    } finally {
      await opened.close?.();
    }
  };

  api.describe(`ModelClient contract: ${name}`, () => {
    api.it('answers text as outputText and an assistant message, with valid JSON items', () =>
      withClient([{ kind: 'text', text: 'It is sunny.' }], async (client) => {
        const result = await client.create(request([{ type: 'message', role: 'user', content: 'Weather?' }]));
        assertValidItems(result.items);
        assert.equal(result.outputText, 'It is sunny.');
        const assistant = result.items.filter((i) => i.type === 'message' && (i as { role?: string }).role === 'assistant');
        assert.ok(assistant.some((i) => textOf(i) === 'It is sunny.'), 'an assistant message carries the text');
        assert.equal(toolCallsOf(result.items).length, 0, 'a text answer has no tool call');
      }));

    api.it('returns a tool call with its id, name and JSON arguments', () =>
      withClient([{ kind: 'tool-call', callId: 'call_w1', name: 'get_weather', arguments: { city: 'Oslo' } }], async (client) => {
        const result = await client.create(request([{ type: 'message', role: 'user', content: 'Weather in Oslo?' }], [weatherTool]));
        assertValidItems(result.items);
        const calls = toolCallsOf(result.items);
        assert.equal(calls.length, 1, `one call expected, got ${JSON.stringify(result.items)}`);
        const call = calls[0]!;
        assert.equal(typeof call.callId, 'string');
        assert.ok(call.callId.length > 0, 'the call id is not empty');
        assert.equal(call.name, 'get_weather');
        assert.deepEqual(JSON.parse(call.arguments || '{}'), { city: 'Oslo' });
      }));

    api.it('accepts the call and its output back and answers the next turn', () =>
      withClient(
        [
          { kind: 'tool-call', callId: 'call_w2', name: 'get_weather', arguments: { city: 'Rome' } },
          { kind: 'text', text: 'Rome: 24 C.' },
        ],
        async (client) => {
          const question: MemoryItem = { type: 'message', role: 'user', content: 'Weather in Rome?' };
          const first = await client.create(request([question], [weatherTool]));
          const call = toolCallsOf(first.items)[0];
          assert.ok(call, 'the first answer is a call');
          const second = await client.create(request([question, ...first.items, functionCallOutput(call.callId, '24 C')], [weatherTool]));
          assertValidItems(second.items);
          assert.equal(second.outputText, 'Rome: 24 C.');
        },
      ));

    api.it('rejects when the provider answers an error (never resolves with an empty answer)', () =>
      withClient([{ kind: 'error', status: 400, message: 'bad request: contract' }], async (client) => {
        await assert.rejects(client.create(request([{ type: 'message', role: 'user', content: 'hi' }])));
      }));

    api.it('rejects when the signal aborts a request the provider never answers', () =>
      withClient([{ kind: 'hang' }], async (client) => {
        const controller = new AbortController();
        const pending = client.create(request([{ type: 'message', role: 'user', content: 'hi' }]), { signal: controller.signal });
        setTimeout(() => controller.abort(new DOMException('contract abort', 'AbortError')), 50);
        await assert.rejects(pending);
      }));

    api.it('rejects at once when the signal is already aborted', () =>
      withClient([{ kind: 'text', text: 'never read' }], async (client) => {
        const controller = new AbortController();
        controller.abort(new DOMException('aborted before', 'AbortError'));
        await assert.rejects(client.create(request([{ type: 'message', role: 'user', content: 'hi' }]), { signal: controller.signal }));
      }));

    api.it('reports usage, when it does, as non-negative numbers', () =>
      withClient([{ kind: 'text', text: 'ok' }], async (client) => {
        const result = await client.create(request([{ type: 'message', role: 'user', content: 'hi' }]));
        for (const key of ['inputTokens', 'outputTokens', 'totalTokens'] as const) {
          const value = result.usage?.[key];
          if (value !== undefined) assert.ok(Number.isFinite(value) && value >= 0, `usage.${key} = ${String(value)}`);
        }
      }));
  });
};
