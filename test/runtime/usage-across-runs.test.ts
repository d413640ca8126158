// The usage trigger and `calibrate` read the provider's reported usage from the session's fold, across runs: a
// chat-style session (one step per run) compacts by usage, a resumed session (in a new process: the log reopened from
// disk, through a checkpoint) decides and learns the same, and replay is identical in both modes.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  Agents,
  FactSummaryCompactPolicy,
  ScriptedModelClient,
  assistantMessage,
  openLevelLog,
  openMemoryLog,
  replaySession,
  type ModelResult,
  type SessionEvent,
  type SessionEventLog,
} from '../../src/index.js';
import { rebuildState } from '../../src/session/index.js';
import { checkSessionLaws } from '../../src/testing/index.js';

const readAll = async (log: SessionEventLog, id: string): Promise<SessionEvent[]> => {
  const out: SessionEvent[] = [];
  for await (const e of log.read(id)) out.push(e);
  return out;
};

/** A chat answer: no tool call, so each run() is one step; the provider reports `inputTokens`. */
const answer = (text: string, inputTokens: number): ModelResult => ({ outputText: text, items: [assistantMessage(text)], usage: { inputTokens, outputTokens: 3 } });

const compactionsOf = (events: readonly SessionEvent[]) => events.flatMap((e) => (e.type === 'memory.compacted' ? [e] : []));
const stepOfSeq = (events: readonly SessionEvent[], seq: number): number | undefined => {
  let step: number | undefined;
  for (const e of events) {
    if (e.seq > seq) break;
    if (e.type === 'step.started') step = e.step;
  }
  return step;
};

const expectReplayIdentical = async (log: SessionEventLog, id: string): Promise<void> => {
  for (const mode of ['project', 'rerun'] as const) {
    const replayed = await replaySession(log, id, { mode });
    expect({ mode, identical: replayed.identical, at: replayed.firstDivergence }).toEqual({ mode, identical: true, at: undefined });
  }
};

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe('the usage trigger across runs', () => {
  it('a chat-style session (one step per run) reporting 5,000 input tokens against compactAboveTokens 1,000 compacts by usage at the next run, once', async () => {
    const log = await openMemoryLog();
    let n = 0;
    const agent = Agents.react({
      modelClient: new ScriptedModelClient(Array.from({ length: 5 }, (_, k) => answer(`answer ${k}`, 5_000))),
      model: 'm',
      log,
      ids: () => `id-${++n}`,
      compactPolicy: new FactSummaryCompactPolicy({ maxItems: 2, compactAbove: 1_000, compactAboveTokens: 1_000 }),
    });
    const session = await agent.newSession();
    for (let k = 0; k < 5; k++) expect((await session.run(`question ${k}`)).steps).toBe(1);
    const events = await readAll(log, session.id);
    const compactions = compactionsOf(events);
    // Memory stays far below 1,000 tokens: only the reported usage can trigger, at the top of the second run's step.
    expect(compactions.length).toBeGreaterThan(0);
    expect(compactions[0]).toMatchObject({ trigger: 'auto', reason: { kind: 'usage', value: 5_000, threshold: 1_000 }, step: 2 });
    expect((compactions[0]!.tokens as { before: number }).before).toBeLessThan(1_000);
    // No loop: the provider keeps reporting 5,000, and the policy waits for memory to grow.
    expect(compactions).toHaveLength(1);
    expect(checkSessionLaws(events)).toEqual([]);
    await expectReplayIdentical(log, session.id);
  });

  it('a session resumed in a new process (LevelDB reopened, through a checkpoint) compacts at the same step as one run straight through', async () => {
    const script = () => Array.from({ length: 4 }, (_, k) => answer(`answer ${k}`, 5_000));
    const make = (log: SessionEventLog, modelClient: ScriptedModelClient) => {
      let n = 0;
      return Agents.react({ modelClient, model: 'm', log, ids: () => `${modelClient.remaining}-${++n}`, checkpointEvery: 3, compactPolicy: new FactSummaryCompactPolicy({ maxItems: 2, compactAbove: 1_000, compactAboveTokens: 1_000 }) });
    };
    // Straight through.
    const straightLog = await openMemoryLog();
    const straight = await make(straightLog, new ScriptedModelClient(script())).newSession({ id: 'chat' });
    for (let k = 0; k < 3; k++) await straight.run(`question ${k}`);
    const straightEvents = await readAll(straightLog, 'chat');

    // One run, then the process ends; the next process opens the ledger from disk and resumes.
    const dir = await mkdtemp(join(tmpdir(), 'usage-across-runs-'));
    dirs.push(dir);
    const script2 = script();
    let log = await openLevelLog(dir);
    const first = await make(log, new ScriptedModelClient(script2.slice(0, 1))).newSession({ id: 'chat' });
    await first.run('question 0');
    await log.close();
    log = await openLevelLog(dir);
    const rebuilt = await rebuildState(log, 'chat');
    expect(rebuilt.from).not.toBe('full-fold');
    expect(rebuilt.run.usage?.lastInputTokens).toBe(5_000);
    const resumed = await make(log, new ScriptedModelClient(script2.slice(1))).resumeSession('chat');
    await resumed.run('question 1');
    await resumed.run('question 2');
    const resumedEvents = await readAll(log, 'chat');
    const where = (events: readonly SessionEvent[]) => compactionsOf(events).map((c) => ({ step: stepOfSeq(events, c.seq), reason: c.reason }));
    expect(where(resumedEvents)).toEqual([{ step: 2, reason: { kind: 'usage', value: 5_000, threshold: 1_000 } }]);
    expect(where(resumedEvents)).toEqual(where(straightEvents));
    expect(checkSessionLaws(resumedEvents)).toEqual([]);
    await expectReplayIdentical(log, 'chat');
    await log.close();
  });

  it('a compaction, a restore, a clear and a rewind each drop the last input tokens from the fold; a new answer sets them again', async () => {
    const log = await openMemoryLog();
    const agent = Agents.react({ modelClient: new ScriptedModelClient([answer('a', 700), answer('b', 800), answer('c', 900)]), model: 'm', log });
    const session = await agent.newSession();
    await session.run('one');
    expect(session.session.state().run.usage?.lastInputTokens).toBe(700);
    await session.session.memory.clear();
    expect(session.session.state().run.usage?.lastInputTokens).toBeUndefined();
    await session.run('two');
    expect(session.session.state().run.usage?.lastInputTokens).toBe(800);
    await session.session.compact(new FactSummaryCompactPolicy({ maxItems: 1 }));
    expect(session.session.state().run.usage?.lastInputTokens).toBeUndefined();
    await session.run('three');
    expect(session.session.state().run.usage?.lastInputTokens).toBe(900);
    await session.rewind({ toSeq: 3 });
    expect(session.session.state().run.usage?.lastInputTokens).toBeUndefined();
    await session.session.memory.restore({ items: [assistantMessage('restored')] });
    expect(session.session.state().run.usage).toMatchObject({ steps: [1, 2, 3] });
    expect(session.session.state().run.usage?.lastInputTokens).toBeUndefined();
  });
});

describe('calibrate across runs', () => {
  const calibrated = (log: SessionEventLog, answers: ModelResult[], id?: () => string) =>
    Agents.react({ modelClient: new ScriptedModelClient(answers), model: 'm', systemPrompt: 'be brief', log, contextBudget: { maxTokens: 4_000, calibrate: true }, ...(id ? { ids: id } : {}), checkpointEvery: 4 });

  it('learns its margin from the session\'s recorded drift, across runs and across a resume, and replays identically', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'calibrate-across-runs-'));
    dirs.push(dir);
    const inputs = [900, 400, 650];
    let log = await openLevelLog(dir);
    const first = await calibrated(log, [answer('a', inputs[0]!)]).newSession({ id: 'cal' });
    await first.run('one');
    const second = await calibrated(log, [answer('b', inputs[1]!)]).resumeSession('cal');
    await second.run('two');
    await log.close();
    log = await openLevelLog(dir);
    const third = await calibrated(log, [answer('c', inputs[2]!)]).resumeSession('cal');
    await third.run('three');
    const events = await readAll(log, 'cal');
    const projected = events.flatMap((e) => (e.type === 'context.projected' ? [e] : []));
    expect(projected).toHaveLength(3);
    const drifts = projected.map((e, k) => inputs[k]! - ((e.report.projectedTokens ?? 0) + (e.report.overheadTokens ?? 0)));
    // Each run's only step learns from the steps of the runs before it (it learned nothing when the margin was per run).
    expect(projected[0]!.request?.marginTokens).toBeUndefined();
    expect(projected[1]!.request).toMatchObject({ marginTokens: Math.max(0, drifts[0]!), calibration: { steps: [1], drifts: [drifts[0]] } });
    expect(projected[2]!.request).toMatchObject({ marginTokens: Math.max(0, drifts[0]!, drifts[1]!), calibration: { steps: [1, 2], drifts: drifts.slice(0, 2) } });
    expect(drifts[0]).toBeGreaterThan(0);
    expect(checkSessionLaws(events)).toEqual([]);
    await expectReplayIdentical(log, 'cal');
    await log.close();
  });

  it('keeps the latest five drifts of the session, across runs', async () => {
    const log = await openMemoryLog();
    const inputs = [3_000, 100, 200, 300, 400, 500, 600];
    const agent = calibrated(log, inputs.map((input, k) => answer(`a${k}`, input)));
    const session = await agent.newSession();
    for (let k = 0; k < inputs.length; k++) await session.run(`q${k}`);
    const projected = (await readAll(log, session.id)).flatMap((e) => (e.type === 'context.projected' ? [e] : []));
    const last = projected.at(-1)!.request!;
    expect(last.calibration!.steps).toEqual([2, 3, 4, 5, 6]);
    // The large drift of step 1 has left the window.
    expect(last.marginTokens).toBeLessThan(3_000 - 100);
    await expectReplayIdentical(log, session.id);
  });
});
