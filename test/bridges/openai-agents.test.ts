// The OpenAI Agents SDK bridge with the real SDK's run() against a loopback server that answers like the Responses API.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, run, setDefaultOpenAIClient, setTracingDisabled, tool, type AgentInputItem } from '@openai/agents';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fatesOf, openMemoryLog, StructuredSummaryCompactPolicy, type SessionEvent } from '../../src/index.js';
import { fromAgentInputItems, openLedgerSession, POP_ITEM_POLICY, toAgentInputItems } from '../../src/bridges/openai-agents/index.js';
import { checkSessionLaws } from '../../src/testing/runtime-laws.js';

type Json = Record<string, unknown>;

const readAll = async (log: { read(id: string): AsyncIterable<SessionEvent> }, id: string): Promise<SessionEvent[]> => {
  const out: SessionEvent[] = [];
  for await (const e of log.read(id)) out.push(e);
  return out;
};

const response = (id: string, output: unknown[]): Json => ({
  id,
  object: 'response',
  created_at: 1_700_000_000,
  status: 'completed',
  error: null,
  incomplete_details: null,
  instructions: null,
  model: 'gpt-test',
  output,
  parallel_tool_calls: true,
  temperature: 1,
  tool_choice: 'auto',
  tools: [],
  top_p: 1,
  usage: { input_tokens: 20, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 25 },
});
const message = (id: string, text: string): Json => ({ type: 'message', id, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] });
const functionCall = (id: string, callId: string, args: object): Json => ({ type: 'function_call', id, call_id: callId, name: 'lookup', arguments: JSON.stringify(args), status: 'completed' });

let server: Server;
const requests: Json[] = [];
const replies: Json[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json);
      const reply = replies.shift();
      res.writeHead(reply ? 200 : 500, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply ?? { error: { message: 'no reply scripted' } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  setTracingDisabled(true);
  setDefaultOpenAIClient(new OpenAI({ apiKey: 'test-key', baseURL: `http://127.0.0.1:${port}`, maxRetries: 0 }) as never);
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const lookup = tool({
  name: 'lookup',
  description: 'Look a word up',
  parameters: z.object({ word: z.string() }),
  execute: async ({ word }) => `definition of ${word}`,
});
const agent = new Agent({ name: 'helper', instructions: 'Be brief.', model: 'gpt-test', tools: [lookup] });

describe('openai-agents bridge', () => {
  it('model.requested records the instructions, tools, handoffs and settings the model received', async () => {
    const log = await openMemoryLog();
    const session = await openLedgerSession(log, { sessionId: 'agents-sent' });
    const expert = new Agent({ name: 'expert', handoffDescription: 'knows words' });
    const tuned = new Agent({ name: 'helper', instructions: 'Be brief.', model: 'gpt-test', tools: [lookup], handoffs: [expert], modelSettings: { temperature: 0.3, maxTokens: 200 } });
    requests.length = 0;
    replies.push(response('resp_s1', [functionCall('fc_s1', 'call_s1', { word: 'alpha' })]), response('resp_s2', [message('msg_s1', 'a letter')]));
    await run(tuned, 'define alpha', { session, callModelInputFilter: session.callModelInputFilter });
    const events = await readAll(log, 'agents-sent');
    expect(checkSessionLaws(events)).toEqual([]);
    const requested = events.filter((e): e is Extract<SessionEvent, { type: 'model.requested' }> => e.type === 'model.requested');
    expect(requested).toHaveLength(2);
    expect(requests).toHaveLength(2);
    requested.forEach((event, i) => {
      const body = requests[i]!;
      expect(event.systemPrompt).toBe(body['instructions']);
      const sent = (body['tools'] as Json[]).map(({ type, name, description, parameters, strict }) => ({ type, name, description, parameters, strict }));
      expect(sent.map((t) => t.name)).toEqual(['lookup', 'transfer_to_expert']);
      expect(event.tools).toEqual(sent);
      expect(body['temperature']).toBe(0.3);
      expect(body['max_output_tokens']).toBe(200);
      expect(event.settings).toEqual({ temperature: 0.3, maxTokens: 200 });
    });
  });

  it('run() with the ledger session and input filter: a tool call turn, then an answer; recorded, projected, lawful', async () => {
    const log = await openMemoryLog();
    const session = await openLedgerSession(log, { sessionId: 'agents-1', contextBudget: { maxItems: 3 } });
    requests.length = 0;
    replies.push(response('resp_1', [functionCall('fc_1', 'call_1', { word: 'alpha' })]), response('resp_2', [message('msg_1', 'alpha is a letter')]));
    const result = await run(agent, 'define alpha', { session, callModelInputFilter: session.callModelInputFilter });
    expect(result.finalOutput).toBe('alpha is a letter');
    expect(requests).toHaveLength(2);
    // the second request carries the call and its output together
    const secondInput = requests[1]!['input'] as Json[];
    expect(secondInput.map((i) => i['type'] ?? 'message')).toEqual(['message', 'function_call', 'function_call_output']);
    expect(secondInput[2]).toMatchObject({ call_id: 'call_1', output: 'definition of alpha' });

    // a second turn: the budget (3 items) drops the first request; the pair of the newest... the model gets the projection
    replies.push(response('resp_3', [message('msg_2', 'you are welcome')]));
    const second = await run(agent, 'thanks', { session, callModelInputFilter: session.callModelInputFilter });
    expect(second.finalOutput).toBe('you are welcome');
    const thirdInput = requests[2]!['input'] as Json[];
    expect(thirdInput.length).toBeLessThanOrEqual(3);
    expect(thirdInput.at(-1)).toMatchObject({ role: 'user', content: 'thanks' });

    const events = await readAll(log, 'agents-1');
    expect(checkSessionLaws(events)).toEqual([]);
    const projected = events.filter((e): e is Extract<SessionEvent, { type: 'context.projected' }> => e.type === 'context.projected');
    expect(projected.map((e) => e.step)).toEqual([1, 2, 3]);
    expect(projected[2]!.report.droppedItemCount).toBeGreaterThan(0);
    expect(fatesOf(projected[2]!).filter((f) => f.fate === 'dropped').map((f) => f.rule).length).toBe(projected[2]!.report.droppedItemCount);
    // nothing recorded twice: the runner persisted what the filter had already recorded
    const items = await session.getItems();
    expect(items.map((i) => (i as Json)['type'] ?? 'message')).toEqual(['message', 'function_call', 'function_call_result', 'message', 'message', 'message']);
    // the SDK's result output is an object ({type:'text'}), kept whole in model.output (a tool.result holds a string only)
    const outputs = events.flatMap((e) => ('items' in e ? (e.items as Json[]) : [])).filter((i) => i['type'] === 'function_call_output');
    expect(outputs).toHaveLength(1);
    // getItems(limit) gives the newest items, oldest first
    expect(await session.getItems(2)).toEqual(items.slice(-2));
    await expect(session.getItems(-1)).rejects.toThrow(/limit/);
  });

  it('popItem removes the newest item with an event that keeps every other id; clearSession empties; both lawful', async () => {
    const log = await openMemoryLog();
    const session = await openLedgerSession(log, { sessionId: 'agents-pop' });
    const given: AgentInputItem[] = [
      { role: 'user', content: 'hi' },
      { type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'hello' }] },
      { role: 'user', content: 'oops' },
    ];
    await session.addItems(given);
    expect(await session.getItems()).toEqual(given);
    expect(await session.popItem()).toEqual(given[2]);
    expect(await session.getItems()).toEqual(given.slice(0, 2));
    const events = await readAll(log, 'agents-pop');
    const pop = events.find((e) => e.type === 'memory.compacted') as Extract<SessionEvent, { type: 'memory.compacted' }>;
    expect(pop.policy).toEqual(POP_ITEM_POLICY);
    expect(pop.keptIds).toEqual(session.session.memory.getEntries().map((e) => e.id));
    expect(pop.droppedIds).toHaveLength(1);
    await session.popItem();
    await session.popItem();
    expect(await session.popItem()).toBeUndefined();
    await session.addItems([{ role: 'user', content: 'again' }]);
    await session.clearSession();
    expect(await session.getItems()).toEqual([]);
    expect(checkSessionLaws(await readAll(log, 'agents-pop'))).toEqual([]);
    // the session is resumed from the log by id
    const again = await openLedgerSession(log, { sessionId: 'agents-pop' });
    expect(await again.getSessionId()).toBe('agents-pop');
    expect(await again.getItems()).toEqual([]);
  });

  it('runCompaction runs the compaction policy (the runner calls it after each turn)', async () => {
    const log = await openMemoryLog();
    const session = await openLedgerSession(log, { sessionId: 'agents-compact', compactPolicy: new StructuredSummaryCompactPolicy({ maxItems: 2 }) });
    await session.addItems([
      { role: 'user', content: 'one' },
      { role: 'user', content: 'two' },
    ]);
    expect(await session.runCompaction()).toBeNull();
    await session.addItems([{ role: 'user', content: 'three' }]);
    const result = await session.runCompaction();
    expect(result?.usage).toBeDefined();
    const items = await session.getItems();
    expect(items[0]).toMatchObject({ role: 'system' });
    expect(items.slice(1)).toEqual([{ role: 'user', content: 'two' }, { role: 'user', content: 'three' }]);
    expect(checkSessionLaws(await readAll(log, 'agents-compact'))).toEqual([]);
    const none = await openLedgerSession(log, { sessionId: 'agents-none' });
    expect(await none.runCompaction({ force: true })).toBeNull();
  });

  it('converters keep callId, function_call_result, reasoning and hosted tool calls', () => {
    const items: AgentInputItem[] = [
      { type: 'reasoning', content: [{ type: 'input_text', text: 'think' }] },
      { type: 'function_call', callId: 'c1', name: 'lookup', arguments: '{"word":"a"}', id: 'fc_1', status: 'completed' },
      { type: 'function_call_result', callId: 'c1', name: 'lookup', status: 'completed', output: { type: 'text', text: 'A' } },
      { type: 'hosted_tool_call', name: 'web_search_call', status: 'completed', id: 'ws_1' },
      { type: 'computer_call', callId: 'cc1', status: 'completed', action: { type: 'screenshot' } },
      { type: 'computer_call_result', callId: 'cc1', output: { type: 'computer_screenshot', data: 'data:image/png;base64,AA' } },
    ];
    const memory = fromAgentInputItems(items);
    expect(memory.map((i) => i.type)).toEqual(['reasoning', 'function_call', 'function_call_output', 'hosted_tool_call', 'function_call', 'function_call_output']);
    expect(memory[1]).toMatchObject({ call_id: 'c1', name: 'lookup' });
    expect(memory[2]).toMatchObject({ call_id: 'c1', output: 'A' });
    expect(memory[4]).toMatchObject({ call_id: 'cc1' });
    expect(toAgentInputItems(memory)).toEqual(items);
    // a Tier-1 cleared result goes as text, with the name of its call
    expect(toAgentInputItems([memory[1]!, { type: 'function_call_output', call_id: 'c1', output: '[tool result cleared: lookup(c1)]' }])[1]).toEqual({
      type: 'function_call_result',
      callId: 'c1',
      name: 'lookup',
      status: 'completed',
      output: '[tool result cleared: lookup(c1)]',
    });
  });

  it('the input filter, given a history the log does not have (rewritten by the runner), records a restore and stays lawful', async () => {
    const log = await openMemoryLog();
    const session = await openLedgerSession(log, { sessionId: 'agents-rewrite', contextBudget: { maxItems: 2 } });
    await session.addItems([{ role: 'user', content: 'first' }, { role: 'user', content: 'second' }]);
    const input: AgentInputItem[] = [{ role: 'user', content: 'other' }, { role: 'user', content: 'third' }, { role: 'user', content: 'fourth' }];
    const filtered = await session.callModelInputFilter({ modelData: { input, instructions: 'x' }, agent: agent as never, context: undefined });
    expect(filtered.input).toEqual(input.slice(1));
    expect(filtered.instructions).toBe('x');
    const events = await readAll(log, 'agents-rewrite');
    expect(events.some((e) => e.type === 'memory.restored')).toBe(true);
    expect(checkSessionLaws(events)).toEqual([]);
    // the runner then persists the turn's input: not recorded twice
    await session.addItems(input);
    expect(await session.getItems()).toEqual(input);
  });
});
