import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  Agents,
  AgentRunError,
  ScriptedModelClient,
  StructuredSummaryCompactPolicy,
  assistantMessage,
  defineTool,
  functionCall,
  isAgentRunError,
  openMemoryLog,
  userMessage,
  type CompactPolicy,
  type ModelResult,
  type RuntimeNotification,
  type SessionEvent,
} from '../../src/index.js';
import { checkSessionLaws } from '../../src/testing/runtime-laws.js';

const readAll = async (log: { read(id: string): AsyncIterable<SessionEvent> }, id: string): Promise<SessionEvent[]> => {
  const out: SessionEvent[] = [];
  for await (const e of log.read(id)) out.push(e);
  return out;
};

const final = (text: string): ModelResult => ({ outputText: text, items: [assistantMessage(text)] });
const callTool = (id: string, name: string, args: object): ModelResult => ({ items: [functionCall(id, name, args)] });

const echo = defineTool({
  name: 'echo',
  description: 'Echo the text',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => `echo: ${text}`,
});

let counter = 0;
const ids = (): string => `id-${++counter}`;

describe('agent runtime', () => {
  it('builds the prompt from the projection: maxItems 2 over three old items and the new input sends the last two', async () => {
    const model = new ScriptedModelClient([final('ok')]);
    const log = await openMemoryLog();
    const agent = Agents.react({ modelClient: model, model: 'm', log, contextBudget: { maxItems: 2 }, ids });
    const session = await agent.newSession();
    await session.memory.addUserInput('old 1');
    await session.memory.addOutputItems([assistantMessage('old 2')]);
    await session.memory.addUserInput('old 3');
    await session.run('new input');
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0]!.items).toEqual([userMessage('old 3'), userMessage('new input')]);
    const events = await readAll(log, session.id);
    const projected = events.find((e) => e.type === 'context.projected');
    expect(projected?.type === 'context.projected' && projected.report.notes).toEqual(['maxItems applied: 2']);
    expect(checkSessionLaws(events)).toEqual([]);
  });

  it('publishes the ContextReport each time a prompt is built, and every event', async () => {
    const notes: RuntimeNotification[] = [];
    const agent = Agents.react({
      modelClient: new ScriptedModelClient([callTool('c1', 'echo', { text: 'a' }), final('done')]),
      model: 'm',
      tools: [echo],
      onEvent: (n) => notes.push(n),
      ids,
    });
    const session = await agent.newSession();
    await session.run('go');
    const reports = notes.filter((n) => n.type === 'MEMORY_COMPRESS');
    expect(reports).toHaveLength(2);
    expect(reports.map((r) => r.type === 'MEMORY_COMPRESS' && r.step)).toEqual([1, 2]);
    // CONTEXT_PROJECTED is the notification's own name; MEMORY_COMPRESS (the reference's) follows it with the same fields.
    const projected = notes.filter((n) => n.type === 'CONTEXT_PROJECTED');
    expect(projected.map((r) => r.type === 'CONTEXT_PROJECTED' && r.step)).toEqual([1, 2]);
    const order = notes.filter((n) => n.type !== 'EVENT').map((n) => n.type);
    expect(order).toEqual(['CONTEXT_PROJECTED', 'MEMORY_COMPRESS', 'CONTEXT_PROJECTED', 'MEMORY_COMPRESS']);
    expect(projected.map((r) => (r.type === 'CONTEXT_PROJECTED' ? r.report : undefined))).toEqual(reports.map((r) => (r.type === 'MEMORY_COMPRESS' ? r.report : undefined)));
    const types = notes.filter((n) => n.type === 'EVENT').map((n) => (n.type === 'EVENT' ? n.event.type : ''));
    expect(types).toEqual([
      'session.started',
      'run.started',
      'user.input',
      'step.started',
      'context.projected',
      'model.requested',
      'model.responded',
      'tool.result',
      'step.ended',
      'step.started',
      'context.projected',
      'model.requested',
      'model.responded',
      'step.ended',
      'run.finished',
    ]);
  });

  it('auto-compacts only when shouldCompact says so, before that step\'s model call', async () => {
    const calls: string[] = [];
    const policy: CompactPolicy = {
      shouldCompact: (s) => {
        calls.push(`should:${s.items.length}`);
        return s.items.length > 3;
      },
      compact: (s) => {
        calls.push('compact');
        return { ...new StructuredSummaryCompactPolicy({ maxItems: 2 }).compact(s) };
      },
    };
    const model = new ScriptedModelClient([
      (r) => {
        calls.push(`model:${r.items.length}`);
        return callTool('c1', 'echo', { text: 'x' });
      },
      (r) => {
        calls.push(`model:${r.items.length}`);
        return final('done');
      },
    ]);
    const log = await openMemoryLog();
    const agent = Agents.react({ modelClient: model, model: 'm', tools: [echo], compactPolicy: policy, log, ids });
    const session = await agent.newSession();
    await session.run('task');
    expect(calls).toEqual(['should:1', 'model:1', 'should:3', 'model:3']);
    await session.memory.addUserInput('more');
    await session.memory.addUserInput('and more');
    const again = new ScriptedModelClient([final('ok')]);
    const agent2 = Agents.react({ modelClient: again, model: 'm', tools: [echo], compactPolicy: policy, log, ids });
    const resumed = await agent2.resumeSession(session.id);
    calls.length = 0;
    await resumed.run('last');
    expect(calls).toEqual(['should:7', 'compact']);
    const events = await readAll(log, session.id);
    const compactedAt = events.findIndex((e) => e.type === 'memory.compacted');
    const requestedAt = events.findIndex((e, i) => i > compactedAt && e.type === 'model.requested');
    expect(compactedAt).toBeGreaterThan(0);
    expect(requestedAt).toBeGreaterThan(compactedAt);
    expect(events[compactedAt]).toMatchObject({ trigger: 'auto', step: 3 });
    expect(again.requests[0]!.items[0]).toMatchObject({ role: 'system' });
    expect(checkSessionLaws(events)).toEqual([]);
  });

  it('does not compact without a policy, and manual compact propagates errors', async () => {
    const log = await openMemoryLog();
    const agent = Agents.react({ modelClient: new ScriptedModelClient([final('a')]), model: 'm', log, ids });
    const session = await agent.newSession();
    await session.run('x');
    expect((await readAll(log, session.id)).some((e) => e.type.startsWith('memory.compacted'))).toBe(false);
    const broken: CompactPolicy = {
      compact: () => {
        throw new Error('policy broke');
      },
    };
    await expect(session.session.compact(broken)).rejects.toThrow('policy broke');
    expect((await readAll(log, session.id)).at(-1)).toMatchObject({ type: 'compaction.failed', trigger: 'manual', error: 'policy broke' });
  });

  it('a throwing automatic policy does not abort the run', async () => {
    const log = await openMemoryLog();
    const policy: CompactPolicy = {
      shouldCompact: () => true,
      compact: () => {
        throw new Error('nope');
      },
    };
    const agent = Agents.react({ modelClient: new ScriptedModelClient([final('fine')]), model: 'm', compactPolicy: policy, log, ids });
    const session = await agent.newSession();
    const result = await session.run('x');
    expect(result.outputText).toBe('fine');
    const events = await readAll(log, session.id);
    expect(events.find((e) => e.type === 'compaction.failed')).toMatchObject({ trigger: 'auto', stage: 'compact', error: 'nope', step: 1 });
  });

  it('calls hooks in order on a tool step then a final step, and a throwing hook does not stop the run', async () => {
    const order: string[] = [];
    const hook = (name: string) => (c: { step: number }) => {
      order.push(`${name}@${c.step}`);
    };
    const log = await openMemoryLog();
    const agent = Agents.react({
      modelClient: new ScriptedModelClient([callTool('c1', 'echo', { text: 'a' }), final('done')]),
      model: 'm',
      tools: [echo],
      log,
      ids,
      compactPolicy: { shouldCompact: (s) => s.items.length === 3, compact: (s) => ({ ...new StructuredSummaryCompactPolicy({ maxItems: 10 }).compact(s) }) },
      hooks: {
        beforeTurn: hook('beforeTurn'),
        beforeCompact: (c) => {
          order.push(`beforeCompact@${c.step}`);
        },
        onCompact: (c) => {
          order.push(`onCompact@${c.step}`);
        },
        beforeModelRequest: hook('beforeModelRequest'),
        afterModelResponse: (c) => {
          order.push(`afterModelResponse@${c.step}`);
          throw new Error('observer bug');
        },
        beforeToolCall: hook('beforeToolCall'),
        afterToolCall: hook('afterToolCall'),
        afterTurn: hook('afterTurn'),
      },
    });
    const session = await agent.newSession();
    const result = await session.run('go');
    expect(result.outputText).toBe('done');
    expect(order).toEqual([
      'beforeTurn@1',
      'beforeModelRequest@1',
      'afterModelResponse@1',
      'beforeToolCall@1',
      'afterToolCall@1',
      'afterTurn@1',
      'beforeTurn@2',
      'beforeCompact@2',
      'onCompact@2',
      'beforeModelRequest@2',
      'afterModelResponse@2',
      'afterTurn@2',
    ]);
    const failures = (await readAll(log, session.id)).filter((e) => e.type === 'hook.failed');
    expect(failures).toHaveLength(2);
    expect(failures[0]).toMatchObject({ hook: 'afterModelResponse', error: 'observer bug', step: 1 });
  });

  it('turns invalid arguments, unknown tools and throwing tools into error results the model sees', async () => {
    const boom = defineTool({ name: 'boom', description: 'fails', parameters: z.object({}), execute: () => { throw new Error('kaput'); } });
    const model = new ScriptedModelClient([
      { items: [functionCall('a', 'echo', { text: 42 }), functionCall('b', 'nope', {}), functionCall('c', 'boom', {}), functionCall('d', 'echo', '{not json')] },
      final('ok'),
    ]);
    const log = await openMemoryLog();
    const session = await Agents.react({ modelClient: model, model: 'm', tools: [echo, boom], log, ids }).newSession();
    await session.run('go');
    const results = (await readAll(log, session.id)).filter((e) => e.type === 'tool.result');
    expect(results.map((r) => r.type === 'tool.result' && [r.callId, r.isError])).toEqual([
      ['a', true],
      ['b', true],
      ['c', true],
      ['d', true],
    ]);
    const outputs = results.map((r) => (r.type === 'tool.result' ? r.output : ''));
    expect(outputs[0]).toMatch(/^Error: invalid arguments for echo: .*text/);
    expect(outputs[1]).toBe('Error: unknown tool "nope"');
    expect(outputs[2]).toBe('Error: kaput');
    expect(outputs[3]).toMatch(/^Error: arguments for echo are not valid JSON/);
    expect(model.requests[1]!.items.filter((i) => i.type === 'function_call_output')).toHaveLength(4);
  });

  it('gives a non-string tool result as JSON text and lets tools record facts', async () => {
    const runTests = defineTool({
      name: 'run_tests',
      description: 'run tests',
      parameters: z.object({}),
      execute: async (_args, context) => {
        await context.record({ type: 'test.result', status: 'failed', passed: 3, failed: 1 });
        return { passed: 3, failed: 1 };
      },
    });
    const log = await openMemoryLog();
    const session = await Agents.react({
      modelClient: new ScriptedModelClient([callTool('t', 'run_tests', {}), final('ok')]),
      model: 'm',
      tools: [runTests],
      log,
      ids,
    }).newSession();
    await session.run('test it');
    const events = await readAll(log, session.id);
    expect(events.find((e) => e.type === 'tool.result')).toMatchObject({ output: '{"passed":3,"failed":1}', isError: false });
    expect(session.memory.snapshot().facts?.map((f) => f.type)).toEqual(['test.result']);
  });

  it('adds an assistant message when the model gives outputText alone', async () => {
    const session = await Agents.react({ modelClient: new ScriptedModelClient([{ outputText: 'bare', items: [] }]), model: 'm', ids }).newSession();
    const result = await session.run('hi');
    expect(result.outputText).toBe('bare');
    expect(session.memory.getItems().at(-1)).toEqual(assistantMessage('bare'));
  });

  it('stops at maxSteps with run.failed and an AgentRunError', async () => {
    const log = await openMemoryLog();
    const loop = new ScriptedModelClient(Array.from({ length: 10 }, (_, i) => callTool(`c${i}`, 'echo', { text: 'again' })));
    const session = await Agents.react({ modelClient: loop, model: 'm', tools: [echo], maxSteps: 3, log, ids }).newSession();
    const error = await session.run('loop').catch((e: unknown) => e);
    expect(isAgentRunError(error)).toBe(true);
    expect((error as AgentRunError).reason).toBe('max-steps');
    const events = await readAll(log, session.id);
    expect(events.at(-1)).toMatchObject({ type: 'run.failed', reason: 'max-steps' });
    expect(events.filter((e) => e.type === 'step.started')).toHaveLength(3);
    expect(checkSessionLaws(events)).toEqual([]);
  });

  it('on abort between tool calls answers the skipped calls with "not executed" and records run.failed', async () => {
    const controller = new AbortController();
    const slow = defineTool({
      name: 'slow',
      description: 'aborts the run',
      parameters: z.object({}),
      execute: () => {
        controller.abort(new Error('user pressed stop'));
        return 'first ran';
      },
    });
    const log = await openMemoryLog();
    const session = await Agents.react({
      modelClient: new ScriptedModelClient([{ items: [functionCall('a', 'slow', {}), functionCall('b', 'slow', {})] }]),
      model: 'm',
      tools: [slow],
      log,
      ids,
    }).newSession();
    const error = await session.run('go', { signal: controller.signal }).catch((e: unknown) => e);
    expect((error as AgentRunError).reason).toBe('aborted');
    const events = await readAll(log, session.id);
    const results = events.filter((e) => e.type === 'tool.result');
    expect(results.map((r) => r.type === 'tool.result' && r.output)).toEqual(['first ran', 'Error: not executed: run aborted']);
    expect(events.at(-1)).toMatchObject({ type: 'run.failed', reason: 'aborted' });
    expect(checkSessionLaws(events)).toEqual([]);
  });

  it('continues an interrupted run from the log, answering calls a crash left open, and keeps counting steps', async () => {
    const log = await openMemoryLog();
    const first = await Agents.react({ modelClient: new ScriptedModelClient([]), model: 'm', tools: [echo], log, ids }).newSession();
    // What a crash mid-step leaves behind: a run, a step, a model answer with a call, and no tool result.
    await first.session.record([
      { type: 'run.started', runId: 'run-x', runtime: 'react' },
      { type: 'user.input', items: [userMessage('task')] },
      { type: 'step.started', runId: 'run-x', step: 1 },
      { type: 'model.responded', runId: 'run-x', step: 1, items: [functionCall('c9', 'echo', { text: 'x' })] },
    ]);
    const model = new ScriptedModelClient([final('recovered')]);
    const resumed = await Agents.react({ modelClient: model, model: 'm', tools: [echo], log, ids }).resumeSession(first.id);
    expect(resumed.interruptedRunId).toBe('run-x');
    expect(resumed.lastStep).toBe(1);
    const result = await resumed.run();
    expect(result.runId).toBe('run-x');
    expect(result.outputText).toBe('recovered');
    const events = await readAll(log, first.id);
    expect(events.find((e) => e.type === 'tool.result')).toMatchObject({
      callId: 'c9',
      isError: true,
      output: 'Error: not executed: the run was interrupted before this call ran',
    });
    expect(events.filter((e) => e.type === 'step.started').map((e) => e.type === 'step.started' && e.step)).toEqual([1, 2]);
    expect(model.requests[0]!.items.at(-1)).toMatchObject({ type: 'function_call_output', call_id: 'c9' });
    expect(checkSessionLaws(events).filter((v) => v.seq > 6)).toEqual([]);
  });

  it('rejects run() without input when nothing was interrupted', async () => {
    const session = await Agents.react({ modelClient: new ScriptedModelClient([]), model: 'm', ids }).newSession();
    await expect(session.run()).rejects.toThrow(/no interrupted run/);
  });

  it('records a model error as run.failed with reason error', async () => {
    const log = await openMemoryLog();
    const session = await Agents.react({ modelClient: new ScriptedModelClient([new Error('503 from provider')]), model: 'm', log, ids }).newSession();
    const error = await session.run('x').catch((e: unknown) => e);
    expect((error as AgentRunError).reason).toBe('error');
    expect((error as Error).message).toBe('503 from provider');
    expect((await readAll(log, session.id)).at(-1)).toMatchObject({ type: 'run.failed', reason: 'error', message: '503 from provider' });
  });
});

describe('DeepResearch runtime', () => {
  it('plans (plan.created), researches with tools, then writes a final report; each a step of the one loop', async () => {
    const model = new ScriptedModelClient([
      { outputText: '1. search the docs\n2. compare', items: [assistantMessage('1. search the docs\n2. compare')] },
      callTool('s1', 'echo', { text: 'docs' }),
      final('enough'),
      final('REPORT: docs say yes'),
    ]);
    const log = await openMemoryLog();
    const session = await Agents.deepResearch({ modelClient: model, model: 'm', tools: [echo], systemPrompt: 'You research.', log, ids }).newSession();
    const result = await session.run('Is it supported?');
    expect(result.outputText).toBe('REPORT: docs say yes');
    expect(result.steps).toBe(4);
    const events = await readAll(log, session.id);
    expect(events.find((e) => e.type === 'plan.created')).toMatchObject({ plan: ['search the docs', 'compare'], step: 1 });
    expect(model.requests[0]!.tools).toBeUndefined();
    expect(model.requests[1]!.tools?.map((t) => t.name)).toEqual(['echo']);
    expect(model.requests[3]!.tools).toBeUndefined();
    expect(model.requests[3]!.systemPrompt).toMatch(/final report/);
    expect(checkSessionLaws(events)).toEqual([]);
  });
});

describe('CodeAct runtime', () => {
  it('runs the model\'s JavaScript in the QuickJS sandbox, records inner tool calls tied to the outer call, and returns output', async () => {
    const code = "const a = await tools.echo({ text: 'hi' });\nconsole.log(a);\nreturn 6 * 7;";
    const model = new ScriptedModelClient([callTool('js1', 'execute_javascript', { code }), final('answer is 42')]);
    const log = await openMemoryLog();
    const agent = Agents.codeAct({ modelClient: model, model: 'm', tools: [echo], log, ids, compactPolicy: new StructuredSummaryCompactPolicy({ maxItems: 50 }) });
    const session = await agent.newSession();
    const result = await session.run('compute');
    expect(result.outputText).toBe('answer is 42');
    expect(model.requests[0]!.tools?.map((t) => t.name)).toEqual(['execute_javascript']);
    const results = (await readAll(log, session.id)).filter((e) => e.type === 'tool.result');
    expect(results).toHaveLength(2);
    expect(results[0]).toMatchObject({ callId: 'js1.1', parentCallId: 'js1', name: 'echo', output: 'echo: hi' });
    expect(results[1]).toMatchObject({ callId: 'js1', output: 'echo: hi\n=> 42', isError: false });
    // The nested result is audit-only: memory has the outer call and its output, no orphan.
    expect(session.memory.getItems().filter((i) => i.type === 'function_call_output')).toHaveLength(1);
    expect(checkSessionLaws(await readAll(log, session.id))).toEqual([]);
  });

  it('has no require, process or file system, enforces a time limit, and reports errors as the result', async () => {
    const programs = ["return typeof require + ' ' + typeof process;", 'while (true) {}', "throw new Error('bad code')"];
    const model = new ScriptedModelClient([
      { items: programs.map((code, i) => functionCall(`p${i}`, 'execute_javascript', { code })) },
      final('done'),
    ]);
    const log = await openMemoryLog();
    const session = await Agents.codeAct({ modelClient: model, model: 'm', log, ids, codeTimeoutMs: 2_000 }).newSession();
    await session.run('probe');
    const outputs = (await readAll(log, session.id)).filter((e) => e.type === 'tool.result').map((e) => (e.type === 'tool.result' ? e.output : ''));
    expect(outputs[0]).toBe('=> undefined undefined');
    expect(outputs[1]).toBe('Error: code timed out after 2000 ms');
    expect(outputs[2]).toBe('Error: bad code');
  });
});
