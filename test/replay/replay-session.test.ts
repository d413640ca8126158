// replaySession in both modes: recorded sessions reproduce; a changed setting is reported at the first step it changes; an
// untrusted recording cannot hang a replay.
import { describe, expect, it } from 'vitest';
import {
  LlmCompactPolicy,
  ScriptedModelClient,
  digestOf,
  isAgentRunError,
  openMemoryLog,
  replaySession,
  type SessionEventLog,
} from '../../src/index.js';
import { checkSessionLaws } from '../../src/testing/runtime-laws.js';
import { FOREVER, forgeCodeActRecording } from '../support/forged-codeact.js';
import { callTool, countingLog, final, readAll, replayAgent, scriptedTurns } from './support.js';

/** Two runs with tool calls, failing tools and facts, automatic compaction, a failing hook, then an abort after a step. */
const recordSession = async (log: SessionEventLog): Promise<string> => {
  let abortAtStep = -1;
  const controller = { current: new AbortController() };
  const agent = replayAgent(log, [...scriptedTurns(12, 'a'), ...scriptedTurns(9, 'b'), callTool('z1', 'echo', { text: 'late' }), callTool('z2', 'echo', { text: 'later' })], {
    hooks: {
      afterToolCall: ({ step }) => {
        if (step === 5) throw new Error('hook broke at 5');
      },
      afterTurn: ({ step }) => {
        if (step === abortAtStep) controller.current.abort(new Error('user pressed stop'));
      },
    },
  });
  const session = await agent.newSession();
  await session.run('first task');
  await session.memory.addUserInput('a note between runs');
  await session.session.record([{ type: 'test.result', status: 'passed', passed: 3 }]);
  await session.run('second task');
  abortAtStep = session.lastStep + 1;
  controller.current = new AbortController();
  const failure = await session.run('third task', { signal: controller.current.signal }).catch((e: unknown) => e);
  expect(isAgentRunError(failure) && failure.reason).toBe('aborted');
  return session.id;
};

describe('replaySession', () => {
  it('a recorded session replays identically in project and rerun mode, and reading writes nothing', async () => {
    const memory = await openMemoryLog();
    const id = await recordSession(memory);
    const events = await readAll(memory, id);
    expect(checkSessionLaws(events)).toEqual([]);
    expect(events.some((e) => e.type === 'memory.compacted')).toBe(true);
    expect(events.some((e) => e.type === 'hook.failed')).toBe(true);
    const { log, counts } = countingLog(memory);
    const projected = await replaySession(log, id);
    expect(projected).toMatchObject({ mode: 'project', identical: true, divergentSteps: 0 });
    expect(projected.steps).toBe(events.filter((e) => e.type === 'context.projected').length);
    const rerun = await replaySession(log, id, { mode: 'rerun' });
    expect(rerun.firstDivergence).toBeUndefined();
    expect(rerun).toMatchObject({ mode: 'rerun', identical: true, divergentSteps: 0, steps: projected.steps });
    expect(counts.appends + counts.checkpointWrites).toBe(0);
    await memory.close();
  });

  it('reports progress: events read out of the head (project), model answers out of those recorded (rerun)', async () => {
    const log = await openMemoryLog();
    const id = await recordSession(log);
    const events = await readAll(log, id);
    const seen: Array<[number, number]> = [];
    await replaySession(log, id, { onProgress: (done, total) => seen.push([done, total]) });
    const head = events.length;
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every(([, total]) => total === head)).toBe(true);
    expect(seen.map(([done]) => done)).toEqual([...seen.map(([done]) => done)].sort((a, b) => a - b));
    expect(seen.at(-1)).toEqual([head, head]);
    const answers = events.filter((e) => e.type === 'model.responded').length;
    const rerunSeen: Array<[number, number]> = [];
    await replaySession(log, id, { mode: 'rerun', onProgress: (done, total) => rerunSeen.push([done, total]) });
    expect(rerunSeen.at(-1)?.[1]).toBeGreaterThanOrEqual(answers);
    expect(rerunSeen.map(([done]) => done)).toEqual(Array.from({ length: rerunSeen.length }, (_, i) => i + 1));
    await log.close();
  });

  it('a changed budget is reported at the first step whose projection changes (checked against a direct comparison)', async () => {
    const log = await openMemoryLog();
    const agent = replayAgent(log, scriptedTurns(16), { compactPolicy: undefined as never, contextBudget: { maxTokens: 2_000 } });
    const session = await agent.newSession();
    await session.run('go');
    const budget = { maxTokens: 300 };
    const result = await replaySession(log, session.id, { budget });
    // direct: re-run the same agent with the new budget and compare each step's digest
    const direct = await openMemoryLog();
    const again = replayAgent(direct, scriptedTurns(16), { compactPolicy: undefined as never, contextBudget: budget });
    const s2 = await again.newSession();
    await s2.run('go');
    const recordedDigests = (await readAll(log, session.id)).filter((e) => e.type === 'context.projected').map((e) => (e.type === 'context.projected' ? e.digest : ''));
    const directDigests = (await readAll(direct, s2.id)).filter((e) => e.type === 'context.projected').map((e) => (e.type === 'context.projected' ? e.digest : ''));
    const firstDifferent = recordedDigests.findIndex((d, i) => d !== directDigests[i]) + 1;
    expect(firstDifferent).toBeGreaterThan(1);
    expect(result.identical).toBe(false);
    expect(result.firstDivergence?.step).toBe(firstDifferent);
    expect(result.divergentSteps).toBe(recordedDigests.filter((d, i) => d !== directDigests[i]).length);
    expect(result.firstDivergence?.context?.dropped.length).toBeGreaterThan(0);
    expect(result.firstDivergence?.context?.commonPrefixItems).toBeGreaterThanOrEqual(0);
    // the rerun mode agrees on the first step
    const rerun = await replaySession(log, session.id, { mode: 'rerun', budget });
    expect(rerun.firstDivergence).toMatchObject({ step: firstDifferent, type: 'context.projected' });
    expect(rerun.divergentStepNumbers[0]).toBe(firstDifferent);
    await log.close();
    await direct.close();
  });

  it('a session recorded with an LLM policy and a veto replays identically in both modes', async () => {
    const log = await openMemoryLog();
    const summaries = new ScriptedModelClient(
      Array.from({ length: 10 }, (_, i) => (i === 1 ? new Error('summarizer down') : { outputText: JSON.stringify({ goal: 'echo things', completed: [`part ${i}`] }), items: [], usage: { inputTokens: 900 + i, outputTokens: 40, cachedInputTokens: 0 } })),
    );
    let vetoed = 0;
    const agent = replayAgent(log, scriptedTurns(30), {
      compactPolicy: new LlmCompactPolicy(summaries, 'summarizer', 6, { compactAbove: 12 }),
      hooks: {
        beforeCompact: () => {
          vetoed += 1;
          return vetoed !== 3; // the third automatic compaction is vetoed
        },
      },
    });
    const session = await agent.newSession();
    await session.run('long task');
    const events = await readAll(log, session.id);
    expect(events.filter((e) => e.type === 'compaction.skipped')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'compaction.failed')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'memory.compacted').length).toBeGreaterThan(1);
    // The summarizer's own usage is on each compaction, and a rerun gives it back from the recording.
    const compacted = events.filter((e) => e.type === 'memory.compacted');
    expect(compacted.every((e) => e.type === 'memory.compacted' && e.usage?.['outputTokens'] === 40)).toBe(true);
    expect(await replaySession(log, session.id)).toMatchObject({ identical: true });
    const rerun = await replaySession(log, session.id, { mode: 'rerun' });
    expect(rerun.firstDivergence).toBeUndefined();
    expect(rerun.identical).toBe(true);
    await log.close();
  });

  it('a changed policy: compared by content, saying where the compactions part', async () => {
    const log = await openMemoryLog();
    const agent = replayAgent(log, scriptedTurns(20));
    const session = await agent.newSession();
    await session.run('go');
    const { StructuredSummaryCompactPolicy } = await import('../../src/index.js');
    const result = await replaySession(log, session.id, { policy: new StructuredSummaryCompactPolicy({ maxItems: 4 }, undefined, { compactAbove: 6 }) });
    expect(result.identical).toBe(false);
    expect(result.notes.join('\n')).toMatch(/replaced by the policy's own|the replacement policy compacted/);
    expect(result.firstDivergence?.type).toBe('context.projected');
    // the same policy as recorded reproduces
    const same = await replaySession(log, session.id, {
      policy: new StructuredSummaryCompactPolicy({ maxItems: 8, pinnedPrefixItems: 1 }, undefined, { compactAbove: 14 }),
    });
    expect(same.divergentSteps).toBe(0);
    void digestOf;
    await log.close();
  });

  it('after an erasure both modes return a result that reports the steps whose projection held erased content, in erasedSteps', async () => {
    const log = await openMemoryLog();
    const id = await recordSession(log);
    const events = await readAll(log, id);
    const result = events.find((e): e is Extract<typeof e, { type: 'tool.result' }> => e.type === 'tool.result' && e.step !== undefined && e.step > 1)!;
    const input = events.find((e) => e.type === 'user.input' && e.seq > result.seq)!;
    await log.erase(id, { itemIds: [`${result.seq}:0`] }, { reason: 'secret in a tool output', by: 'ops' });
    await log.erase(id, { seqs: [input.seq] }, { reason: 'personal data' });
    const projected = await replaySession(log, id);
    expect(projected).toMatchObject({ mode: 'project', identical: true, divergentSteps: 0 });
    expect(projected.erasedSteps).toBeGreaterThan(0);
    const rerun = await replaySession(log, id, { mode: 'rerun' });
    expect(rerun.mode).toBe('rerun');
    expect(rerun.firstDivergence).toBeUndefined();
    expect(rerun).toMatchObject({ identical: true, divergentSteps: 0, steps: projected.steps });
    // a re-run also runs the compactions again: one given memory that held the erased content is reported as well
    expect(rerun.erasedStepNumbers).toEqual(expect.arrayContaining([...(projected.erasedStepNumbers ?? [])]));
    expect(rerun.erasedSteps).toBe(rerun.erasedStepNumbers?.length);
    // the first step after the erased result holds it: reported, and no step before it
    const firstErased = Math.min(...(rerun.erasedStepNumbers ?? []));
    expect(firstErased).toBeGreaterThanOrEqual(result.step ?? 0);
  });

  it('rejects bad arguments clearly', async () => {
    const log = await openMemoryLog();
    await expect(replaySession(log, 'missing')).rejects.toThrow('no such session');
    await log.append('s', [{ type: 'session.started' }]);
    await expect(replaySession(log, 's', { mode: 'bogus' as 'project' })).rejects.toThrow(/mode: must be/);
    expect(await replaySession(log, 's')).toMatchObject({ identical: true, steps: 0 });
    void final;
    await log.close();
  });
});

describe('replaySession rerun: what it cannot reproduce is a divergence, never a faked match', () => {
  it('a run continued after a crash (steps outside run.started) stops the re-run and is reported', async () => {
    const log = await openMemoryLog();
    const agent = replayAgent(log, scriptedTurns(2));
    const session = await agent.newSession();
    await session.run('go');
    // another process continues a run the recording never started here
    await session.session.record([{ type: 'step.started', runId: 'ghost', step: 9 }, { type: 'step.ended', runId: 'ghost', step: 9, toolCalls: 0 }]);
    const result = await replaySession(log, session.id, { mode: 'rerun' });
    expect(result.identical).toBe(false);
    expect(result.firstDivergence).toMatchObject({ type: 'step.started', fields: ['missing in the re-run'] });
    expect(result.notes.join('\n')).toContain('continues a run outside run.started');
    await log.close();
  });

  it('an edited recording (a tool output changed after the fact, re-hashed) is a divergence in rerun mode', async () => {
    const log = await openMemoryLog();
    const agent = replayAgent(log, [...scriptedTurns(3)]);
    const session = await agent.newSession();
    await session.run('go');
    const events = await readAll(log, session.id);
    // a copy of the session whose model answered differently at step 2 (a tampered recording)
    const copy = await openMemoryLog();
    const payloads = events.map(({ sessionId: _s, seq: _q, at: _a, v: _v, prevHash: _p, hash: _h, ...rest }) => rest);
    const responded = payloads.findIndex((p) => p.type === 'model.responded' && (p as { step?: number }).step === 2);
    (payloads[responded] as { items: unknown[] }).items = [{ type: 'message', role: 'assistant', content: 'changed my mind' }];
    await copy.append(session.id, payloads as never);
    const result = await replaySession(copy, session.id, { mode: 'rerun' });
    expect(result.identical).toBe(false);
    expect(result.firstDivergence?.step).toBe(2);
    await copy.close();
    await log.close();
  });
});

// An untrusted recording cannot hang a replay: recorded code limits are capped, and a signal cancels it.
const forgedRecording = async (forgedTimeoutMs: number, code = 'while(true){}'): Promise<{ log: SessionEventLog; id: string }> => {
  const log = await openMemoryLog();
  return { log, id: await forgeCodeActRecording(log, forgedTimeoutMs, code) };
};

describe('replay of an untrusted recording', () => {
  it('caps a forged code time limit at maxCodeTimeoutMs and reports the step as a divergence', async () => {
    const { log, id } = await forgedRecording(FOREVER);
    const result = await replaySession(log, id, { mode: 'rerun', maxCodeTimeoutMs: 200 });
    expect(result.identical).toBe(false);
    expect(result.divergentStepNumbers).toContain(1);
    expect(result.firstDivergence).toMatchObject({ type: 'tool.result', step: 1 });
    expect(result.notes.join('\n')).toMatch(/code limit of 2147483647 ms was capped at 200 ms/);
    expect(result.notes.join('\n')).toMatch(/step 1: the code ran into the replay's cap/);
  }, 10_000);

  it('a cap that is not reached changes nothing: the recording replays identically', async () => {
    const { log, id } = await forgedRecording(150);
    expect((await replaySession(log, id, { mode: 'rerun', maxCodeTimeoutMs: 200 })).identical).toBe(true);
    const quick = await forgedRecording(60_000, 'return 6 * 7');
    const result = await replaySession(quick.log, quick.id, { mode: 'rerun', maxCodeTimeoutMs: 200 });
    expect(result).toMatchObject({ identical: true });
    expect(result.notes.join('\n')).toMatch(/capped at 200 ms/);
  }, 10_000);

  it('a signal cancels a re-run while the code runs, and a project replay before it reads', async () => {
    const { log, id } = await forgedRecording(FOREVER);
    const started = Date.now();
    await expect(replaySession(log, id, { mode: 'rerun', maxCodeTimeoutMs: 60_000, signal: AbortSignal.timeout(300) })).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(Date.now() - started).toBeLessThan(8_000);
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(replaySession(log, id, { signal: controller.signal })).rejects.toThrow('stop');
  }, 10_000);

  it('maxCodeTimeoutMs must be a positive number', async () => {
    const { log, id } = await forgedRecording(150);
    await expect(replaySession(log, id, { mode: 'rerun', maxCodeTimeoutMs: 0 })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
  });
});
