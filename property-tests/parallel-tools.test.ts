// Parallel tool calls: random answers with several calls, random durations, failures, facts and hook failures; for
// parallelToolCalls 1..4 and another interleaving, the log is the same apart from durationMs (and the hashes it feeds), and lawful.
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

describe('parallel tool calls', () => {
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
