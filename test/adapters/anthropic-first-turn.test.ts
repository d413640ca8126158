// Anthropic's first-turn rule: a projection that drops the opening request still sends a user turn first, recorded with the request.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Anthropic } from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { anthropicMessagesClient } from '../../src/adapters/index.js';
import {
  fatesOf,
  ANTHROPIC_FIRST_TURN_PLACEHOLDER,
  Agents,
  DefaultContextProjector,
  assistantMessage,
  defineTool,
  functionCall,
  functionCallOutput,
  openMemoryLog,
  replaySession,
  toAnthropicMessages,
  userMessage,
  type SessionEvent,
} from '../../src/index.js';
import { checkSessionLaws } from '../../src/testing/runtime-laws.js';

type Json = Record<string, unknown>;
let server: Server;
let baseURL = '';
const bodies: Json[] = [];
const replies: Json[] = [];
const message = (id: string, content: unknown[]): Json => ({
  id,
  type: 'message',
  role: 'assistant',
  model: 'claude-test',
  content,
  stop_reason: content.some((b) => (b as { type: string }).type === 'tool_use') ? 'tool_use' : 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 10, output_tokens: 5 },
});

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json;
      bodies.push(body);
      const first = (body['messages'] as { role: string }[])[0];
      // the real API's rule
      if (first?.role !== 'user') {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'messages: first message must use the "user" role' } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(replies.shift() ?? message('msg_x', [{ type: 'text', text: 'no reply scripted' }])));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const readAll = async (log: { read(id: string): AsyncIterable<SessionEvent> }, id: string): Promise<SessionEvent[]> => {
  const out: SessionEvent[] = [];
  for await (const e of log.read(id)) out.push(e);
  return out;
};

describe('Anthropic first turn', () => {
  it('the strict export puts a placeholder user turn first when a projection starts with an assistant or tool item', () => {
    const items = [userMessage('list files'), functionCall('t1', 'ls', {}), functionCallOutput('t1', 'a.ts'), assistantMessage('one file')];
    const projection = new DefaultContextProjector().project(items, { maxItems: 3 });
    expect(projection.items[0]).toMatchObject({ type: 'function_call' });
    const strict = toAnthropicMessages(projection.items, { strict: true });
    expect(strict.messages[0]).toEqual({ role: 'user', content: ANTHROPIC_FIRST_TURN_PLACEHOLDER });
    expect(strict.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    // a conversation that starts with the user gets nothing; the lossless mode never adds anything
    expect(toAnthropicMessages(items, { strict: true }).messages[0]).toEqual({ role: 'user', content: 'list files' });
    expect(toAnthropicMessages(projection.items).messages[0]?.role).toBe('assistant');
  });

  it('a run whose projection drops the first user message is accepted, and model.requested records the placeholder', async () => {
    replies.push(
      message('msg_1', [{ type: 'tool_use', id: 'toolu_1', name: 'ls', input: {} }]),
      message('msg_2', [{ type: 'text', text: 'one file: a.ts' }]),
    );
    const log = await openMemoryLog();
    const ls = defineTool({ name: 'ls', description: 'List files', parameters: z.object({}), execute: () => 'a.ts' });
    const agent = Agents.react({
      modelClient: anthropicMessagesClient(new Anthropic({ baseURL, apiKey: 'test-key', maxRetries: 0 }), { maxTokens: 256 }),
      model: 'claude-test',
      tools: [ls],
      log,
      contextBudget: { maxItems: 2 },
    });
    const session = await agent.newSession();
    const result = await session.run('what files are there?');
    expect(result.outputText).toBe('one file: a.ts');
    const second = bodies.at(-1)!['messages'] as Json[];
    expect(second[0]).toEqual({ role: 'user', content: ANTHROPIC_FIRST_TURN_PLACEHOLDER });
    expect(second.map((m) => m['role'])).toEqual(['user', 'assistant', 'user']);
    const events = await readAll(log, session.id);
    const requested = events.filter((e): e is Extract<SessionEvent, { type: 'model.requested' }> => e.type === 'model.requested');
    expect(requested[0]!.adapter).toBeUndefined();
    expect(requested[1]!.adapter).toEqual({ firstTurnPlaceholder: ANTHROPIC_FIRST_TURN_PLACEHOLDER });
    const projected = events.filter((e): e is Extract<SessionEvent, { type: 'context.projected' }> => e.type === 'context.projected');
    expect(fatesOf(projected[1]!)[0]).toMatchObject({ fate: 'dropped' });
    expect(checkSessionLaws(events)).toEqual([]);
    // a re-run gives each request the placeholder the recorded client added (it answered describeRequest from nothing before)
    const rerun = await replaySession(log, session.id, { mode: 'rerun' });
    expect(rerun.firstDivergence).toBeUndefined();
    expect(rerun.identical).toBe(true);
  });
});
