// The AI SDK recorder under `streamText` (the installed `ai`, its mock model's doStream): the same session as under generateText, lawful.
import * as ai from 'ai';
import * as aiTest from 'ai/test';
import { describe, expect, it } from 'vitest';
import { openMemoryLog, type SessionEvent } from '../../src/index.js';
import { createAiSdkRecorder } from '../../src/bridges/ai-sdk/index.js';
import { checkSessionLaws } from '../../src/testing/runtime-laws.js';
import { installedAiSdk, type MockContent as Content } from '../support/ai-sdk-under-test.js';

const sdk = installedAiSdk('ai', aiTest);

const answers: Content[][] = [
  [
    { type: 'reasoning', text: 'look alpha up' },
    { type: 'tool-call', toolCallId: 'c1', toolName: 'lookup', input: '{"word":"alpha"}' },
  ],
  [{ type: 'tool-call', toolCallId: 'c2', toolName: 'lookup', input: '{"word":"beta"}' }],
  [{ type: 'text', text: 'alpha and beta are letters' }],
];

/** The stream parts of an answer: text and reasoning in pieces, tool inputs in many deltas, then the call and finish. */
const partsOf = (content: readonly Content[], i: number): unknown[] => {
  const parts: unknown[] = [{ type: 'stream-start', warnings: [] }, { type: 'response-metadata', id: `resp-${i + 1}` }];
  content.forEach((c, k) => {
    const id = `p${k}`;
    if (c.type === 'text' || c.type === 'reasoning') {
      parts.push({ type: `${c.type}-start`, id });
      for (const piece of c.text.match(/.{1,4}/g) ?? []) parts.push({ type: `${c.type}-delta`, id, delta: piece });
      parts.push({ type: `${c.type}-end`, id });
    } else {
      parts.push({ type: 'tool-input-start', id: c.toolCallId, toolName: c.toolName });
      for (const piece of c.input.match(/.{1,3}/g) ?? []) parts.push({ type: 'tool-input-delta', id: c.toolCallId, delta: piece });
      parts.push({ type: 'tool-input-end', id: c.toolCallId });
      parts.push(c);
    }
  });
  const calls = content.some((c) => c.type === 'tool-call');
  parts.push({ type: 'finish', usage: sdk.usage, finishReason: sdk.finishReason(calls ? 'tool-calls' : 'stop') });
  return parts;
};

const lookup = () =>
  ai.tool({
    description: 'Look a word up',
    inputSchema: ai.jsonSchema<{ word: string }>({ type: 'object', properties: { word: { type: 'string' } }, required: ['word'] }),
    execute: async ({ word }) => `definition of ${word}`,
  });

const readAll = async (log: { read(id: string): AsyncIterable<SessionEvent> }, id: string): Promise<SessionEvent[]> => {
  const out: SessionEvent[] = [];
  for await (const e of log.read(id)) out.push(e);
  return out;
};

const comparable = (events: readonly SessionEvent[]) =>
  events.map((e) => {
    const { at: _a, hash: _h, prevHash: _p, contentDigest: _c, contentSalt: _s, ...rest } = e as SessionEvent & { durationMs?: number; contentDigest?: string };
    const { durationMs: _d, ...payload } = rest as typeof rest & { durationMs?: number };
    return payload;
  });

const record = async (mode: 'generate' | 'stream') => {
  const log = await openMemoryLog();
  let i = 0;
  let n = 0;
  const model = new sdk.MockModel({
    doGenerate: async () => {
      const content = answers[i++]!;
      const calls = content.some((c) => c.type === 'tool-call');
      return { content, finishReason: sdk.finishReason(calls ? 'tool-calls' : 'stop'), usage: sdk.usage, warnings: [], response: { id: `resp-${i}` } };
    },
    doStream: async () => ({ stream: ai.simulateReadableStream({ chunks: partsOf(answers[i]!, i++) as never[] }) }),
  });
  const recorder = await createAiSdkRecorder(log, { sessionId: 's', contextBudget: { maxItems: 6 }, ids: () => `run-${++n}` });
  const options = {
    model,
    system: 'be brief',
    tools: { lookup: lookup() },
    messages: [{ role: 'user' as const, content: 'define alpha and beta' }],
    stopWhen: ai.stepCountIs(5),
    prepareStep: recorder.prepareStep,
    onStepFinish: recorder.onStepFinish,
    onFinish: recorder.onFinish,
  };
  let text: string;
  let deltas = 0;
  if (mode === 'generate') {
    text = (await ai.generateText(options as never)).text;
  } else {
    const result = ai.streamText(options as never);
    for await (const part of result.fullStream) if (part.type === 'text-delta' || part.type === 'tool-input-delta') deltas += 1;
    text = await result.text;
  }
  return { text, deltas, events: await readAll(log, 's') };
};

describe(`ai-sdk recorder under streamText (ai ${sdk.version})`, () => {
  it('records the same lawful session as generateText for the same answers', async () => {
    const generated = await record('generate');
    const streamed = await record('stream');
    expect(streamed.text).toBe('alpha and beta are letters');
    expect(streamed.deltas).toBeGreaterThan(8);
    expect(checkSessionLaws(streamed.events)).toEqual([]);
    expect(streamed.events.filter((e) => e.type === 'model.responded')).toHaveLength(3);
    expect(comparable(streamed.events)).toEqual(comparable(generated.events));
  });
});
