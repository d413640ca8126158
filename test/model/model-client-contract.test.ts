// The published ModelClient contract run against every client we ship: the scripted client and the three SDK
// adapters (real `openai` and `@anthropic-ai/sdk` clients against a provider on 127.0.0.1 that plays the turns).
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { assistantMessage, functionCall } from '../../src/items/index.js';
import { ScriptedModelClient, type ModelClient, type ModelResult } from '../../src/model/index.js';
import { anthropicMessagesClient, openAiChatCompletionsClient, openAiResponsesClient } from '../../src/adapters/index.js';
import { describeModelClientContract, type ModelContractTurn } from '../../src/testing/index.js';

type Render = (turn: Exclude<ModelContractTurn, { kind: 'hang' }>) => { status: number; body: unknown };

/** A provider on loopback that answers each request with the next turn, rendered in its wire format. */
const loopbackProvider = async (turns: readonly ModelContractTurn[], render: Render) => {
  const queue = [...turns];
  const hanging: ServerResponse[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const turn = queue.shift();
      if (turn === undefined) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'no turn left' } }));
        return;
      }
      if (turn.kind === 'hang') {
        hanging.push(res);
        return;
      }
      const { status, body } = render(turn);
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};

const openAiError = (turn: { status: number; message: string }) => ({
  status: turn.status,
  body: { error: { message: turn.message, type: 'invalid_request_error' } },
});

const chatCompletions: Render = (turn) => {
  if (turn.kind === 'error') return openAiError(turn);
  const message =
    turn.kind === 'text'
      ? { role: 'assistant', content: turn.text, refusal: null }
      : {
          role: 'assistant',
          content: null,
          refusal: null,
          tool_calls: [{ id: turn.callId, type: 'function', function: { name: turn.name, arguments: JSON.stringify(turn.arguments) } }],
        };
  return {
    status: 200,
    body: {
      id: 'chatcmpl-contract',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'contract-model',
      choices: [{ index: 0, message, logprobs: null, finish_reason: turn.kind === 'text' ? 'stop' : 'tool_calls' }],
      usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 },
    },
  };
};

const responses: Render = (turn) => {
  if (turn.kind === 'error') return openAiError(turn);
  const output =
    turn.kind === 'text'
      ? [{ type: 'message', id: 'msg_c', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: turn.text, annotations: [] }] }]
      : [{ type: 'function_call', id: 'fc_c', call_id: turn.callId, name: turn.name, arguments: JSON.stringify(turn.arguments), status: 'completed' }];
  return {
    status: 200,
    body: {
      id: 'resp_contract',
      object: 'response',
      created_at: 1_700_000_000,
      status: 'completed',
      error: null,
      incomplete_details: null,
      instructions: null,
      model: 'contract-model',
      output,
      parallel_tool_calls: true,
      temperature: 0,
      tool_choice: 'auto',
      tools: [],
      top_p: 1,
      usage: { input_tokens: 12, input_tokens_details: { cached_tokens: 0 }, output_tokens: 3, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 },
    },
  };
};

const anthropic: Render = (turn) => {
  if (turn.kind === 'error') return { status: turn.status, body: { type: 'error', error: { type: 'invalid_request_error', message: turn.message } } };
  const content =
    turn.kind === 'text' ? [{ type: 'text', text: turn.text }] : [{ type: 'tool_use', id: turn.callId, name: turn.name, input: turn.arguments }];
  return {
    status: 200,
    body: {
      id: 'msg_contract',
      type: 'message',
      role: 'assistant',
      model: 'contract-model',
      content,
      stop_reason: turn.kind === 'text' ? 'end_turn' : 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 12, output_tokens: 3 },
    },
  };
};

const sdkHarness = (render: Render, clientOf: (baseURL: string) => ModelClient) => ({
  open: async (turns: readonly ModelContractTurn[]) => {
    const provider = await loopbackProvider(turns, render);
    return { client: clientOf(provider.baseURL), close: provider.close };
  },
});

describeModelClientContract({ describe, it }, 'ScriptedModelClient', {
  open: async (turns) => {
    const answers = turns.map((turn) => {
      switch (turn.kind) {
        case 'text':
          return { outputText: turn.text, items: [assistantMessage(turn.text)] } satisfies ModelResult;
        case 'tool-call':
          return { items: [functionCall(turn.callId, turn.name, turn.arguments)] } satisfies ModelResult;
        case 'error':
          return new Error(`${turn.status} ${turn.message}`);
        case 'hang':
          return () => new Promise<ModelResult>(() => {});
      }
    });
    const scripted = new ScriptedModelClient(answers);
    // The scripted client checks the signal before it answers; a hanging answer must still end on abort.
    const client: ModelClient = {
      create: (request, options) =>
        new Promise<ModelResult>((resolve, reject) => {
          options?.signal?.addEventListener('abort', () => reject(options.signal?.reason), { once: true });
          scripted.create(request, options).then(resolve, reject);
        }),
    };
    return { client };
  },
});

const openAi = (baseURL: string) => new OpenAI({ baseURL, apiKey: 'contract', maxRetries: 0 });
describeModelClientContract({ describe, it }, 'openAiChatCompletionsClient', sdkHarness(chatCompletions, (url) => openAiChatCompletionsClient(openAi(url))));
describeModelClientContract({ describe, it }, 'openAiResponsesClient', sdkHarness(responses, (url) => openAiResponsesClient(openAi(url))));
describeModelClientContract(
  { describe, it },
  'anthropicMessagesClient',
  sdkHarness(anthropic, (url) => anthropicMessagesClient(new Anthropic({ baseURL: url, apiKey: 'contract', maxRetries: 0 }), { maxTokens: 256 })),
);

describe('the ModelClient contract catches broken clients', () => {
  /** Runs the contract's tests for `client` outside vitest and returns the names of those that failed. */
  const failuresOf = async (client: ModelClient): Promise<string[]> => {
    const tests: Array<{ name: string; body: () => Promise<void> | void }> = [];
    describeModelClientContract({ describe: (_n, body) => body(), it: (name, body) => void tests.push({ name, body }) }, 'broken', {
      open: async () => ({ client }),
    });
    const failed: string[] = [];
    for (const test of tests) {
      try {
        await test.body();
      } catch {
        failed.push(test.name);
      }
    }
    return failed;
  };

  it('a client that swallows provider errors and aborts, answering nothing', async () => {
    const failed = await failuresOf({ create: async () => ({ items: [] }) });
    expect(failed).toEqual(
      expect.arrayContaining([
        'answers text as outputText and an assistant message, with valid JSON items',
        'rejects when the provider answers an error (never resolves with an empty answer)',
        'rejects at once when the signal is already aborted',
      ]),
    );
  });

  it('a client that mutates the request or returns a call without an id', async () => {
    const failed = await failuresOf({
      create: async (request) => {
        (request.items as unknown[]).push({ type: 'message', role: 'assistant', content: 'x' });
        return { items: [] };
      },
    });
    // The suite freezes every request, so a mutation throws in each test that expects an answer.
    expect(failed).toEqual(
      expect.arrayContaining([
        'answers text as outputText and an assistant message, with valid JSON items',
        'returns a tool call with its id, name and JSON arguments',
        'accepts the call and its output back and answers the next turn',
        'reports usage, when it does, as non-negative numbers',
      ]),
    );
    const noId = await failuresOf({ create: async () => ({ items: [{ type: 'function_call', call_id: '', name: 'get_weather', arguments: '{"city":"Oslo"}' }] }) });
    expect(noId).toContain('returns a tool call with its id, name and JSON arguments');
  });
});
