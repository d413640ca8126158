// Parallel tool calls: random answers with several calls, random durations, failures, facts and hook failures; for
// parallelToolCalls 1..4 and another interleaving, the log is the same apart from durationMs (and the hashes it feeds), and lawful.
// With an abort at a random point (calls that hang, honouring the signal or not): each call's hooks run as documented,
// the laws hold, and replay is identical in both modes whatever order the calls ended in.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  Agents,
  ScriptedModelClient,
  assistantMessage,
  defineTool,
  functionCall,
  openMemoryLog,
  replaySession,
  type ModelResult,
  type SessionEvent,
} from '../src/index.js';
import { checkSessionLaws } from '../src/testing/runtime-laws.js';

interface CallSpec {
  readonly ticks: number;
  readonly fails: boolean;
  readonly fact: boolean;
  readonly hookFails: boolean;
}

const arbitraryCall: fc.Arbitrary<CallSpec> = fc.record({
  ticks: fc.integer({ min: 0, max: 6 }),
  fails: fc.boolean(),
  fact: fc.boolean(),
  hookFails: fc.boolean(),
});
const arbitraryAnswers = fc.array(fc.array(arbitraryCall, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 3 });

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Runs the scenario with a limit; `durationOf` decides how many ticks each call takes (another interleaving). */
const runScenario = async (answers: readonly (readonly CallSpec[])[], limit: number, durationOf: (spec: CallSpec, index: number) => number) => {
  const specs = new Map<string, CallSpec & { index: number }>();
  const script: ModelResult[] = answers.map((callsOfAnswer, a) => ({
    items: callsOfAnswer.map((spec, c) => {
      const id = `call-${a}-${c}`;
      specs.set(id, { ...spec, index: c });
      return functionCall(id, 'work', { id });
    }),
  }));
  script.push({ outputText: 'done', items: [assistantMessage('done')] });
  let running = 0;
  let maxRunning = 0;
  const work = defineTool({
    name: 'work',
    description: 'work',
    parameters: z.object({ id: z.string() }),
    execute: async ({ id }, context) => {
      const spec = specs.get(id)!;
      running += 1;
      maxRunning = Math.max(maxRunning, running);
      try {
        for (let t = 0; t < durationOf(spec, spec.index); t++) await tick();
        if (spec.fact) await context.record({ type: 'test.result', status: spec.fails ? 'failed' : 'passed', suite: id });
        if (spec.fails) throw new Error(`${id} failed`);
        return `${id} ok`;
      } finally {
        running -= 1;
      }
    },
  });
  const log = await openMemoryLog();
  let n = 0;
  const agent = Agents.react({
    modelClient: new ScriptedModelClient(script),
    model: 'm',
    log,
    tools: [work],
    parallelToolCalls: limit,
    ids: () => `id-${++n}`,
    hooks: {
      beforeToolCall: ({ call }) => {
        if (specs.get(call.callId)?.hookFails) throw new Error(`before ${call.callId}`);
      },
      afterToolCall: ({ call }) => {
        if (specs.get(call.callId)?.hookFails) throw new Error(`after ${call.callId}`);
      },
    },
  });
  const session = await agent.newSession();
  await session.run('go');
  const events: SessionEvent[] = [];
  for await (const e of log.read(session.id)) events.push(e);
  return { events, maxRunning, log, sessionId: session.id };
};

/** The log without what may differ between runs: durations and the hashes that cover them. */
const comparable = (events: readonly SessionEvent[]) =>
  events.map((e) => {
    const { at: _at, hash: _h, prevHash: _p, contentDigest: _c, contentSalt: _s, ...rest } = e as SessionEvent & { durationMs?: number; contentDigest?: string };
    const { durationMs: _d, ...payload } = rest as typeof rest & { durationMs?: number };
    return payload;
  });

interface AbortCallSpec {
  readonly ticks: number;
  readonly fails: boolean;
  readonly fact: boolean;
  readonly hookFails: boolean;
  /** `ignores`: never settles, whatever the signal; `honours`: rejects when the signal aborts. */
  readonly hangs: 'no' | 'ignores' | 'honours';
}

const arbitraryAbortScenario = fc.record({
  /** Answers before the one the abort ends (their calls do not hang). */
  before: fc.array(fc.array(arbitraryCall, { minLength: 1, maxLength: 3 }), { maxLength: 2 }),
  aborted: fc.array(fc.record({ ticks: fc.integer({ min: 0, max: 6 }), fails: fc.boolean(), fact: fc.boolean(), hookFails: fc.boolean(), hangs: fc.constantFrom('no', 'ignores', 'honours') }), {
    minLength: 1,
    maxLength: 6,
  }),
  /** Turns of the event loop from the first call of the aborted answer to the abort. */
  abortAfterTicks: fc.integer({ min: 0, max: 12 }),
});

/** Runs answers `before`, then `aborted`, whose calls the run's signal aborts `abortAfterTicks` turns after the first starts. */
const runAbortScenario = async (scenario: { before: readonly (readonly CallSpec[])[]; aborted: readonly AbortCallSpec[]; abortAfterTicks: number }, limit: number) => {
  const answers: (readonly AbortCallSpec[])[] = [...scenario.before.map((a) => a.map((c) => ({ ...c, hangs: 'no' as const }))), scenario.aborted];
  const specs = new Map<string, AbortCallSpec>();
  const script: ModelResult[] = answers.map((callsOfAnswer, a) => ({
    items: callsOfAnswer.map((spec, c) => {
      const id = `call-${a}-${c}`;
      specs.set(id, spec);
      return functionCall(id, 'work', { id });
    }),
  }));
  const abortedAnswer = answers.length - 1;
  const controller = new AbortController();
  let scheduled = false;
  const work = defineTool({
    name: 'work',
    description: 'work',
    parameters: z.object({ id: z.string() }),
    execute: async ({ id }, context) => {
      const spec = specs.get(id)!;
      if (id.startsWith(`call-${abortedAnswer}-`) && !scheduled) {
        scheduled = true;
        void (async () => {
          for (let t = 0; t < scenario.abortAfterTicks; t++) await tick();
          controller.abort(new Error('stopped'));
        })();
      }
      for (let t = 0; t < spec.ticks; t++) await tick();
      if (spec.hangs !== 'no') {
        await new Promise((_resolve, reject) => {
          if (spec.hangs === 'honours') {
            if (context.signal.aborted) reject(new Error(`${id} saw the abort`));
            context.signal.addEventListener('abort', () => reject(new Error(`${id} saw the abort`)), { once: true });
          }
        });
      }
      if (spec.fact) await context.record({ type: 'test.result', status: spec.fails ? 'failed' : 'passed', suite: id });
      if (spec.fails) throw new Error(`${id} failed`);
      return `${id} ok`;
    },
  });
  const before: string[] = [];
  const after: string[] = [];
  const log = await openMemoryLog();
  let n = 0;
  const agent = Agents.react({
    modelClient: new ScriptedModelClient([...script, { outputText: 'done', items: [assistantMessage('done')] }]),
    model: 'm',
    log,
    tools: [work],
    parallelToolCalls: limit,
    ids: () => `id-${++n}`,
    hooks: {
      beforeToolCall: ({ call }) => {
        before.push(call.callId);
        if (specs.get(call.callId)?.hookFails) throw new Error(`before ${call.callId}`);
      },
      afterToolCall: ({ call }) => {
        after.push(call.callId);
        if (specs.get(call.callId)?.hookFails) throw new Error(`after ${call.callId}`);
      },
    },
  });
  const session = await agent.newSession();
  const outcome = await session.run('go', { signal: controller.signal }).then(
    (r) => r.status,
    (e: unknown) => (e as { reason?: string }).reason,
  );
  const events: SessionEvent[] = [];
  for await (const e of log.read(session.id)) events.push(e);
  return { events, before, after, outcome, log, sessionId: session.id };
};

describe('parallel tool calls', () => {
  it('an abort at a random point: hooks once per call that started / ran to an end, the laws hold, replay is identical in both modes', async () => {
    await fc.assert(
      fc.asyncProperty(arbitraryAbortScenario, fc.integer({ min: 1, max: 4 }), async (scenario, limit) => {
        const { events, before, after, outcome, log, sessionId } = await runAbortScenario(scenario, limit);
        expect(checkSessionLaws(events)).toEqual([]);
        const outer = events.filter((e): e is Extract<SessionEvent, { type: 'tool.result' }> => e.type === 'tool.result' && e.parentCallId === undefined);
        const started = outer.filter((r) => !r.output.startsWith('Error: not executed'));
        const ended = started.filter((r) => !r.output.startsWith('Error: aborted while tool'));
        // Every call the run started got beforeToolCall, and afterToolCall once if it ran to an end, in call order.
        expect(before).toEqual(started.map((r) => r.callId));
        expect(after).toEqual(ended.map((r) => r.callId));
        if (outcome === 'aborted') expect(events.at(-1)).toMatchObject({ type: 'run.failed', reason: 'aborted' });
        for (const mode of ['project', 'rerun'] as const) {
          const replayed = await replaySession(log, sessionId, { mode });
          expect({ mode, identical: replayed.identical, at: replayed.firstDivergence }).toEqual({ mode, identical: true, at: undefined });
        }
      }),
      { numRuns: Math.min(fc.readConfigureGlobal().numRuns ?? 100, 30) },
    );
  }, 120_000);

  it('the log is the same for every limit 1..4 and interleaving, apart from durationMs; the laws hold; replay is identical', async () => {
    await fc.assert(
      fc.asyncProperty(arbitraryAnswers, async (answers) => {
        const sequential = await runScenario(answers, 1, (spec) => spec.ticks);
        expect(checkSessionLaws(sequential.events)).toEqual([]);
        const expected = comparable(sequential.events);
        for (const limit of [2, 3, 4]) {
          const parallel = await runScenario(answers, limit, (spec) => spec.ticks);
          expect(comparable(parallel.events)).toEqual(expected);
          expect(checkSessionLaws(parallel.events)).toEqual([]);
          // The reverse interleaving: early calls take longest, so later calls finish first.
          const reversed = await runScenario(answers, limit, (_spec, index) => 12 - 2 * index);
          expect(comparable(reversed.events)).toEqual(expected);
          if (answers.some((a) => a.length > 1)) expect(reversed.maxRunning).toBeGreaterThan(1);
          expect(reversed.maxRunning).toBeLessThanOrEqual(limit);
        }
        const replayed = await replaySession(sequential.log, sequential.sessionId, { mode: 'rerun' });
        expect(replayed.identical).toBe(true);
      }),
      { numRuns: Math.min(fc.readConfigureGlobal().numRuns ?? 100, 10) },
    );
  }, 120_000);
});
