// A step's bookkeeping events ride with the session's next append: three appends a step instead of six, and the
// stored events, their seqs, the checkpoints between them and what onEvent hears are those of one append per event
// (issue 28 item 3). The reference run has a no-op hook at every stage, and a hook sees every event stored before it.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  Agents,
  DefaultContextProjector,
  ScriptedModelClient,
  StructuredSummaryCompactPolicy,
  assistantMessage,
  clearProjectionCaches,
  defineTool,
  functionCall,
  openMemoryLog,
  openSession,
  type AgentHooks,
  type ContextProjector,
  type ModelResult,
  type NewSessionEvent,
  type RuntimeNotification,
  type SessionEvent,
  type SessionEventLog,
} from '../../src/index.js';
import { HOOK_NAMES } from '../../src/runtime/index.js';
import { deferWrite, deferredGroups, flushDeferred } from '../../src/session/index.js';
import { deterministicSalts } from '../../src/log/index.js';

const clock = (): string => '2026-01-01T00:00:00.000Z';

const readFile = defineTool({
  name: 'read_file',
  description: 'Read a file',
  parameters: z.object({ path: z.string() }),
  execute: ({ path }) => `// ${path}`,
});

const guarded = defineTool({
  name: 'deploy',
  description: 'Deploy',
  parameters: z.object({}),
  needsApproval: true,
  execute: () => 'deployed',
});

const script = (steps: number): ModelResult[] => [
  ...Array.from({ length: steps - 1 }, (_, i) => ({ items: [functionCall(`call_${i}`, 'read_file', { path: `src/f${i}.ts` })] })),
  { outputText: 'done', items: [assistantMessage('done')] },
];

/** The log, with every append counted. */
const countingLog = (log: SessionEventLog): { log: SessionEventLog; appends: () => number } => {
  let appends = 0;
  const counted = new Proxy(log, {
    get(target, key) {
      if (key === 'append') {
        return (...args: Parameters<SessionEventLog['append']>) => {
          appends += 1;
          return target.append(...args);
        };
      }
      const value = Reflect.get(target, key) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { log: counted, appends: () => appends };
};

/** A hook at every stage that does nothing: each makes the step store what it put off before the hook runs. */
const everyHook = (): AgentHooks => Object.fromEntries(HOOK_NAMES.map((name) => [name, () => undefined])) as AgentHooks;

interface Recorded {
  readonly events: string[];
  readonly heard: string[];
  readonly appends: number;
  readonly outcome: string;
}

/** Runs `answers` in a fresh log (fixed clock and ids) and returns the stored events as text, what onEvent heard, and the appends. */
const record = async (
  answers: ModelResult[],
  options: { hooks?: AgentHooks; checkpointEvery?: number; projector?: ContextProjector; tools?: typeof readFile[]; compaction?: boolean } = {},
): Promise<Recorded> => {
  // Checkpoints save the token counts already made of memory's items: start each run with none made.
  clearProjectionCaches();
  const memoryLog = await openMemoryLog({ clock, salt: deterministicSalts('step-writes') });
  const { log, appends } = countingLog(memoryLog);
  const heard: string[] = [];
  let n = 0;
  const agent = Agents.react({
    modelClient: new ScriptedModelClient(answers),
    model: 'scripted',
    systemPrompt: 'You read files.',
    tools: options.tools ?? [readFile],
    log,
    ids: () => `id-${++n}`,
    contextBudget: { maxTokens: 600 },
    ...(options.projector ? { contextProjector: options.projector } : {}),
    ...(options.hooks ? { hooks: options.hooks } : {}),
    ...(options.checkpointEvery !== undefined ? { checkpointEvery: options.checkpointEvery } : {}),
    // compaction now and then, so that compaction events fall between deferred ones
    ...(options.compaction ? { compactPolicy: new StructuredSummaryCompactPolicy({ maxItems: 6 }, undefined, { compactAbove: 9 }) } : {}),
    onEvent: (note: RuntimeNotification) => heard.push(note.type === 'EVENT' ? `EVENT ${note.event.seq} ${note.event.type}` : `${note.type} ${note.step}`),
  });
  const session = await agent.newSession();
  const before = appends();
  let outcome: string;
  try {
    const result = await session.run('Read the files.');
    outcome = `${result.status} after ${result.steps} steps`;
  } catch (error) {
    outcome = `failed: ${(error as Error).message}`;
  }
  expect(deferredGroups(session.memory)).toBe(0);
  const events: string[] = [];
  // Every byte but the model call's measured duration (and so the hashes after it).
  for await (const event of memoryLog.read(session.id)) {
    const { hash: _h, prevHash: _p, contentDigest: _c, durationMs: _d, ...rest } = event as SessionEvent & { contentDigest?: string; durationMs?: number };
    events.push(JSON.stringify(rest));
  }
  await memoryLog.close();
  return { events, heard, appends: appends() - before, outcome };
};

describe("a step's writes", () => {
  it('a step appends three times (before the model call, its answer, its results) instead of six; the events are the same', async () => {
    const batched = await record(script(10));
    const oneByOne = await record(script(10), { hooks: everyHook() });
    expect(batched.outcome).toBe('finished after 10 steps');
    // run.started with its input, then 3 per tool step, 2 for the last step and the run's end with the last step.ended
    expect(batched.appends).toBe(1 + 9 * 3 + 2 + 1);
    expect(oneByOne.appends).toBeGreaterThanOrEqual(1 + 9 * 6 + 5 + 1);
    expect(batched.events).toEqual(oneByOne.events);
    expect(batched.heard).toEqual(oneByOne.heard);
  });

  it('checkpoints and compactions land where they land with one append per event (a checkpoint every 4 events)', async () => {
    const again = await record(script(14), { checkpointEvery: 4, compaction: true });
    const batched = await record(script(14), { checkpointEvery: 4, compaction: true });
    expect(again.events).toEqual(batched.events);
    const oneByOne = await record(script(14), { checkpointEvery: 4, compaction: true, hooks: everyHook() });
    expect(batched.events.filter((e) => e.includes('"memory.compacted"')).length).toBeGreaterThan(1);
    expect(batched.events.filter((e) => e.includes('"checkpoint.taken"')).length).toBeGreaterThan(10);
    expect(batched.events).toEqual(oneByOne.events);
    expect(batched.heard).toEqual(oneByOne.heard);
  });

  it('a deferred event the log refuses fails the step where it failed before, with the same events stored', async () => {
    const inner = new DefaultContextProjector();
    // A projector whose report the event schema refuses: context.projected cannot be stored.
    const broken: ContextProjector = {
      project: (items, budget) => {
        const projection = inner.project(items, budget);
        return { items: projection.items, report: { ...projection.report, sourceApproxChars: -1 } };
      },
      describe: () => inner.describe(),
    };
    const batched = await record(script(3), { projector: broken });
    const oneByOne = await record(script(3), { projector: broken, hooks: everyHook() });
    expect(batched.outcome).toMatch(/^failed: .*context\.projected/);
    expect(batched.outcome).toBe(oneByOne.outcome);
    expect(batched.events).toEqual(oneByOne.events);
    expect(batched.events.map((e) => (JSON.parse(e) as SessionEvent).type).slice(-2)).toEqual(['step.started', 'run.failed']);
  });

  it('a projector that throws, a model error, a tool that throws and an exhausted script leave the events of one append per event', async () => {
    let projections = 0;
    const throwing: ContextProjector = {
      project: (items, budget) => {
        projections += 1;
        if (projections === 3 || projections === 5) throw new Error('projector broke');
        return new DefaultContextProjector().project(items, budget);
      },
      describe: () => ({ name: 'DefaultContextProjector', settings: { tokenizer: 'approx' } }),
    };
    const failing = defineTool({ name: 'read_file', description: 'Read a file', parameters: z.object({ path: z.string() }), execute: () => { throw new Error('disk gone'); } });
    const cases: { name: string; answers: () => ModelResult[]; options: () => Parameters<typeof record>[1]; outcome: string }[] = [
      { name: 'projector', answers: () => script(5), options: () => ({ projector: throwing }), outcome: 'failed: projector broke' },
      { name: 'model error', answers: () => [...script(3).slice(0, 2), new Error('model down') as unknown as ModelResult], options: () => ({}), outcome: 'failed: model down' },
      { name: 'tool throws', answers: () => script(4), options: () => ({ tools: [failing] }), outcome: 'finished after 4 steps' },
      { name: 'script exhausted', answers: () => script(3).slice(0, 2), options: () => ({}), outcome: 'failed: ScriptedModelClient: no answer left for request #3' },
    ];
    for (const c of cases) {
      projections = 0;
      const batched = await record(c.answers(), c.options());
      projections = 0;
      const oneByOne = await record(c.answers(), { ...c.options(), hooks: everyHook() });
      expect(batched.outcome, c.name).toBe(c.outcome);
      expect(oneByOne.outcome, c.name).toBe(c.outcome);
      expect(batched.events, c.name).toEqual(oneByOne.events);
      expect(batched.heard, c.name).toEqual(oneByOne.heard);
      expect(JSON.parse(batched.events.at(-1)!).type, c.name).toMatch(/^run\.(failed|finished)$/);
    }
  });

  it('an interrupted run stores its step before run() returns', async () => {
    const answers: ModelResult[] = [{ items: [functionCall('d1', 'deploy', {})] }];
    const batched = await record(answers, { tools: [readFile, guarded as unknown as typeof readFile] });
    expect(batched.outcome).toBe('interrupted after 1 steps');
    expect((JSON.parse(batched.events.at(-1)!) as SessionEvent).type).toBe('step.ended');
    expect(batched.events).toEqual((await record(answers, { tools: [readFile, guarded as unknown as typeof readFile], hooks: everyHook() })).events);
  });
});

describe('deferWrite', () => {
  const step = (n: number): NewSessionEvent => ({ type: 'step.started', runId: 'r', step: n });
  const types = async (log: SessionEventLog, id: string): Promise<string[]> => {
    const out: string[] = [];
    for await (const e of log.read(id)) out.push(e.type === 'step.started' ? `step ${e.step}` : e.type);
    return out;
  };

  it('merges deferred groups into the next append, never across a checkpoint, also right after a long fold', async () => {
    // Group sizes and checkpoint bands that put band edges inside and between groups.
    const groups: NewSessionEvent[][] = [[step(1)], [step(2), step(3)], [step(4)], [step(5), step(6), step(7)], [step(8)], [step(9)], [step(10), step(11)]];
    for (const every of [2, 3, 5]) {
      const stored: Record<string, string[]> = {};
      for (const mode of ['deferred', 'one by one'] as const) {
        const log = await openMemoryLog({ clock, salt: deterministicSalts('step-writes') });
        // A session folded from 6 events without a checkpoint: the next append takes one (checkpointDue).
        const first = await openSession(log, { id: 's', checkpointEvery: 0 });
        await first.record([step(100), step(101), step(102), step(103), step(104)]);
        const session = await openSession(log, { id: 's', checkpointEvery: every });
        for (let g = 0; g < groups.length; g++) {
          if (mode === 'deferred' && g < groups.length - 1) expect(deferWrite(session.memory, groups[g]!)).toBe(true);
          else await session.record(groups[g]!);
        }
        await flushDeferred(session.memory);
        stored[mode] = await types(log, 's');
        await log.close();
      }
      expect(stored['deferred']).toEqual(stored['one by one']);
      expect(stored['deferred']!.filter((t) => t === 'checkpoint.taken').length).toBeGreaterThan(2);
    }
  });

  it('a write asked for before a deferral does not carry it: the order is the order things were asked for', async () => {
    const log = await openMemoryLog({ clock, salt: deterministicSalts('step-writes') });
    const session = await openSession(log, { id: 'o', checkpointEvery: 0 });
    const first = session.record([step(1)]);
    const told: number[] = [];
    deferWrite(session.memory, [step(2)], (stored) => told.push(...stored.map((e) => e.seq)));
    const third = session.record([step(3)]);
    await Promise.all([first, third]);
    expect(await types(log, 'o')).toEqual(['session.started', 'step 1', 'step 2', 'step 3']);
    expect(told).toEqual([3]);
    expect(deferredGroups(session.memory)).toBe(0);
    await log.close();
  });

  it('save() and checkpoint() store what waits before they take the state', async () => {
    const log = await openMemoryLog({ clock, salt: deterministicSalts('step-writes') });
    const session = await openSession(log, { id: 'c', checkpointEvery: 0 });
    deferWrite(session.memory, [step(1)]);
    const { seq, taken } = await session.checkpoint();
    expect(taken).toBe(true);
    expect(await types(log, 'c')).toEqual(['session.started', 'step 1', 'checkpoint.taken']);
    expect(seq).toBe(3);
    const reopened = await openSession(log, { id: 'c' });
    expect(reopened.opened.from).toEqual({ checkpointSeq: 3 });
    await log.close();
  });
});
