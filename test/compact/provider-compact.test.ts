// ProviderCompactPolicy with the real SDKs against a fake provider on 127.0.0.1 that answers in the providers' own shapes:
// OpenAI `responses.compact` (openai 6.46) and Anthropic's compaction request (@anthropic-ai/sdk 1.16), recorded as
// memory.compacted and reproduced by replay in both modes.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  Agents,
  PROVIDER_COMPACTION_KEY,
  ProviderCompactPolicy,
  ScriptedModelClient,
  compactPolicyFromDescription,
  defineTool,
  isEmptySummaryError,
  isInvalidOptionsError,
  modelClientCompactor,
  openMemoryLog,
  replaySession,
  userMessage,
  type SessionEvent,
  type SessionEventLog,
} from '../../src/index.js';
import { anthropicCompactor, anthropicMessagesClient, openAiResponsesClient, openAiResponsesCompactor } from '../../src/adapters/index.js';
import { checkSessionLaws } from '../../src/testing/runtime-laws.js';

type Json = Record<string, unknown>;

interface Recorded {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Json;
}

/** A fake provider: answers each request from the script of its route (`compact` or `model`), records every request. */
const startProvider = async (route: (path: string, body: Json) => 'compact' | 'model') => {
  const requests: Recorded[] = [];
  const scripts: Record<'compact' | 'model', unknown[]> = { compact: [], model: [] };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Json;
      requests.push({ path: req.url ?? '', headers: req.headers, body });
      const reply = scripts[route(req.url ?? '', body)].shift();
      res.writeHead(reply ? 200 : 500, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply ?? { error: { type: 'api_error', message: 'fake provider: no reply scripted' } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}`,
    requests,
    scripts,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};
type Provider = Awaited<ReturnType<typeof startProvider>>;

const readAll = async (log: SessionEventLog, id: string): Promise<SessionEvent[]> => {
  const out: SessionEvent[] = [];
  for await (const e of log.read(id)) out.push(e);
  return out;
};

const echo = defineTool({ name: 'echo', description: 'Echo the text', parameters: z.object({ text: z.string() }), execute: async ({ text }) => `echo: ${text} ${'·'.repeat(40)}` });

// ---------------------------------------------------------------------------------------------
// The providers' shapes (the SDKs' own types: openai CompactedResponse, Response; @anthropic-ai/sdk BetaMessage, Message)

const responsesUsage = (input: number, output: number) => ({
  input_tokens: input,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: output,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: input + output,
});
const response = (id: string, output: unknown[]): Json => ({
  id,
  object: 'response',
  created_at: 1_760_000_000,
  status: 'completed',
  error: null,
  incomplete_details: null,
  instructions: null,
  model: 'gpt-5.4',
  output,
  parallel_tool_calls: true,
  temperature: 1,
  tool_choice: 'auto',
  tools: [],
  top_p: 1,
  usage: responsesUsage(300, 20),
});
const responsesCall = (n: number): Json => ({ type: 'function_call', id: `fc_${n}`, call_id: `call_${n}`, name: 'echo', arguments: JSON.stringify({ text: `turn ${n}` }), status: 'completed' });
const responsesText = (text: string): Json => ({ type: 'message', id: 'msg_final', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] });
/** `responses.compact`'s answer: the user messages, then one compaction item. */
const compactedResponse = (userText: string): Json => ({
  id: 'resp_cmp_1',
  object: 'response.compaction',
  created_at: 1_760_000_100,
  output: [
    { id: 'msg_u1', type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: userText }] },
    { id: 'cmp_1', type: 'compaction', encrypted_content: 'gAAAAABo-opaque-compacted-context' },
  ],
  usage: responsesUsage(1200, 80),
});

const anthropicUsage = (input: number, output: number): Json => ({ input_tokens: input, output_tokens: output, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
const anthropicMessage = (id: string, content: unknown[], stop: string): Json => ({
  id,
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content,
  stop_reason: stop,
  stop_sequence: null,
  usage: anthropicUsage(300, 20),
});
/** Anthropic's compaction answer (`compaction: {type:'summarize'}`): one signed compaction block, stop reason `compaction`. */
const anthropicCompaction = (content: string | null): Json => ({
  id: 'msg_cmp_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content: [{ type: 'compaction', content, encrypted_content: 'EqQBCkgIARABGAIi-opaque', signature: 'sig-compaction-1' }],
  stop_reason: 'compaction',
  stop_sequence: null,
  context_management: null,
  usage: { ...anthropicUsage(1500, 120), iterations: [{ type: 'compaction', input_tokens: 1500, output_tokens: 120, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, cache_creation: null }] },
});

let provider: Provider | undefined;
afterEach(async () => {
  await provider?.close();
  provider = undefined;
});

// responses.compact came in openai 6.10.0: the SDK matrix runs this file from 6.0.0 on.
const hasResponsesCompact = typeof new OpenAI({ apiKey: 'test-key' }).responses.compact === 'function';

describe('openAiResponsesCompactor and the client it is given', () => {
  it('refuses a client without responses.compact (openai before 6.10) with a named error, at once', () => {
    const old = { responses: { create: () => undefined } } as unknown as OpenAI;
    expect(() => openAiResponsesCompactor(old)).toThrow(/client\.responses\.compact: is not a function: .*openai 6\.10\.0/);
    expect(() => openAiResponsesCompactor(old)).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
    if (!hasResponsesCompact) expect(() => openAiResponsesCompactor(new OpenAI({ apiKey: 'test-key' }))).toThrow(/openai 6\.10\.0/);
    else expect(openAiResponsesCompactor(new OpenAI({ apiKey: 'test-key' })).provider).toBe('openai-responses');
  });
});

if (hasResponsesCompact) {
  describe('ProviderCompactPolicy over OpenAI responses.compact', () => {
    beforeEach(async () => {
      provider = await startProvider((path) => (path.endsWith('/responses/compact') ? 'compact' : 'model'));
    });

    it('a run compacts through the real SDK: the compaction item replaces the old items, is sent back, recorded with usage and tokens; replay reproduces it in both modes', async () => {
      const client = new OpenAI({ apiKey: 'test', baseURL: provider!.baseURL, maxRetries: 0 });
      provider!.scripts.model.push(...[0, 1, 2, 3].map((n) => response(`resp_${n}`, [responsesCall(n)])), response('resp_4', [responsesText('all echoed')]));
      provider!.scripts.compact.push(compactedResponse('echo four things'));
      const log = await openMemoryLog();
      let n = 0;
      const agent = Agents.react({
        modelClient: openAiResponsesClient(client),
        model: 'gpt-5.4',
        tools: [echo],
        log,
        compactPolicy: new ProviderCompactPolicy(openAiResponsesCompactor(client), { model: 'gpt-5.4', compactAbove: 6, maxItems: 2, instructions: 'Keep file paths.' }),
        ids: () => `id-${++n}`,
      });
      const session = await agent.newSession();
      const run = await session.run('echo four things');
      expect(run.outputText).toBe('all echoed');

      // the request the SDK sent to responses.compact
      const compactRequests = provider!.requests.filter((r) => r.path.endsWith('/responses/compact'));
      expect(compactRequests).toHaveLength(1);
      expect(compactRequests[0]!.body).toMatchObject({ model: 'gpt-5.4', instructions: 'Keep file paths.' });
      const sentToCompact = compactRequests[0]!.body['input'] as Json[];
      expect(sentToCompact[0]).toMatchObject({ type: 'message', role: 'user' });
      expect(sentToCompact.map((i) => i['type'])).toContain('function_call_output');

      // the recorded compaction: the provider's items inline, usage as the other usages, tokens before and after, the answer for replay
      const events = await readAll(log, session.id);
      const compacted = events.filter((e): e is Extract<SessionEvent, { type: 'memory.compacted' }> => e.type === 'memory.compacted');
      expect(compacted).toHaveLength(1);
      const event = compacted[0]!;
      expect(event.policy).toEqual({
        name: 'ProviderCompactPolicy',
        settings: { provider: 'openai-responses', model: 'gpt-5.4', maxItems: 2, compactAbove: 6, instructions: 'Keep file paths.' },
      });
      const inline = event.layout.flatMap((slot) => ('item' in slot ? [slot.item] : []));
      expect(inline).toContainEqual({ id: 'cmp_1', type: 'compaction', encrypted_content: 'gAAAAABo-opaque-compacted-context' });
      expect(event.droppedIds.length).toBe(sentToCompact.length);
      expect(event.usage).toMatchObject({ inputTokens: 1200, outputTokens: 80, totalTokens: 1280, cachedInputTokens: 0, raw: responsesUsage(1200, 80) });
      expect(event.tokens!.before).toBeGreaterThan(event.tokens!.after);
      expect(event.reason).toMatchObject({ kind: 'items', threshold: 6 });
      const recorded = JSON.parse(event.summarizer!.rawAnswer) as Json;
      expect(recorded[PROVIDER_COMPACTION_KEY]).toMatchObject({ response: { id: 'resp_cmp_1', object: 'response.compaction', usage: responsesUsage(1200, 80) } });
      expect(event.summarizer!.request).toEqual({ provider: 'openai-responses', model: 'gpt-5.4', items: sentToCompact.length, instructions: 'Keep file paths.' });
      // every original item is still in the log
      const firstCall = events.find((e) => e.type === 'model.responded' && e.items.some((i) => i['call_id'] === 'call_0'));
      expect(firstCall).toBeDefined();

      // the next model request starts with what the compaction left: the user message, then the compaction item
      const after = provider!.requests.filter((r) => r.path.endsWith('/responses')).at(-1)!.body['input'] as Json[];
      expect(after.slice(0, 2)).toEqual([
        { id: 'msg_u1', type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: 'echo four things' }] },
        { id: 'cmp_1', type: 'compaction', encrypted_content: 'gAAAAABo-opaque-compacted-context' },
      ]);

      expect(checkSessionLaws(events)).toEqual([]);
      const before = provider!.requests.length;
      expect(await replaySession(log, session.id, { mode: 'project' })).toMatchObject({ identical: true });
      const rerun = await replaySession(log, session.id, { mode: 'rerun' });
      expect(rerun.firstDivergence).toBeUndefined();
      expect(rerun.identical).toBe(true);
      // the replay called no provider: the compaction came from the recording
      expect(provider!.requests.length).toBe(before);
      await log.close();
    });

    it('an answer without items is a compaction.failed (memory untouched), and a re-run raises it again', async () => {
      const client = new OpenAI({ apiKey: 'test', baseURL: provider!.baseURL, maxRetries: 0 });
      provider!.scripts.model.push(...[0, 1, 2, 3].map((n) => response(`resp_${n}`, [responsesCall(n)])), response('resp_4', [responsesText('done')]));
      provider!.scripts.compact.push({ ...compactedResponse('x'), output: [] }, { ...compactedResponse('x'), output: [] });
      const log = await openMemoryLog();
      let n = 0;
      const agent = Agents.react({
        modelClient: openAiResponsesClient(client),
        model: 'gpt-5.4',
        tools: [echo],
        log,
        compactPolicy: new ProviderCompactPolicy(openAiResponsesCompactor(client), { model: 'gpt-5.4', compactAbove: 6, maxItems: 2 }),
        ids: () => `f-${++n}`,
      });
      const session = await agent.newSession();
      await session.run('echo');
      const events = await readAll(log, session.id);
      const failed = events.filter((e) => e.type === 'compaction.failed');
      expect(failed.length).toBeGreaterThan(0);
      expect(failed[0]).toMatchObject({ stage: 'compact', policy: { name: 'ProviderCompactPolicy' } });
      expect((failed[0] as { error: string }).error).toMatch(/openai-responses returned no compacted items/);
      expect(events.some((e) => e.type === 'memory.compacted')).toBe(false);
      expect(checkSessionLaws(events)).toEqual([]);
      const rerun = await replaySession(log, session.id, { mode: 'rerun' });
      expect(rerun.firstDivergence).toBeUndefined();
      expect(rerun.identical).toBe(true);
      await log.close();
    });
  });
}

describe('ProviderCompactPolicy over Anthropic compaction (compaction: {type: summarize})', () => {
  beforeEach(async () => {
    provider = await startProvider((_path, body) => (body['compaction'] !== undefined ? 'compact' : 'model'));
  });

  const toolUse = (n: number): Json => ({ type: 'tool_use', id: `toolu_${n}`, name: 'echo', input: { text: `turn ${n}` } });

  it('a run compacts through the real SDK: the signed compaction block replaces the old items and is sent first; replay reproduces it in both modes', async () => {
    const client = new Anthropic({ apiKey: 'test', baseURL: provider!.baseURL, maxRetries: 0 });
    provider!.scripts.model.push(
      ...[0, 1, 2, 3].map((n) => anthropicMessage(`msg_${n}`, [toolUse(n)], 'tool_use')),
      anthropicMessage('msg_4', [{ type: 'text', text: 'all echoed' }], 'end_turn'),
    );
    provider!.scripts.compact.push(anthropicCompaction('The user asked to echo four things; turns 0-2 echoed.'));
    const log = await openMemoryLog();
    let n = 0;
    const agent = Agents.react({
      modelClient: anthropicMessagesClient(client, { maxTokens: 1024 }),
      model: 'claude-sonnet-4-5',
      tools: [echo],
      log,
      compactPolicy: new ProviderCompactPolicy(anthropicCompactor(client, { maxTokens: 4096 }), { model: 'claude-sonnet-4-5', compactAbove: 6, maxItems: 2 }),
      ids: () => `a-${++n}`,
    });
    const session = await agent.newSession();
    const run = await session.run('echo four things');
    expect(run.outputText).toBe('all echoed');

    const compactRequests = provider!.requests.filter((r) => r.body['compaction'] !== undefined);
    expect(compactRequests).toHaveLength(1);
    // @anthropic-ai/sdk before 1.x's later releases adds ?beta=true to a beta request's path
    expect(compactRequests[0]!.path).toMatch(/^\/v1\/messages(\?beta=true)?$/);
    expect(compactRequests[0]!.headers['anthropic-beta']).toBe('compact-2026-09-04');
    expect(compactRequests[0]!.body).toMatchObject({ model: 'claude-sonnet-4-5', max_tokens: 4096, compaction: { type: 'summarize' } });

    const events = await readAll(log, session.id);
    const event = events.find((e): e is Extract<SessionEvent, { type: 'memory.compacted' }> => e.type === 'memory.compacted')!;
    const block = { type: 'compaction', content: 'The user asked to echo four things; turns 0-2 echoed.', encrypted_content: 'EqQBCkgIARABGAIi-opaque', signature: 'sig-compaction-1' };
    expect(event.layout.filter((slot) => 'item' in slot).map((slot) => (slot as { item: unknown }).item)).toEqual([{ type: 'message', role: 'assistant', content: [block] }]);
    expect(event.usage).toMatchObject({ inputTokens: 1500, outputTokens: 120 });
    expect(JSON.parse(event.summarizer!.rawAnswer)[PROVIDER_COMPACTION_KEY].response).toMatchObject({ id: 'msg_cmp_1', stop_reason: 'compaction' });

    // the next request sends the block back, first, as the assistant turn it came in (after the API's required user turn)
    const next = provider!.requests.filter((r) => r.body['compaction'] === undefined).at(-1)!.body['messages'] as Json[];
    expect(next.flatMap((m) => (Array.isArray(m['content']) ? (m['content'] as Json[]) : [])).find((b) => b['type'] === 'compaction')).toEqual(block);

    expect(checkSessionLaws(events)).toEqual([]);
    const before = provider!.requests.length;
    expect(await replaySession(log, session.id, { mode: 'project' })).toMatchObject({ identical: true });
    const rerun = await replaySession(log, session.id, { mode: 'rerun' });
    expect(rerun.firstDivergence).toBeUndefined();
    expect(rerun.identical).toBe(true);
    expect(provider!.requests.length).toBe(before);
    await log.close();
  });

  it('a compaction block whose content is null (a failed compaction) gives no items: EMPTY_SUMMARY, memory untouched', async () => {
    const client = new Anthropic({ apiKey: 'test', baseURL: provider!.baseURL, maxRetries: 0 });
    provider!.scripts.compact.push(anthropicCompaction(null));
    const policy = new ProviderCompactPolicy(anthropicCompactor(client, { maxTokens: 4096 }), { model: 'claude-sonnet-4-5' });
    const failure = await policy.compact({ items: [userMessage('hello')], summary: null }).catch((e: unknown) => e);
    expect(isEmptySummaryError(failure) && failure.message).toMatch(/anthropic returned no compacted items/);
  });
});

describe('ProviderCompactPolicy against a ModelClient, and rebuilt from its description', () => {
  it('a user ModelClient that compacts supplies the call; a given item that equals an old one keeps its id', async () => {
    const client = new ScriptedModelClient([{ items: [userMessage('keep me'), { type: 'opaque_summary', data: 'x' }], usage: { inputTokens: 50, outputTokens: 5 } }]);
    const policy = new ProviderCompactPolicy(modelClientCompactor(client, 'my-provider'), { model: 'm', maxItems: 1 });
    const old = userMessage('keep me');
    const snapshot = { items: [old, { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' }, { type: 'function_call_output', call_id: 'c', output: 'o' }, userMessage('newest')], summary: 'a summary' };
    const result = await policy.compact(snapshot);
    expect(result.memory!.items[0]).toBe(old);
    expect(result.memory!.items.slice(1)).toEqual([{ type: 'opaque_summary', data: 'x' }, userMessage('newest')]);
    expect(result.memory!.summary).toBe('a summary');
    expect(result.usage).toEqual({ inputTokens: 50, outputTokens: 5 });
    expect(policy.describe().settings['provider']).toBe('my-provider');
    // the same client given directly (a ModelClient) works too
    expect(new ProviderCompactPolicy(new ScriptedModelClient([]), { model: 'm' }).compactor.provider).toBe('model-client');
  });

  it('compactPolicyFromDescription rebuilds it around the summarizer (a replay gives the recorded answers); without one it says what it needs', async () => {
    const policy = new ProviderCompactPolicy(modelClientCompactor(new ScriptedModelClient([]), 'openai-responses'), { model: 'gpt-5.4', maxItems: 2, compactAboveTokens: 900, keepTokens: 300 });
    const recorded = JSON.stringify({ [PROVIDER_COMPACTION_KEY]: { items: [{ type: 'compaction', id: 'cmp', encrypted_content: 'e' }], response: { id: 'r' } } });
    const rebuilt = compactPolicyFromDescription(policy.describe(), { summarizer: new ScriptedModelClient([{ outputText: recorded, items: [] }]) });
    expect(rebuilt.describe!()).toEqual(policy.describe());
    const result = await rebuilt.compact({ items: [userMessage('a'), userMessage('b'), userMessage('c')], summary: null });
    expect(result.memory!.items[0]).toEqual({ type: 'compaction', id: 'cmp', encrypted_content: 'e' });
    const missing = (() => {
      try {
        return compactPolicyFromDescription(policy.describe());
      } catch (e) {
        return e;
      }
    })();
    expect(isInvalidOptionsError(missing) && missing.issues[0]!.path).toBe('summarizer');
  });

  it('bad options and compactors are refused by name', () => {
    const refused = (build: () => unknown): unknown => {
      try {
        build();
        return 'built';
      } catch (e) {
        return isInvalidOptionsError(e) ? e.issues.map((i) => i.path).join(',') : String(e);
      }
    };
    expect(refused(() => new ProviderCompactPolicy({} as never, { model: 'm' }))).toBe('');
    expect(refused(() => new ProviderCompactPolicy(new ScriptedModelClient([]), { model: '' }))).toBe('model');
    expect(refused(() => new ProviderCompactPolicy(new ScriptedModelClient([]), { model: 'm', maxItems: -1 }))).toBe('maxItems');
    expect(refused(() => new ProviderCompactPolicy(new ScriptedModelClient([]), { model: 'm', compactAboveTokens: 10, keepTokens: 20 }))).toBe('keepTokens');
    expect(refused(() => new ProviderCompactPolicy(new ScriptedModelClient([]), { model: 'm', typo: 1 } as never))).toBe('typo');
  });
});
