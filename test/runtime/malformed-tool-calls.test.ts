// Fault: one malformed tool call wedged the session (empty / missing / numeric call ids), and garbage answers.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  Agents,
  ScriptedModelClient,
  assistantMessage,
  defineTool,
  isAgentRunError,
  openMemoryLog,
  type MemoryItem,
  type ModelResult,
  type SessionEvent,
  type SessionEventLog,
} from '../../src/index.js';
import { fatesOf } from '../../src/events/index.js';
import { checkSessionLaws } from '../../src/testing/runtime-laws.js';

const readAll = async (log: SessionEventLog, id: string): Promise<SessionEvent[]> => {
  const out: SessionEvent[] = [];
  for await (const e of log.read(id)) out.push(e);
  return out;
};

const final = (text: string): ModelResult => ({ outputText: text, items: [assistantMessage(text)] });
const echo = defineTool({ name: 'echo', description: 'Echo', parameters: z.object({ text: z.string() }), execute: ({ text }) => `echo: ${text}` });
const sequentialIds = (prefix: string) => {
  let n = 0;
  return (): string => `${prefix}-${++n}`;
};
const asResult = (value: unknown): ModelResult => value as ModelResult;
const toolResults = (events: readonly SessionEvent[]) => events.filter((e): e is Extract<SessionEvent, { type: 'tool.result' }> => e.type === 'tool.result');

describe('one malformed tool call wedges the session', () => {
  it("call_id '', a tool_calls entry without id and a numeric call_id get usable ids, run, and the session runs again after resume", async () => {
    const log = await openMemoryLog();
    const malformed: MemoryItem[] = [
      { type: 'function_call', call_id: '', name: 'echo', arguments: '{"text":"empty id"}' },
      { type: 'message', role: 'assistant', content: '', tool_calls: [{ type: 'function', function: { name: 'echo', arguments: '{"text":"no id"}' } }] } as unknown as MemoryItem,
      { type: 'function_call', call_id: 7, name: 'echo', arguments: '{"text":"numeric"}' } as unknown as MemoryItem,
    ];
    const model = new ScriptedModelClient([{ items: malformed }, final('done')]);
    const agent = Agents.react({ modelClient: model, model: 'm', tools: [echo], log, ids: sequentialIds('a') });
    const session = await agent.newSession();
    const result = await session.run('go');
    expect(result.outputText).toBe('done');

    const events = await readAll(log, session.id);
    const responded = events.find((e) => e.type === 'model.responded');
    const items = responded?.type === 'model.responded' ? responded.items : [];
    // Ids come from the agent's injected ids (a-1 session, a-2 run), in the order the calls appear.
    expect(items[0]).toMatchObject({ type: 'function_call', call_id: 'a-3' });
    expect(items[1]).toMatchObject({ tool_calls: [{ id: 'a-4' }] });
    expect(items[2]).toMatchObject({ type: 'function_call', call_id: '7' });
    expect(toolResults(events).map((r) => [r.callId, r.output])).toEqual([
      ['a-3', 'echo: empty id'],
      ['a-4', 'echo: no id'],
      ['7', 'echo: numeric'],
    ]);
    // The second request carries every call with its output.
    expect(model.requests[1]!.items.filter((i) => i.type === 'function_call_output')).toHaveLength(3);
    expect(checkSessionLaws(events)).toEqual([]);

    // Resume and run again: nothing is left to repair, the session works.
    const resumed = await Agents.react({ modelClient: new ScriptedModelClient([final('again')]), model: 'm', tools: [echo], log, ids: sequentialIds('b') }).resumeSession(session.id);
    expect((await resumed.run('and again')).outputText).toBe('again');
    const after = await readAll(log, session.id);
    expect(toolResults(after)).toHaveLength(3);
    expect(checkSessionLaws(after)).toEqual([]);
  });

  it('a re-run with the same injected ids records the same normalised ids', async () => {
    const answer = (): ModelResult => asResult({ items: [{ type: 'function_call', name: 'echo', arguments: '{"text":"x"}' }] });
    const recorded: unknown[] = [];
    for (let round = 0; round < 2; round++) {
      const log = await openMemoryLog();
      const session = await Agents.react({ modelClient: new ScriptedModelClient([answer(), final('ok')]), model: 'm', tools: [echo], log, ids: sequentialIds('r') }).newSession();
      await session.run('go');
      recorded.push((await readAll(log, session.id)).filter((e) => e.type === 'model.responded').map((e) => e.type === 'model.responded' && e.items));
    }
    expect(recorded[0]).toEqual(recorded[1]);
    expect(JSON.stringify(recorded[0])).toContain('"call_id":"r-3"');
  });

  it('the same id twice in one answer: the second gets a fresh id, both run', async () => {
    const log = await openMemoryLog();
    const model = new ScriptedModelClient([
      asResult({ items: [
        { type: 'function_call', call_id: 'dup', name: 'echo', arguments: '{"text":"1"}' },
        { type: 'function_call', call_id: 'dup', name: 'echo', arguments: '{"text":"2"}' },
      ] }),
      final('ok'),
    ]);
    const session = await Agents.react({ modelClient: model, model: 'm', tools: [echo], log, ids: sequentialIds('d') }).newSession();
    await session.run('go');
    const events = await readAll(log, session.id);
    expect(toolResults(events).map((r) => [r.callId, r.output])).toEqual([
      ['dup', 'echo: 1'],
      ['d-3', 'echo: 2'],
    ]);
    expect(checkSessionLaws(events)).toEqual([]);
  });

  it('an unusable call (no tool name, a tool_calls entry that is not an object) becomes an error result the model sees', async () => {
    const log = await openMemoryLog();
    const model = new ScriptedModelClient([
      asResult({ items: [
        { type: 'function_call', call_id: 'n1', arguments: { text: 'object arguments' } },
        { type: 'message', role: 'assistant', content: 'calling', tool_calls: ['garbage', { id: 'ok1', type: 'function', function: { name: 'echo', arguments: { text: 'obj' } } }] },
      ] }),
      final('ok'),
    ]);
    const session = await Agents.react({ modelClient: model, model: 'm', tools: [echo], log, ids: sequentialIds('u') }).newSession();
    await session.run('go');
    const events = await readAll(log, session.id);
    const results = toolResults(events);
    expect(results.map((r) => [r.callId, r.isError])).toEqual([
      ['n1', true],
      ['u-3', true],
      ['ok1', false],
    ]);
    expect(results[0]!.output).toBe('Error: this tool call has no tool name; it was not run');
    expect(results[1]!.output).toMatch(/^Error: tool call #0 of this message could not be read \(string\)/);
    expect(results[2]!.output).toBe('echo: obj');
    const sent = model.requests[1]!.items;
    expect(sent.filter((i) => i.type === 'function_call_output').map((i) => (i as { call_id: string }).call_id)).toEqual(['n1', 'u-3', 'ok1']);
    expect(checkSessionLaws(events)).toEqual([]);
  });

  it('checkSessionLaws reports calls that can never be answered and results without a call', async () => {
    const log = await openMemoryLog();
    const session = await Agents.react({ modelClient: new ScriptedModelClient([]), model: 'm', log, ids: sequentialIds('l') }).newSession();
    // What the old runtime recorded: a numeric call id nobody answered, a run that finished anyway, and a stray result.
    await session.session.record([
      { type: 'run.started', runId: 'r1' },
      { type: 'user.input', items: [{ type: 'message', role: 'user', content: 'go' }] },
      { type: 'model.responded', runId: 'r1', step: 1, items: [{ type: 'function_call', call_id: 5, name: 'echo', arguments: '{}' } as unknown as MemoryItem] },
      { type: 'tool.result', callId: 'nobody', output: 'stray', isError: false },
      { type: 'run.finished', runId: 'r1', steps: 1 },
    ]);
    const laws = checkSessionLaws(await readAll(log, session.id)).map((v) => v.law);
    expect(laws).toContain('call-without-result');
    expect(laws).toContain('result-without-call');
  });
});

describe('a model that returns garbage ends as a clear run failure, never a wedged session', () => {
  const garbage: [string, unknown, RegExp][] = [
    ['items that are not an array', { items: 'nope' }, /items is string, not an array/],
    ['no result at all', undefined, /expected \{ items, outputText\?, usage\? \}, got undefined/],
    ['an item without a type', { items: [{ role: 'assistant', content: 'hi' }] }, /item #0 has no string type/],
    ['an item that is not an object', { items: [42] }, /item #0 is number, not an item object/],
    ['outputText that is not a string', { outputText: { text: 'x' }, items: [] }, /outputText is object, not a string/],
    ['tool_calls that is not an array', { items: [{ type: 'message', role: 'assistant', content: '', tool_calls: 'x' }] }, /item #0 has tool_calls that is string/],
  ];
  for (const [what, answer, message] of garbage) {
    it(`${what}: run.failed with the reason, and the next run works`, async () => {
      const log = await openMemoryLog();
      const model = new ScriptedModelClient([() => answer as ModelResult, final('fine')]);
      const session = await Agents.react({ modelClient: model, model: 'm', tools: [echo], log, ids: sequentialIds('g') }).newSession();
      const error = await session.run('go').catch((e: unknown) => e);
      expect(isAgentRunError(error) && error.reason).toBe('error');
      expect((error as Error).message).toMatch(message);
      const events = await readAll(log, session.id);
      expect(events.at(-1)).toMatchObject({ type: 'run.failed', reason: 'error' });
      expect(events.some((e) => e.type === 'model.responded')).toBe(false);
      expect((await session.run('again')).outputText).toBe('fine');
      expect(checkSessionLaws(await readAll(log, session.id))).toEqual([]);
    });
  }

  it('a 10 MB answer and a 10 MB tool output are recorded and the session goes on', async () => {
    const big = 'x'.repeat(10 * 1024 * 1024);
    const huge = defineTool({ name: 'huge', description: 'big output', parameters: z.object({}), execute: () => big });
    const log = await openMemoryLog();
    const model = new ScriptedModelClient([
      { items: [{ type: 'function_call', call_id: 'h1', name: 'huge', arguments: '{}' }] },
      { outputText: big, items: [assistantMessage(big)] },
      final('small'),
    ]);
    const session = await Agents.react({ modelClient: model, model: 'm', tools: [huge], log, contextBudget: { maxTokens: 1000 }, ids: sequentialIds('h') }).newSession();
    const first = await session.run('go');
    expect(first.outputText.length).toBe(big.length);
    expect((await session.run('again')).outputText).toBe('small');
    // Under the budget the huge items are not sent again.
    expect(model.requests[2]!.items.some((i) => JSON.stringify(i).length > 1_000_000)).toBe(false);
  });
});

describe('a session an older runtime wedged with a malformed call', () => {
  it("call_id '' and a numeric call_id already in the log: resume, run, and neither is sent again", async () => {
    const log = await openMemoryLog();
    const first = await Agents.react({ modelClient: new ScriptedModelClient([]), model: 'm', tools: [echo], log, ids: sequentialIds('w') }).newSession();
    // What the old runtime recorded: the model's malformed calls entered memory; no result could be recorded.
    await first.session.record([
      { type: 'run.started', runId: 'old' },
      { type: 'user.input', items: [{ type: 'message', role: 'user', content: 'go' }] },
      { type: 'step.started', runId: 'old', step: 1 },
      {
        type: 'model.responded', runId: 'old', step: 1,
        items: [
          { type: 'function_call', call_id: '', name: 'echo', arguments: '{"text":"a"}' },
          { type: 'function_call', call_id: 5, name: 'echo', arguments: '{"text":"b"}' } as unknown as MemoryItem,
        ],
      },
    ]);
    const model = new ScriptedModelClient([final('recovered'), final('and again')]);
    const resumed = await Agents.react({ modelClient: model, model: 'm', tools: [echo], log, ids: sequentialIds('x') }).resumeSession(first.id);
    expect((await resumed.run()).outputText).toBe('recovered');
    expect((await resumed.run('more')).outputText).toBe('and again');
    for (const request of model.requests) expect(request.items.some((i) => i.type === 'function_call')).toBe(false);
    const last = (await readAll(log, first.id)).filter((e) => e.type === 'context.projected').at(-1);
    expect(last?.type === 'context.projected' ? fatesOf(last).filter((f) => f.rule === 'orphan').length : -1).toBe(2);
  });
});
