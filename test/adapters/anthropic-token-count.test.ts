// Anthropic token counts through count_tokens: fetched before projecting, cached per text, recorded, read back by replay.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Anthropic } from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { anthropicMessagesClient, anthropicTokenCounter } from '../../src/adapters/index.js';
import { Agents, TypeAwareContextProjector, defineTool, openMemoryLog, replayContext, replaySession, textDigest, type SessionEvent } from '../../src/index.js';
import { checkSessionLaws } from '../../src/testing/runtime-laws.js';

type Json = Record<string, unknown>;
let server: Server;
let baseURL = '';
const counted: string[] = [];
const replies: Json[] = [];
const words = (text: string): number => text.split(/\s+/).filter(Boolean).length;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json;
      res.writeHead(200, { 'content-type': 'application/json' });
      if (req.url?.startsWith('/v1/messages/count_tokens')) {
        const text = ((body['messages'] as Json[])[0]!['content'] as string) ?? '';
        counted.push(text);
        res.end(JSON.stringify({ input_tokens: 7 + words(text) })); // 7 tokens of framing, one per word
        return;
      }
      res.end(JSON.stringify(replies.shift()));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const message = (id: string, content: unknown[]): Json => ({
  id, type: 'message', role: 'assistant', model: 'claude-test', content,
  stop_reason: content.some((b) => (b as { type: string }).type === 'tool_use') ? 'tool_use' : 'end_turn',
  stop_sequence: null, usage: { input_tokens: 10, output_tokens: 5 },
});

describe('anthropicTokenCounter', () => {
  it('counts each text once through count_tokens, records the counts, and replay reads them back without the client', async () => {
    const client = new Anthropic({ baseURL, apiKey: 'test-key', maxRetries: 0 });
    const tokenizer = anthropicTokenCounter(client, { model: 'claude-test' });
    expect(() => tokenizer.count('not fetched')).toThrow(/was not counted; prefetch/);
    replies.push(
      message('m1', [{ type: 'tool_use', id: 't1', name: 'read', input: { path: 'a' } }]),
      message('m2', [{ type: 'text', text: 'the file says hello world' }]),
    );
    const read = defineTool({ name: 'read', description: 'Read', parameters: z.object({ path: z.string() }), execute: () => 'one two three four five six seven eight' });
    const log = await openMemoryLog();
    const agent = Agents.react({
      modelClient: anthropicMessagesClient(client, { maxTokens: 128 }),
      model: 'claude-test',
      tools: [read],
      log,
      contextProjector: new TypeAwareContextProjector({ tokenizer }),
      contextBudget: { maxTokens: 1_000 },
    });
    const session = await agent.newSession();
    await session.run('please read the file a');
    // '.', the request, then the call's name and arguments and the output: each text once, never again
    expect(counted).toEqual(['.', 'please read the file a', 'read', '{"path":"a"}', 'one two three four five six seven eight']);
    const events: SessionEvent[] = [];
    for await (const e of log.read(session.id)) events.push(e);
    const projected = events.filter((e): e is Extract<SessionEvent, { type: 'context.projected' }> => e.type === 'context.projected');
    expect(projected[0]!.tokenizer).toBe('anthropic:claude-test');
    expect(projected[0]!.tokenCounts).toEqual({ [textDigest('please read the file a')]: 5 });
    expect(projected[1]!.tokenCounts?.[textDigest('one two three four five six seven eight')]).toBe(8);
    // 4 per item + the words: request 5, call 1 + 1, output 8
    expect(projected[1]!.report.sourceTokens).toBe(4 + 5 + 4 + 2 + 4 + 8);
    const before = counted.length;
    expect(checkSessionLaws(events)).toEqual([]);
    const again = await replayContext(log, session.id, { step: 2 });
    expect(again.identical).toBe(true);
    // replaySession reads the recorded counts too (projectorOfRecord): no registry entry for the remote tokenizer.
    const replayed = await replaySession(log, session.id);
    expect(replayed).toMatchObject({ identical: true, steps: 2, divergentSteps: 0 });
    expect(counted.length).toBe(before);
  });
});
