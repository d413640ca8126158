// A long scripted ReAct session (220+ tool steps, Tier-1 budget, automatic compaction) on the LevelDB log,
// with the design's laws checked from the recorded events after every step, then resumed from the reopened log.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  fatesOf,
  Agents,
  ScriptedModelClient,
  StructuredSummaryCompactPolicy,
  TypeAwareContextProjector,
  assistantMessage,
  defineTool,
  digestOf,
  functionCall,
  openLevelLog,
  reasoning,
  type AgentOptions,
  type MemoryItem,
  type ModelRequest,
  type ModelResult,
  type RunResult,
  type RuntimeNotification,
  type SessionEvent,
  type SessionEventLog,
  type SessionEventOf,
} from '../../src/index.js';
import { checkSessionLaws, type SessionLawViolation } from '../../src/testing/runtime-laws.js';

const TOOL_STEPS = 220;
const BUDGET = { maxItems: 40, maxRecentToolResults: 5 } as const;
const KEEP = 30;
const COMPACT_ABOVE = 60;

const readAll = async (log: SessionEventLog, id: string): Promise<SessionEvent[]> => {
  const out: SessionEvent[] = [];
  for await (const e of log.read(id)) out.push(e);
  return out;
};

const ofType = <T extends SessionEvent['type']>(events: readonly SessionEvent[], type: T): SessionEventOf<T>[] =>
  events.filter((e): e is SessionEventOf<T> => e.type === type);

// ---------------------------------------------------------------------------------------------
// Tools: a small repository the agent reads, edits, runs commands in and tests.

const files = new Map<string, string>([
  ['src/date.ts', 'export const parse = (s: string) => new Date(s);\n'.repeat(12)],
  ['src/tz.ts', 'export const offset = () => 0;\n'.repeat(20)],
  ['test/date.test.ts', "it('parses', () => expect(parse('2026-12-02')).toBeDefined());\n".repeat(8)],
]);
let fixedAtStep = Number.POSITIVE_INFINITY;

const readFile = defineTool({
  name: 'read_file',
  description: 'Read a file of the repository',
  parameters: z.object({ path: z.string() }),
  execute: ({ path: p }) => {
    const text = files.get(p);
    if (text === undefined) throw new Error(`no such file: ${p}`);
    return text;
  },
});

const editFile = defineTool({
  name: 'edit_file',
  description: 'Replace the content of a file',
  parameters: z.object({ path: z.string(), content: z.string() }),
  execute: async ({ path: p, content }, context) => {
    const change = files.has(p) ? 'modified' : 'created';
    files.set(p, content);
    await context.record({ type: 'artifact.changed', path: p, change });
    if (p === 'src/tz.ts' && content.includes('fixed')) fixedAtStep = Math.min(fixedAtStep, context.step);
    return `${change} ${p} (${content.length} chars)`;
  },
});

const shell = defineTool({
  name: 'shell',
  description: 'Run a shell command',
  parameters: z.object({ command: z.string() }),
  execute: async ({ command }, context) => {
    if (command.startsWith('false')) {
      await context.record({ type: 'command.failed', command, exitCode: 1, output: '', step: context.step });
      throw new Error(`command exited with 1: ${command}`);
    }
    return `$ ${command}\n${'output line\n'.repeat(1 + (context.step % 5))}`;
  },
});

const runTests = defineTool({
  name: 'run_tests',
  description: 'Run a test suite and report the outcome',
  parameters: z.object({ suite: z.string() }),
  execute: async ({ suite }, context) => {
    const failed = context.step > fixedAtStep ? 0 : 1;
    const passed = 11 + (context.step % 3);
    await context.record({
      type: 'test.result',
      status: failed > 0 ? 'failed' : 'passed',
      suite,
      passed,
      failed,
      step: context.step,
    });
    return { suite, passed, failed };
  },
});

const tools = [readFile, editFile, shell, runTests];

// ---------------------------------------------------------------------------------------------
// The script: one answer per step, with one to three calls, some with invalid arguments, some as
// `tool_calls` on an assistant message, some with reasoning; then a final answer.

const call = (id: string, name: string, args: object | string): MemoryItem => functionCall(id, name, args);

const answerFor = (step: number): ModelResult => {
  const id = (k: number): string => `call_${step}_${k}`;
  const fileNames = [...files.keys()];
  const file = fileNames[step % fileNames.length]!;
  const items: MemoryItem[] = [];
  if (step % 9 === 0) items.push(reasoning(`rs_${step}`, `Step ${step}: thinking about what failed last time.`));
  if (step === 150) {
    items.push(call(id(0), 'edit_file', { path: 'src/tz.ts', content: 'export const offset = () => fixed;\n' }));
  } else if (step % 23 === 0) {
    // Several calls in one answer, with an invalid one in the middle and an unknown tool.
    items.push(call(id(0), 'run_tests', { suite: 'date' }));
    items.push(call(id(1), 'run_tests', { suite: 42 }));
    items.push(call(id(2), 'git_blame', { path: file }));
  } else if (step % 13 === 0) {
    items.push(call(id(0), 'shell', '{"command": "ls -la'));
  } else if (step % 11 === 0) {
    items.push(call(id(0), 'shell', { command: `false && make step-${step}` }));
  } else if (step % 7 === 0) {
    // Chat-style: calls carried on the assistant message.
    items.push(
      assistantMessage(`Reading ${file} and running the tests.`, [
        { id: id(0), type: 'function', function: { name: 'read_file', arguments: JSON.stringify({ path: file }) } },
        { id: id(1), type: 'function', function: { name: 'run_tests', arguments: JSON.stringify({ suite: 'date' }) } },
      ]),
    );
  } else if (step % 5 === 0) {
    items.push(assistantMessage(`Editing ${file}.`));
    items.push(call(id(0), 'edit_file', { path: file, content: `// edit at step ${step}\n${files.get(file) ?? ''}`.slice(0, 900) }));
    items.push(call(id(1), 'run_tests', { suite: 'date' }));
  } else if (step % 3 === 0) {
    items.push(call(id(0), 'shell', { command: `grep -n parse ${file}` }));
  } else {
    items.push(call(id(0), 'read_file', { path: step % 17 === 0 ? 'missing.ts' : file }));
  }
  return { items, usage: { inputTokens: 1000 + step, outputTokens: 20 } };
};

const FINAL = 'The date parser now keeps the timezone offset; all date tests pass.';
/** Answers for steps `first`..`first + steps - 1` (call ids carry the step, so they stay unique), then `final`. */
const script = (steps: number, final: string, first = 1): ScriptedModelClient =>
  new ScriptedModelClient([
    ...Array.from({ length: steps }, (_, i) => (_request: ModelRequest) => answerFor(first + i)),
    { outputText: final, items: [assistantMessage(final)] },
  ]);

// ---------------------------------------------------------------------------------------------
// What the model was sent: calls and outputs must pair up exactly.

const callIdsIn = (items: readonly MemoryItem[]): string[] =>
  items.flatMap((item) => {
    const record = item as Record<string, unknown>;
    if (item.type === 'function_call') return [String(record['call_id'])];
    const calls = record['tool_calls'];
    return Array.isArray(calls) ? calls.map((c: { id: string }) => c.id) : [];
  });
const outputIdsIn = (items: readonly MemoryItem[]): string[] =>
  items.filter((i) => i.type === 'function_call_output').map((i) => String((i as Record<string, unknown>)['call_id']));

// ---------------------------------------------------------------------------------------------

describe('a long scripted session on the LevelDB log', () => {
  let dir: string;
  let log: SessionEventLog;
  let counter = 0;
  const ids = (): string => `long-${++counter}`;
  const projector = new TypeAwareContextProjector();
  const policy = new StructuredSummaryCompactPolicy({ maxItems: KEEP, pinnedPrefixItems: 1 }, undefined, { compactAbove: COMPACT_ABOVE });
  const options = (modelClient: ScriptedModelClient, onEvent: (n: RuntimeNotification) => void): AgentOptions => ({
    modelClient,
    model: 'scripted-model',
    systemPrompt: 'You fix bugs in a TypeScript repository. Use the tools.',
    tools,
    log,
    contextProjector: projector,
    contextBudget: BUDGET,
    compactPolicy: policy,
    maxSteps: TOOL_STEPS + 10,
    ids,
    checkpointEvery: 500,
    onEvent,
  });

  // Filled by the first run.
  const live: SessionEvent[] = [];
  const perStep: { step: number; violations: SessionLawViolation[] }[] = [];
  const reports: number[] = [];
  let sessionId = '';
  let model: ScriptedModelClient;
  let result: RunResult;
  let memoryAfterRun: unknown;
  let runMs = 0;
  let checkMs = 0;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'context-ledger-long-'));
    log = await openLevelLog(path.join(dir, 'ledger'));
    model = script(TOOL_STEPS, FINAL);
    const onEvent = (n: RuntimeNotification): void => {
      if (n.type === 'CONTEXT_PROJECTED') {
        reports.push(n.step);
        return;
      }
      if (n.type !== 'EVENT') return; // MEMORY_COMPRESS: the same report again, under the reference's name
      live.push(n.event);
      // The laws, at every step, over everything recorded so far (a throwing check counts as a violation).
      if (n.event.type === 'step.ended') {
        let violations: SessionLawViolation[];
        const t0 = performance.now();
        try {
          violations = checkSessionLaws(live, { projector });
        } catch (error) {
          violations = [{ law: 'coverage', seq: n.event.seq, message: `checkSessionLaws threw: ${String(error)}` }];
        }
        checkMs += performance.now() - t0;
        perStep.push({ step: n.event.step, violations });
      }
    };
    const agent = Agents.react(options(model, onEvent));
    const session = await agent.newSession();
    sessionId = session.id;
    const started = performance.now();
    result = await session.run('The date parser test fails in some timezones; find the bug and fix it.');
    runMs = performance.now() - started;
    memoryAfterRun = session.memory.state();
  }, 180_000);

  afterAll(async () => {
    await log?.close().catch(() => undefined);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('runs 220 tool steps and finishes with the final answer', () => {
    expect(result.outputText).toBe(FINAL);
    expect(result.steps).toBe(TOOL_STEPS + 1);
    expect(model.remaining).toBe(0);
    expect(model.requests).toHaveLength(TOOL_STEPS + 1);
    console.info(`long session: ${TOOL_STEPS + 1} steps, ${live.length} events, ${ofType(live, 'memory.compacted').length} compactions, run ${Math.round(runMs)} ms, of which ${Math.round(checkMs)} ms checking the laws after every step`);
  });

  it('keeps every law after every step, and over the whole log read back from LevelDB', async () => {
    expect(perStep.map((s) => s.step)).toEqual(Array.from({ length: TOOL_STEPS + 1 }, (_, i) => i + 1));
    expect(perStep.filter((s) => s.violations.length > 0)).toEqual([]);
    const stored = await readAll(log, sessionId);
    expect(stored).toEqual(live);
    expect(checkSessionLaws(stored)).toEqual([]);
    expect(await log.verify(sessionId)).toMatchObject({ valid: true, eventCount: stored.length });
    expect(ofType(stored, 'hook.failed')).toEqual([]);
    expect(ofType(stored, 'compaction.failed')).toEqual([]);
  });

  it('numbers steps 1..N, and each step writes its events in the loop\'s order', async () => {
    const stored = await readAll(log, sessionId);
    const steps = Array.from({ length: TOOL_STEPS + 1 }, (_, i) => i + 1);
    expect(ofType(stored, 'step.started').map((e) => e.step)).toEqual(steps);
    expect(ofType(stored, 'step.ended').map((e) => e.step)).toEqual(steps);
    expect(ofType(stored, 'context.projected').map((e) => e.step)).toEqual(steps);
    expect(ofType(stored, 'model.requested').map((e) => e.step)).toEqual(steps);
    expect(ofType(stored, 'model.responded').map((e) => e.step)).toEqual(steps);
    expect(reports).toEqual(steps);
    // Within a step: started → (compaction) → projected → requested → responded → results/facts → ended.
    const order = ['step.started', 'memory.compacted', 'context.projected', 'model.requested', 'model.responded', 'tool.result', 'step.ended'];
    let step = 0;
    let position = -1;
    for (const event of stored) {
      if (event.type === 'step.started') {
        step = event.step;
        position = 0;
        continue;
      }
      const at = order.indexOf(event.type);
      if (at < 0 || step === 0) continue; // facts interleave with tool results; run events frame the steps
      expect(at, `${event.type} at seq ${event.seq} (step ${step})`).toBeGreaterThanOrEqual(position);
      position = at;
      if (event.type === 'step.ended') step = 0;
    }
    const toolCalls = ofType(stored, 'step.ended').map((e) => e.toolCalls);
    expect(toolCalls.slice(0, -1).every((n) => n >= 1)).toBe(true);
    expect(toolCalls.at(-1)).toBe(0);
    expect(Math.max(...toolCalls)).toBe(3);
  });

  it('sent each request exactly the projection its step recorded, with every call answered and no orphan result', async () => {
    const stored = await readAll(log, sessionId);
    const projected = ofType(stored, 'context.projected');
    const requested = ofType(stored, 'model.requested');
    model.requests.forEach((request, i) => {
      expect(digestOf(request.items), `request of step ${i + 1}`).toBe(projected[i]!.digest);
      expect(requested[i]!.digest).toBe(projected[i]!.digest);
      expect(request.items).toHaveLength(projected[i]!.report.projectedItemCount);
      expect(fatesOf(projected[i]!).filter((f) => f.fate !== 'dropped')).toHaveLength(request.items.length);
      expect(request.items.length).toBeLessThanOrEqual(BUDGET.maxItems);
      const calls = callIdsIn(request.items);
      const outputs = outputIdsIn(request.items);
      expect(new Set(calls).size).toBe(calls.length);
      expect([...outputs].sort(), `calls and outputs sent at step ${i + 1}`).toEqual([...calls].sort());
    });
    // Tier-1 was at work: old results are placeholders, the newest five stay raw.
    const last = model.requests.at(-1)!.items.filter((i) => i.type === 'function_call_output').map((i) => String((i as Record<string, unknown>)['output']));
    expect(last.filter((o) => o.startsWith('[tool result cleared')).length).toBeGreaterThan(0);
    expect(last.slice(-BUDGET.maxRecentToolResults).every((o) => !o.startsWith('[tool result cleared'))).toBe(true);
  });

  it('answers invalid arguments, unknown tools and throwing tools with error results, and records facts', async () => {
    const stored = await readAll(log, sessionId);
    const results = ofType(stored, 'tool.result');
    const byId = new Map(results.map((r) => [r.callId, r]));
    expect(byId.get('call_23_1')).toMatchObject({ isError: true, output: expect.stringMatching(/^Error: invalid arguments for run_tests/) });
    expect(byId.get('call_23_2')).toMatchObject({ isError: true, output: 'Error: unknown tool "git_blame"' });
    expect(byId.get('call_13_0')).toMatchObject({ isError: true, output: expect.stringMatching(/^Error: arguments for shell are not valid JSON/) });
    expect(byId.get('call_22_0')).toMatchObject({ isError: true, output: 'Error: command exited with 1: false && make step-22' });
    expect(byId.get('call_34_0')).toMatchObject({ isError: true, output: 'Error: no such file: missing.ts' });
    expect(byId.get('call_7_1')).toMatchObject({ isError: false, output: expect.stringContaining('"failed":1') });
    // Every call the model made got exactly one result, in the order it gave them.
    const madeCalls = ofType(stored, 'model.responded').flatMap((e) => callIdsIn(e.items));
    expect(results.map((r) => r.callId)).toEqual(madeCalls);
    const tests = ofType(stored, 'test.result');
    expect(tests.length).toBeGreaterThan(40);
    expect(tests.filter((t) => t.status === 'passed').length).toBeGreaterThan(0);
    expect(tests.every((t) => t.status === (t.step! > 150 ? 'passed' : 'failed'))).toBe(true);
    expect(ofType(stored, 'command.failed').length).toBeGreaterThan(5);
    expect(ofType(stored, 'artifact.changed').length).toBeGreaterThan(10);
  });

  it('compacts a bounded number of times, each time over the threshold, and keeps facts in the results', async () => {
    const stored = await readAll(log, sessionId);
    const compactions = ofType(stored, 'memory.compacted');
    // Every item entering memory after the first compaction is one of these:
    const entered =
      ofType(stored, 'model.responded').reduce((n, e) => n + e.items.length, 0) + ofType(stored, 'tool.result').length + 1;
    // Each compaction brings memory down to at most KEEP items and the next needs more than COMPACT_ABOVE.
    const bound = Math.ceil(entered / (COMPACT_ABOVE - KEEP)) + 1;
    expect(compactions.length).toBeGreaterThanOrEqual(5);
    expect(compactions.length).toBeLessThanOrEqual(bound);
    for (const c of compactions) {
      expect(c.trigger).toBe('auto');
      expect(c.keptIds.length + c.droppedIds.length).toBeGreaterThan(COMPACT_ABOVE);
      expect(c.layout.length).toBeLessThanOrEqual(KEEP);
      expect(c.summary).toMatch(/^AI4J_COMPACT_SUMMARY/);
    }
    const steps = compactions.map((c) => c.step!);
    expect(new Set(steps).size).toBe(steps.length);
    // The facts between two compactions reach the structured result.
    expect(compactions.some((c) => c.result.testResults.length > 0)).toBe(true);
    expect(compactions.some((c) => c.result.failedCommands.length > 0)).toBe(true);
    expect(compactions.some((c) => c.result.changedArtifacts.length > 0)).toBe(true);
    // The summary stays bounded however often it is carried over.
    expect(Math.max(...compactions.map((c) => c.summary?.length ?? 0))).toBeLessThan(4_500);
  });

  it('resumes from the reopened log with the same memory, and keeps numbering steps', async () => {
    await log.close();
    log = await openLevelLog(path.join(dir, 'ledger'));
    const more = script(4, 'Also checked the other timezone; still green.', TOOL_STEPS + 2);
    const resumedLive: SessionEvent[] = [];
    const agent = Agents.react(
      options(more, (n) => {
        if (n.type === 'EVENT') resumedLive.push(n.event);
      }),
    );
    const resumed = await agent.resumeSession(sessionId);
    expect(resumed.memory.state()).toEqual(memoryAfterRun);
    expect(resumed.lastStep).toBe(TOOL_STEPS + 1);
    expect(resumed.interruptedRunId).toBeUndefined();
    const next = await resumed.run('Check the other timezone too.');
    expect(next.outputText).toBe('Also checked the other timezone; still green.');
    expect(next.steps).toBe(5);
    expect(ofType(resumedLive, 'step.started').map((e) => e.step)).toEqual([222, 223, 224, 225, 226]);
    // The resumed session's first request is the projection of the memory it resumed with plus the new input.
    const stored = await readAll(log, sessionId);
    expect(ofType(stored, 'step.started').map((e) => e.step)).toEqual(Array.from({ length: TOOL_STEPS + 6 }, (_, i) => i + 1));
    expect(checkSessionLaws(stored)).toEqual([]);
    expect(digestOf(more.requests[0]!.items)).toBe(ofType(stored, 'context.projected').at(-5)!.digest);
    expect((await log.verify(sessionId)).valid).toBe(true);
  });
});
