// Recovery from a provider's context overflow: model.failed, an overflow compaction, a tighter projection and a retry; the real SDKs on loopback.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  Agents,
  ContextOverflowError,
  FactSummaryCompactPolicy,
  LlmCompactPolicy,
  ScriptedModelClient,
  assistantMessage,
  contextOverflowFrom,
  isContextOverflowError,
  openMemoryLog,
  overflowTokensOf,
  replaySession,
  userMessage,
  auditSession,
  type ModelClient,
  type ModelRequest,
  type SessionEvent,
  type SessionEventLog,
} from '../../src/index.js';
import { checkFateLaw, checkSessionLaws } from '../../src/testing/index.js';
import { anthropicMessagesClient, openAiChatCompletionsClient, openAiResponsesClient } from '../../src/adapters/index.js';

const readAll = async (log: SessionEventLog, id: string): Promise<SessionEvent[]> => {
  const out: SessionEvent[] = [];
  for await (const e of log.read(id)) out.push(e);
  return out;
};

const history = (n: number) => Array.from({ length: n }, (_, i) => (i % 2 === 0 ? userMessage(`request ${i} ${'x'.repeat(200)}`) : assistantMessage(`answer ${i}`)));

/** A model that refuses the first `refusals` requests as too long, then answers. */
const refusing = (refusals: number): ModelClient & { requests: ModelRequest[] } => {
  const requests: ModelRequest[] = [];
  return {
    requests,
    async create(request) {
      requests.push(request);
      if (requests.length <= refusals) throw new ContextOverflowError('prompt is too long: 2000 tokens > 1000 maximum', { requestTokens: 2000, limitTokens: 1000 });
      return { outputText: 'done', items: [assistantMessage('done')], usage: { inputTokens: 900 } };
    },
  };
};

describe('ContextOverflowError and the provider messages', () => {
  it('parses the token counts of each provider message', () => {
    expect(overflowTokensOf('prompt is too long: 208310 tokens > 200000 maximum')).toEqual({ requestTokens: 208310, limitTokens: 200000 });
    expect(overflowTokensOf("This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens.")).toEqual({
      requestTokens: 130532,
      limitTokens: 128000,
    });
    expect(overflowTokensOf('Your input exceeds the context window of this model.')).toEqual({});
  });

  it('maps only overflow errors: another 400, a 500 and a plain Error pass through', () => {
    expect(contextOverflowFrom({ status: 400, code: 'context_length_exceeded', message: 'too long' })).toMatchObject({ code: 'CONTEXT_OVERFLOW' });
    expect(contextOverflowFrom({ status: 400, message: 'invalid tool schema' })).toBeUndefined();
    expect(contextOverflowFrom({ status: 500, message: 'prompt is too long: 3 tokens > 2 maximum' })).toBeUndefined();
    expect(contextOverflowFrom(new Error('prompt is too long: 3 tokens > 2 maximum'))).toBeUndefined();
    expect(contextOverflowFrom({ lastError: { statusCode: 400, message: 'prompt is too long: 3 tokens > 2 maximum' } })).toMatchObject({ requestTokens: 3, limitTokens: 2 });
  });
});

describe('the runtime recovers from a context overflow', () => {
  it('model.failed, an overflow compaction (though shouldCompact says no), a tighter projection, a retry; replay is identical', async () => {
    const log = await openMemoryLog();
    let n = 0;
    const model = refusing(1);
    const agent = Agents.react({
      modelClient: model,
      model: 'm',
      log,
      ids: () => `id-${++n}`,
      contextBudget: { maxTokens: 5000 },
      compactPolicy: new FactSummaryCompactPolicy({ maxItems: 4, compactAbove: 1000 }),
    });
    const session = await agent.newSession();
    await session.session.memory.record([{ type: 'user.input', items: history(12) }]);
    const result = await session.run('go on');
    expect(result.outputText).toBe('done');
    const events = await readAll(log, session.id);
    const types = events.filter((e) => e.type !== 'checkpoint.taken').map((e) => e.type);
    const from = types.indexOf('model.failed');
    expect(types.slice(from - 2, from + 6)).toEqual([
      'context.projected',
      'model.requested',
      'model.failed',
      'memory.compacted',
      'context.projected',
      'model.requested',
      'model.responded',
      'step.ended',
    ]);
    const failed = events.find((e) => e.type === 'model.failed');
    expect(failed).toMatchObject({ reason: 'context-overflow', requestTokens: 2000, limitTokens: 1000, step: 1, error: 'prompt is too long: 2000 tokens > 1000 maximum' });
    const compacted = events.find((e) => e.type === 'memory.compacted');
    expect(compacted).toMatchObject({ trigger: 'auto', reason: { kind: 'overflow', value: 2000, threshold: 1000 } });
    const projections = events.filter((e) => e.type === 'context.projected');
    expect((projections[1] as unknown as { budget: { maxTokens: number } }).budget.maxTokens).toBeLessThan(5000);
    expect(model.requests[1]!.items.length).toBeLessThan(model.requests[0]!.items.length);
    expect((await replaySession(log, session.id, { mode: 'rerun' })).identical).toBe(true);
    const projected = await replaySession(log, session.id);
    expect(projected.identical).toBe(true);
    expect(checkSessionLaws(events)).toEqual([]);
    const audit = await auditSession(log, session.id);
    expect(checkFateLaw(events, audit)).toEqual([]);
  });

  it("a client's own overflow error with unusable token counts is recorded without them, and the run still recovers", async () => {
    const log = await openMemoryLog();
    let calls = 0;
    const model: ModelClient = {
      async create() {
        calls += 1;
        if (calls === 1) throw new ContextOverflowError('too long', { requestTokens: Number.NaN, limitTokens: -3 });
        return { outputText: 'ok', items: [assistantMessage('ok')] };
      },
    };
    const agent = Agents.react({ modelClient: model, model: 'm', log, contextBudget: { maxItems: 10 } });
    const session = await agent.newSession();
    expect((await session.run('hi')).outputText).toBe('ok');
    const events = await readAll(log, session.id);
    const failed = events.find((e) => e.type === 'model.failed')!;
    expect(failed).not.toHaveProperty('requestTokens');
    expect(failed).not.toHaveProperty('limitTokens');
    const budgets = events.filter((e) => e.type === 'context.projected').map((e) => (e as unknown as { budget: Record<string, number>; report: { projectedTokens?: number } }));
    expect(budgets[0]!.budget).toEqual({ maxItems: 10 });
    // The retry is bounded by 0.75 of what was sent (its token count, as maxTokens).
    expect(budgets[1]!.budget).toEqual({ maxItems: 10, maxTokens: Math.floor(budgets[0]!.report.projectedTokens! * 0.75) });
    expect((await replaySession(log, session.id, { mode: 'rerun' })).identical).toBe(true);
  });

  it('after overflowRetries recoveries: run.failed context-overflow, nothing lost, and the re-run is identical', async () => {
    for (const retries of [0, 1, 3]) {
      const log = await openMemoryLog();
      let n = 0;
      const agent = Agents.react({ modelClient: refusing(99), model: 'm', log, ids: () => `id-${++n}`, overflowRetries: retries, compactPolicy: new FactSummaryCompactPolicy({ maxItems: 4 }) });
      const session = await agent.newSession();
      await session.session.memory.record([{ type: 'user.input', items: history(8) }]);
      const error = await session.run('go on').catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'AGENT_RUN_FAILED', reason: 'context-overflow' });
      expect(isContextOverflowError((error as { cause?: unknown }).cause)).toBe(true);
      const events = await readAll(log, session.id);
      expect(events.filter((e) => e.type === 'model.failed')).toHaveLength(retries + 1);
      expect(events.at(-1)).toMatchObject({ type: 'run.failed', reason: 'context-overflow', v: 2 });
      // Every item that entered memory is still there or named by a compaction (nothing lost).
      const compactions = events.filter((e) => e.type === 'memory.compacted');
      expect(compactions.length).toBeLessThanOrEqual(retries + 1);
      expect(compactions.filter((e) => e.type === "memory.compacted" && e.reason?.kind === "overflow")).toHaveLength(retries);
      const rerun = await replaySession(log, session.id, { mode: 'rerun' });
      expect(rerun).toMatchObject({ identical: true, divergentSteps: 0 });
    }
  });

  it('an LLM summarizer that overflows is retried with its items cut further, chunked within summarizerMaxTokens, all in one memory.compacted', async () => {
    const summarizer = new ScriptedModelClient([
      () => {
        throw new ContextOverflowError('prompt is too long: 900 tokens > 500 maximum', { requestTokens: 900, limitTokens: 500 });
      },
      ...Array.from({ length: 20 }, (_, i) => ({ outputText: `{"goal": "g", "completed": ["chunk ${i}"]}`, items: [] })),
    ]);
    const log = await openMemoryLog();
    let n = 0;
    const agent = Agents.react({
      modelClient: refusing(1),
      model: 'm',
      log,
      ids: () => `id-${++n}`,
      compactPolicy: new LlmCompactPolicy(summarizer, 's', 2, { compactAbove: 1000, summarizerMaxTokens: 400 }),
    });
    const session = await agent.newSession();
    await session.session.memory.record([{ type: 'user.input', items: history(30) }]);
    await session.run('go on');
    const events = await readAll(log, session.id);
    const compacted = events.find((e) => e.type === 'memory.compacted');
    const calls = (compacted?.type === 'memory.compacted' ? (compacted.summarizer?.request as { calls: unknown[] }).calls : []) as Record<string, unknown>[];
    expect(calls[0]).toMatchObject({ overflow: true, requestTokens: 900, limitTokens: 500 });
    expect(calls.length).toBeGreaterThan(2);
    // Every chunk request after the overflow fits the tighter bound (the approx tokenizer counts them).
    for (const call of calls.slice(1)) {
      const text = ((call['request'] as ModelRequest).items[0] as { content: string }).content;
      expect(Math.ceil(text.length / 4)).toBeLessThanOrEqual(400);
    }
    expect(events.filter((e) => e.type === 'memory.compacted')).toHaveLength(1);
    expect((await replaySession(log, session.id, { mode: 'rerun' })).identical).toBe(true);
  });
});

describe('a summarizer that always overflows', () => {
  it('gives one compaction.failed naming the refusals; memory stays; the re-run is identical', async () => {
    const refuse = () => {
      throw new ContextOverflowError('prompt is too long: 900 tokens > 500 maximum', { requestTokens: 900, limitTokens: 500 });
    };
    const summarizer = new ScriptedModelClient(Array.from({ length: 40 }, () => refuse));
    const log = await openMemoryLog();
    let n = 0;
    const agent = Agents.react({ modelClient: refusing(0), model: 'm', log, ids: () => `id-${++n}`, compactPolicy: new LlmCompactPolicy(summarizer, 's', 2, { compactAbove: 4 }) });
    const session = await agent.newSession();
    await session.session.memory.record([{ type: 'user.input', items: history(8) }]);
    const before = session.session.memory.getItems();
    await session.run('go on');
    const events = await readAll(log, session.id);
    const failed = events.filter((e) => e.type === 'compaction.failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ stage: 'compact', error: expect.stringContaining('the summarizer refused 4 requests as too long') });
    expect(summarizer.requests).toHaveLength(4);
    expect(session.session.memory.getItems().slice(0, before.length)).toEqual(before);
    expect(events.some((e) => e.type === 'memory.compacted')).toBe(false);
    expect((await replaySession(log, session.id, { mode: 'rerun' })).identical).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------
// The real SDKs against a fake provider on 127.0.0.1 that answers with each provider's overflow body first.

interface Reply {
  readonly status: number;
  readonly body: unknown;
}
let server: Server;
let baseURL: string;
let replies: Reply[] = [];
const paths: string[] = [];
beforeEach(async () => {
  replies = [];
  paths.length = 0;
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      paths.push(req.url ?? '');
      const reply = replies.shift() ?? { status: 500, body: { error: { message: 'no reply scripted' } } };
      res.writeHead(reply.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterEach(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const CHAT_OVERFLOW = {
  error: {
    message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens. Please reduce the length of the messages.",
    type: 'invalid_request_error',
    param: 'messages',
    code: 'context_length_exceeded',
  },
};
const RESPONSES_OVERFLOW = {
  error: { message: 'Your input exceeds the context window of this model. Please adjust your input and try again.', type: 'invalid_request_error', param: 'input', code: 'context_length_exceeded' },
};
const ANTHROPIC_OVERFLOW = { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 208310 tokens > 200000 maximum' } };

const chatAnswer = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'gpt-test',
  choices: [{ index: 0, message: { role: 'assistant', content: 'recovered', refusal: null, annotations: [] }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 50, completion_tokens: 1, total_tokens: 51 },
};
const responsesAnswer = {
  id: 'resp_1',
  object: 'response',
  created_at: 1_700_000_000,
  status: 'completed',
  error: null,
  incomplete_details: null,
  model: 'gpt-test',
  output: [{ type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'recovered', annotations: [] }] }],
  parallel_tool_calls: true,
  tool_choice: 'auto',
  tools: [],
  usage: { input_tokens: 50, output_tokens: 1, total_tokens: 51 },
};
const anthropicAnswer = {
  id: 'msg_01',
  type: 'message',
  role: 'assistant',
  model: 'claude-test',
  content: [{ type: 'text', text: 'recovered' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 50, output_tokens: 1 },
};

const cases = [
  {
    name: 'OpenAI Chat Completions',
    client: () => openAiChatCompletionsClient(new OpenAI({ baseURL, apiKey: 'k', maxRetries: 0 })),
    overflow: CHAT_OVERFLOW,
    answer: chatAnswer,
    tokens: { requestTokens: 130532, limitTokens: 128000 },
  },
  {
    name: 'OpenAI Responses',
    client: () => openAiResponsesClient(new OpenAI({ baseURL, apiKey: 'k', maxRetries: 0 })),
    overflow: RESPONSES_OVERFLOW,
    answer: responsesAnswer,
    tokens: {},
  },
  {
    name: 'Anthropic Messages',
    client: () => anthropicMessagesClient(new Anthropic({ baseURL, apiKey: 'k', maxRetries: 0 }), { maxTokens: 100 }),
    overflow: ANTHROPIC_OVERFLOW,
    answer: anthropicAnswer,
    tokens: { requestTokens: 208310, limitTokens: 200000 },
  },
];

describe.each(cases)('$name on loopback', ({ client, overflow, answer, tokens }) => {
  it('maps the 400 overflow body to ContextOverflowError', async () => {
    replies.push({ status: 400, body: overflow });
    const error = await client()
      .create({ model: 'm', items: [userMessage('hi')] })
      .catch((e: unknown) => e);
    expect(isContextOverflowError(error)).toBe(true);
    expect(error).toMatchObject(tokens);
    expect((error as Error).message).toContain(overflow.error.message);
  });

  it('a run recovers and its re-run is identical', async () => {
    replies.push({ status: 400, body: overflow }, { status: 200, body: answer });
    const log = await openMemoryLog();
    let n = 0;
    const agent = Agents.react({ modelClient: client(), model: 'm', log, ids: () => `id-${++n}`, compactPolicy: new FactSummaryCompactPolicy({ maxItems: 2, compactAbove: 1000 }) });
    const session = await agent.newSession();
    await session.session.memory.record([{ type: 'user.input', items: history(6) }]);
    expect((await session.run('go on')).outputText).toBe('recovered');
    expect(paths).toHaveLength(2);
    const events = await readAll(log, session.id);
    expect(events.find((e) => e.type === 'model.failed')).toMatchObject({ reason: 'context-overflow', ...tokens });
    expect(events.find((e) => e.type === 'memory.compacted')).toMatchObject({ reason: { kind: 'overflow' } });
    expect((await replaySession(log, session.id, { mode: 'rerun' })).identical).toBe(true);
  });
});

describe('the AI SDK model client', () => {
  it('maps an APICallError for an overflow', async () => {
    const { aiSdkModelClient } = await import('../../src/bridges/ai-sdk/index.js');
    const { APICallError } = await import('ai');
    const model = {
      specificationVersion: 'v2',
      provider: 'test',
      modelId: 'm',
      supportedUrls: {},
      doGenerate: async () => {
        throw new APICallError({
          message: 'prompt is too long: 12 tokens > 10 maximum',
          url: 'http://127.0.0.1/',
          requestBodyValues: {},
          statusCode: 400,
          responseBody: JSON.stringify(ANTHROPIC_OVERFLOW),
          isRetryable: false,
        });
      },
      doStream: async () => {
        throw new Error('not used');
      },
    };
    const error = await aiSdkModelClient(model as never)
      .create({ model: 'm', items: [userMessage('hi')] })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'CONTEXT_OVERFLOW', requestTokens: 12, limitTokens: 10 });
  });
});
