// The AI SDK bridge suite, run against the installed `ai` and against ai 5 (the test file decides which `ai` the bridge imports).
import { expect, it } from 'vitest';
import { z } from 'zod';
import { Agents, defineTool, fatesOf, openMemoryLog, systemMessage, userMessage, type SessionEvent } from '../../src/index.js';
import { aiSdkModelClient, createAiSdkRecorder, fromModelMessages, toModelMessages } from '../../src/bridges/ai-sdk/index.js';
import { checkSessionLaws } from '../../src/testing/runtime-laws.js';
import type { InstalledAiSdk, MockContent } from '../support/ai-sdk-under-test.js';

export type { MockContent } from '../support/ai-sdk-under-test.js';

export interface AiSdkUnderTest extends Pick<InstalledAiSdk, 'major' | 'mockModel'> {
  /** The real package's functions (`ai` or `ai-v5`). */
  readonly ai: {
    generateText: (options: never) => Promise<{ text: string; steps: unknown[]; response: { messages: unknown[] }; responseMessages?: unknown[] }>;
    stepCountIs: (n: number) => unknown;
    tool: (t: never) => unknown;
    jsonSchema: (s: never) => unknown;
  };
}

const readAll = async (log: { read(id: string): AsyncIterable<SessionEvent> }, id: string): Promise<SessionEvent[]> => {
  const out: SessionEvent[] = [];
  for await (const e of log.read(id)) out.push(e);
  return out;
};

const call = (id: string, name: string, input: object): MockContent => ({ type: 'tool-call', toolCallId: id, toolName: name, input: JSON.stringify(input) });

/** Messages of a prompt the provider got: role and part types, to check no tool result travels without its call. */
const orphanResults = (prompt: readonly unknown[]): string[] => {
  const calls = new Set<string>();
  const orphans: string[] = [];
  for (const message of prompt as { role: string; content: unknown }[]) {
    if (!Array.isArray(message.content)) continue;
    for (const part of message.content as { type: string; toolCallId?: string }[]) {
      if (part.type === 'tool-call' && part.toolCallId) calls.add(part.toolCallId);
      if (part.type === 'tool-result' && part.toolCallId && !calls.has(part.toolCallId)) orphans.push(part.toolCallId);
    }
  }
  return orphans;
};

export const aiSdkSuite = (sdk: AiSdkUnderTest): void => {
  const { ai } = sdk;
  const lookupTool = () =>
    ai.tool({
      description: 'Look a word up',
      inputSchema: ai.jsonSchema({ type: 'object', properties: { word: { type: 'string' } }, required: ['word'] } as never),
      execute: async ({ word }: { word: string }) => `definition of ${word}: ${'x'.repeat(40)}`,
    } as never);

  it(`ai ${sdk.major}: a multi-step generateText with tools is recorded, projected and lawful`, async () => {
    const log = await openMemoryLog();
    const prompts: unknown[][] = [];
    const model = sdk.mockModel(
      [
        [{ type: 'reasoning', text: 'I should look up alpha' }, call('c1', 'lookup', { word: 'alpha' })],
        [call('c2', 'lookup', { word: 'beta' })],
        [call('c3', 'lookup', { word: 'gamma' })],
        [{ type: 'text', text: 'alpha, beta and gamma are letters' }],
      ],
      prompts,
    );
    let n = 0;
    const recorder = await createAiSdkRecorder(log, { sessionId: `s-ai${sdk.major}`, contextBudget: { maxItems: 4 }, ids: () => `run-${++n}` });
    const result = await ai.generateText({
      model,
      system: 'be brief',
      tools: { lookup: lookupTool() },
      messages: [{ role: 'user', content: 'define alpha, beta and gamma' }],
      stopWhen: ai.stepCountIs(6),
      prepareStep: recorder.prepareStep,
      // ai 7 names the callbacks onStepEnd and onEnd (onStepFinish and onFinish remain as deprecated aliases)
      ...(sdk.major >= 7 ? { onStepEnd: recorder.onStepFinish, onEnd: recorder.onFinish } : { onStepFinish: recorder.onStepFinish, onFinish: recorder.onFinish }),
    } as never);
    expect(result.text).toBe('alpha, beta and gamma are letters');
    expect(result.steps).toHaveLength(4);

    const events = await readAll(log, recorder.sessionId);
    expect(checkSessionLaws(events)).toEqual([]);
    const projected = events.filter((e): e is Extract<SessionEvent, { type: 'context.projected' }> => e.type === 'context.projected');
    expect(projected.map((e) => e.step)).toEqual([1, 2, 3, 4]);
    // step 4 sees user, (reasoning, c1, out1), (c2, out2), (c3, out3): four items fit, older pairs dropped whole
    const last = projected[3]!;
    expect(last.report.droppedItemCount).toBeGreaterThan(0);
    const dropped = fatesOf(last).filter((f) => f.fate === 'dropped');
    expect(dropped.length).toBe(last.report.droppedItemCount);
    const sentCount = fatesOf(last).length - dropped.length;
    expect(sentCount).toBeLessThanOrEqual(4);
    // what the model got is the projection: no result without its call, and fewer messages than the full history
    expect(prompts).toHaveLength(4);
    for (const prompt of prompts) expect(orphanResults(prompt)).toEqual([]);
    const finalPrompt = prompts[3]!.filter((m) => (m as { role: string }).role !== 'system');
    const sentParts = finalPrompt.flatMap((m) => (Array.isArray((m as { content: unknown }).content) ? ((m as { content: unknown[] }).content) : [m]));
    expect(sentParts).toHaveLength(sentCount);
    // the recorded answer and tool results are in memory
    const memory = recorder.session.memory.getItems();
    expect(memory.filter((i) => i.type === 'function_call_output')).toHaveLength(3);
    expect(memory.at(-1)).toMatchObject({ type: 'message', role: 'assistant' });
    expect(events.filter((e) => e.type === 'run.finished')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'step.ended').map((e) => (e as { toolCalls: number }).toolCalls)).toEqual([1, 1, 1, 0]);

    // a second turn on the same recorder: only the new user message is recorded (ai 7's response holds the last
    // step's messages only; its responseMessages hold the call's)
    const second = await ai.generateText({
      model: sdk.mockModel([[{ type: 'text', text: 'you are welcome' }]], prompts),
      messages: [
        { role: 'user', content: 'define alpha, beta and gamma' },
        ...(result.responseMessages ?? result.response.messages),
        { role: 'user', content: 'thanks' },
      ],
      prepareStep: recorder.prepareStep,
      onStepFinish: recorder.onStepFinish,
      onFinish: recorder.onFinish,
    } as never);
    expect(second.text).toBe('you are welcome');
    const after = await readAll(log, recorder.sessionId);
    expect(checkSessionLaws(after)).toEqual([]);
    const inputs = after.filter((e) => e.type === 'user.input');
    expect(inputs).toHaveLength(2);
    expect(recorder.session.memory.getItems().filter((i) => i.type === 'message' && i['role'] === 'user')).toHaveLength(2);
  });

  it(`ai ${sdk.major}: model.requested records the system prompt, tools and settings the model received`, async () => {
    const log = await openMemoryLog();
    const prompts: unknown[][] = [];
    const calls: unknown[] = [];
    const model = sdk.mockModel([[call('c1', 'lookup', { word: 'alpha' })], [{ type: 'text', text: 'a letter' }]], prompts, calls);
    const recorder = await createAiSdkRecorder(log, { sessionId: `sent-ai${sdk.major}` });
    await recorder.session.memory.setSummary('an earlier summary');
    await ai.generateText({
      model,
      system: 'be brief',
      tools: { lookup: lookupTool() },
      temperature: 0.25,
      maxOutputTokens: 300,
      seed: 7,
      toolChoice: 'auto',
      providerOptions: { mock: { flag: true } },
      messages: [{ role: 'user', content: 'define alpha' }],
      stopWhen: ai.stepCountIs(3),
      prepareStep: recorder.prepareStep,
      onStepFinish: recorder.onStepFinish,
      onFinish: recorder.onFinish,
    } as never);
    const events = await readAll(log, recorder.sessionId);
    expect(checkSessionLaws(events)).toEqual([]);
    const requested = events.filter((e): e is Extract<SessionEvent, { type: 'model.requested' }> => e.type === 'model.requested');
    expect(requested).toHaveLength(2);
    expect(calls).toHaveLength(2);
    requested.forEach((event, i) => {
      const received = calls[i] as { prompt: { role: string; content: unknown }[]; tools: { name: string; description?: string; inputSchema: unknown }[]; temperature?: number; maxOutputTokens?: number; seed?: number; toolChoice?: unknown; providerOptions?: unknown };
      // The framework's system message comes first; the summary (memory's own system message) is part of the projection.
      expect(received.prompt[0]).toMatchObject({ role: 'system', content: 'be brief' });
      expect(event.systemPrompt).toBe(received.prompt[0]!.content);
      expect(event.tools).toEqual(received.tools.map((t) => ({ type: 'function', name: t.name, description: t.description, parameters: t.inputSchema })));
      expect(event.tools).toHaveLength(1);
      expect(event.settings).toMatchObject({ temperature: received.temperature, maxOutputTokens: received.maxOutputTokens, seed: received.seed, toolChoice: received.toolChoice, providerOptions: received.providerOptions });
      expect(event.settings).toMatchObject({ temperature: 0.25, maxOutputTokens: 300, seed: 7, toolChoice: { type: 'auto' }, providerOptions: { mock: { flag: true } } });
    });
  });

  it(`ai ${sdk.major}: per-step overrides in prepareStep (model, activeTools, toolChoice, system) are recorded as each model received them`, async () => {
    const log = await openMemoryLog();
    const prompts: unknown[][] = [];
    const callsA: unknown[] = [];
    const callsB: unknown[] = [];
    const modelA = sdk.mockModel([[call('c1', 'lookup', { word: 'alpha' })]], prompts, callsA, 'model-a');
    const modelB = sdk.mockModel([[{ type: 'text', text: 'alpha is a letter' }]], prompts, callsB, 'model-b');
    const defineTool_ = ai.tool({ description: 'Define a word', inputSchema: ai.jsonSchema({ type: 'object', properties: { word: { type: 'string' } } } as never) } as never);
    let n = 0;
    const recorder = await createAiSdkRecorder(log, { sessionId: `overrides-ai${sdk.major}`, ids: () => `run-${++n}` });
    // The user's own prepareStep: a model, tools and a system prompt per step; the model goes through the recorder so it is observed.
    const prepareStep = async (options: { stepNumber: number; model: unknown; messages: unknown[] }) => {
      const override =
        options.stepNumber === 0
          ? { model: modelA, activeTools: ['lookup'], toolChoice: { type: 'tool', toolName: 'lookup' }, system: 'step zero: look it up' }
          : { model: modelB, activeTools: ['define'], toolChoice: 'none', system: 'step one: answer' };
      const prepared = await recorder.prepareStep({ ...options, model: override.model } as never);
      return { ...override, ...prepared };
    };
    const result = await ai.generateText({
      model: modelA,
      system: 'outer system',
      tools: { lookup: lookupTool(), define: defineTool_ },
      messages: [{ role: 'user', content: 'define alpha' }],
      stopWhen: ai.stepCountIs(3),
      prepareStep,
      onStepFinish: recorder.onStepFinish,
      onFinish: recorder.onFinish,
    } as never);
    expect(result.text).toBe('alpha is a letter');
    expect([callsA.length, callsB.length]).toEqual([1, 1]);
    const events = await readAll(log, recorder.sessionId);
    expect(checkSessionLaws(events)).toEqual([]);
    const requested = events.filter((e): e is Extract<SessionEvent, { type: 'model.requested' }> => e.type === 'model.requested');
    const received = [callsA[0], callsB[0]] as { prompt: { role: string; content: unknown }[]; tools?: { name: string; description?: string; inputSchema: unknown }[]; toolChoice?: unknown }[];
    expect(requested.map((e) => ({ step: e.step, model: e.model, systemPrompt: e.systemPrompt, tools: (e.tools ?? []).map((t) => t['name']), toolChoice: e.settings?.['toolChoice'] }))).toEqual([
      { step: 1, model: 'mock-provider:model-a', systemPrompt: 'step zero: look it up', tools: ['lookup'], toolChoice: { type: 'tool', toolName: 'lookup' } },
      { step: 2, model: 'mock-provider:model-b', systemPrompt: 'step one: answer', tools: ['define'], toolChoice: { type: 'none' } },
    ]);
    requested.forEach((event, i) => {
      const got = received[i]!;
      expect(event.systemPrompt).toBe(got.prompt[0]!.content);
      expect(event.tools).toEqual((got.tools ?? []).map((t) => ({ type: 'function', name: t.name, description: t.description, parameters: t.inputSchema })));
      expect(event.settings?.['toolChoice']).toEqual(got.toolChoice);
    });
  });

  it(`ai ${sdk.major}: a model put in place after prepareStep returned is not observed: its request is not recorded (docs/bridges.md)`, async () => {
    const log = await openMemoryLog();
    const calls: unknown[] = [];
    const model = sdk.mockModel([[{ type: 'text', text: 'a' }]], [], [], 'given');
    const other = sdk.mockModel([[{ type: 'text', text: 'b' }]], [], calls, 'swapped');
    const recorder = await createAiSdkRecorder(log, { sessionId: `unobserved-ai${sdk.major}` });
    const result = await ai.generateText({
      model,
      messages: [{ role: 'user', content: 'hi' }],
      prepareStep: async (options: { stepNumber: number; model: unknown; messages: unknown[] }) => ({ ...(await recorder.prepareStep(options as never)), model: other }),
      onStepFinish: recorder.onStepFinish,
      onFinish: recorder.onFinish,
    } as never);
    expect(result.text).toBe('b');
    expect(calls).toHaveLength(1);
    const events = await readAll(log, recorder.sessionId);
    expect(events.filter((e) => e.type === 'context.projected')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'model.requested')).toHaveLength(0);
  });

  it(`ai ${sdk.major}: the recorder records a tool result as the text the model sees: a json output as its JSON text`, async () => {
    const log = await openMemoryLog();
    const model = sdk.mockModel([[call('j1', 'lookup_json', { word: 'alpha' })], [{ type: 'text', text: 'ok' }]], []);
    const recorder = await createAiSdkRecorder(log, { sessionId: `json-ai${sdk.major}` });
    const lookupJson = ai.tool({
      description: 'Look a word up, as JSON',
      inputSchema: ai.jsonSchema({ type: 'object', properties: { word: { type: 'string' } }, required: ['word'] } as never),
      execute: async ({ word }: { word: string }) => ({ word, letters: word.length }),
    } as never);
    await ai.generateText({
      model,
      tools: { lookup_json: lookupJson },
      messages: [{ role: 'user', content: 'look alpha up' }],
      stopWhen: ai.stepCountIs(3),
      prepareStep: recorder.prepareStep,
      onStepFinish: recorder.onStepFinish,
      onFinish: recorder.onFinish,
    } as never);
    const events = await readAll(log, recorder.sessionId);
    const results = events.filter((e): e is Extract<SessionEvent, { type: 'tool.result' }> => e.type === 'tool.result');
    expect(results.map((r) => ({ callId: r.callId, output: JSON.parse(r.output) as unknown }))).toEqual([{ callId: 'j1', output: { word: 'alpha', letters: 5 } }]);
    expect(checkSessionLaws(events)).toEqual([]);
  });

  it(`ai ${sdk.major}: a model given by id is refused (what it is sent could not be recorded)`, async () => {
    const log = await openMemoryLog();
    const recorder = await createAiSdkRecorder(log, { sessionId: 'by-id' });
    await expect(recorder.prepareStep({ stepNumber: 0, model: 'openai/gpt-4.1', messages: [{ role: 'user', content: 'hi' }] })).rejects.toThrow(/cannot be observed/);
  });

  it(`ai ${sdk.major}: the recorder rejects a conversation shorter than what it recorded`, async () => {
    const log = await openMemoryLog();
    const recorder = await createAiSdkRecorder(log, { sessionId: 'short' });
    const model = sdk.mockModel([[{ type: 'text', text: 'a' }], [{ type: 'text', text: 'b' }]], []);
    const callbacks = { prepareStep: recorder.prepareStep, onStepFinish: recorder.onStepFinish, onFinish: recorder.onFinish };
    await ai.generateText({ model, messages: [{ role: 'user', content: 'one' }, { role: 'user', content: 'two' }], ...callbacks } as never);
    await expect(ai.generateText({ model, messages: [{ role: 'user', content: 'other' }], ...callbacks } as never)).rejects.toThrow(/already recorded/);
  });

  it(`ai ${sdk.major}: onStepFinish without prepareStep is refused, and a bad budget fails when the recorder is made`, async () => {
    const log = await openMemoryLog();
    const recorder = await createAiSdkRecorder(log, { sessionId: 'half' });
    // (ai 6 swallows errors thrown by onStepFinish, so the recorder is called directly here)
    await expect(recorder.onStepFinish({ text: 'a', toolCalls: [], response: { messages: [] } })).rejects.toThrow(/onStepFinish without prepareStep/);
    await expect(createAiSdkRecorder(log, { contextBudget: { maxItems: 'ten' } as never })).rejects.toThrow();
  });

  it(`ai ${sdk.major}: aiSdkModelClient runs the agent runtime on an AI SDK model`, async () => {
    const prompts: unknown[][] = [];
    const model = sdk.mockModel([[call('k1', 'echo', { text: 'hi' })], [{ type: 'text', text: 'done: echo: hi' }]], prompts);
    const log = await openMemoryLog();
    const echo = defineTool({ name: 'echo', description: 'Echo', parameters: z.object({ text: z.string() }), execute: ({ text }) => `echo: ${text}` });
    const agent = Agents.react({ modelClient: aiSdkModelClient(model as never), model: 'mock', tools: [echo], log, ids: () => `x${Math.random()}` });
    const session = await agent.newSession();
    const run = await session.run('say hi');
    expect(run.outputText).toBe('done: echo: hi');
    const events = await readAll(log, session.id);
    expect(checkSessionLaws(events)).toEqual([]);
    // the second prompt carries the call and its result as the AI SDK shapes them
    const second = prompts[1] as { role: string; content: { type: string; toolCallId?: string; output?: unknown }[] }[];
    expect(second.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(second[2]!.content[0]).toMatchObject({ type: 'tool-result', toolCallId: 'k1', toolName: 'echo', output: { type: 'text', value: 'echo: hi' } });
    const responded = events.find((e) => e.type === 'model.responded') as { items: unknown[]; usage?: Record<string, unknown> } | undefined;
    expect(responded?.items).toEqual([{ type: 'function_call', call_id: 'k1', name: 'echo', arguments: '{"text":"hi"}' }]);
    expect(responded?.usage).toMatchObject({ inputTokens: 10, outputTokens: 5, totalTokens: 15 });
  });

  it(`ai ${sdk.major}: aiSdkModelClient sends memory's system messages (a summary) where they stand`, async () => {
    const prompts: unknown[][] = [];
    const model = sdk.mockModel([[{ type: 'text', text: 'ok' }]], prompts);
    const items = [userMessage('first'), systemMessage('summary of earlier turns'), userMessage('second')];
    const result = await aiSdkModelClient(model as never).create({ model: 'mock', systemPrompt: 'be brief', items });
    expect(result.outputText).toBe('ok');
    expect((prompts[0] as { role: string; content: unknown }[]).map((m) => [m.role, typeof m.content === 'string' ? m.content : 'parts'])).toEqual([
      ['system', 'be brief'],
      ['user', 'parts'],
      ['system', 'summary of earlier turns'],
      ['user', 'parts'],
    ]);
    expect(() => aiSdkModelClient(model as never, { settings: { allowSystemInMessages: false } })).toThrow(/may not set allowSystemInMessages/);
  });

  it(`ai ${sdk.major}: converted messages are accepted by generateText as they are`, async () => {
    const prompts: unknown[][] = [];
    const model = sdk.mockModel([[{ type: 'text', text: 'ok' }]], prompts);
    const items = [
      userMessage('hello'),
      { type: 'function_call', call_id: 'z1', name: 'echo', arguments: '{"text":"a"}' },
      { type: 'function_call_output', call_id: 'z1', output: 'a' },
    ];
    const messages = toModelMessages(items);
    await ai.generateText({ model, messages } as never);
    expect(prompts[0]).toHaveLength(3);
    expect(fromModelMessages(messages)).toEqual([items[0], items[1], { ...items[2], name: 'echo' }]);
  });
};
