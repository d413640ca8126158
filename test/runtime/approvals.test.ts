// Approval interrupts: needsApproval, approval.requested, interrupted runs, approve / reject, resume, misuse, compaction.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  Agents,
  ScriptedModelClient,
  assistantMessage,
  defineTool,
  emptyCompactLists,
  functionCall,
  isApprovalConflictError,
  isApprovalNotPendingError,
  isApprovalsPendingError,
  auditSession,
  openMemoryLog,
  replaySession,
  type CompactPolicy,
  type MemoryItem,
  type ModelRequest,
  type ModelResult,
  type SessionEvent,
  type SessionEventLog,
} from '../../src/index.js';
import { checkSessionLaws } from '../../src/testing/runtime-laws.js';

const readAll = async (log: SessionEventLog, id: string): Promise<SessionEvent[]> => {
  const out: SessionEvent[] = [];
  for await (const e of log.read(id)) out.push(e);
  return out;
};

const final = (text: string): ModelResult => ({ outputText: text, items: [assistantMessage(text)] });
const calls = (...items: MemoryItem[]): ModelResult => ({ items });

const executed: string[] = [];
const read = defineTool({
  name: 'read',
  description: 'Read a file',
  parameters: z.object({ path: z.string() }),
  execute: ({ path }) => {
    executed.push(`read ${path}`);
    return `contents of ${path}`;
  },
});
const deploy = defineTool({
  name: 'deploy',
  description: 'Deploy',
  parameters: z.object({ target: z.string() }),
  needsApproval: true,
  execute: ({ target }) => {
    executed.push(`deploy ${target}`);
    return `deployed ${target}`;
  },
});
const remove = defineTool({
  name: 'remove',
  description: 'Remove a path',
  parameters: z.object({ path: z.string() }),
  needsApproval: ({ path }) => path.startsWith('/'),
  execute: ({ path }) => {
    executed.push(`remove ${path}`);
    return `removed ${path}`;
  },
});

const threeCalls = (): ModelResult =>
  calls(functionCall('c1', 'read', { path: 'a' }), functionCall('c2', 'deploy', { target: 'prod' }), functionCall('c3', 'read', { path: 'b' }));

const agentOn = (log: SessionEventLog, answers: ModelResult[], extra: Record<string, unknown> = {}) => {
  const model = new ScriptedModelClient(answers);
  let n = 0;
  const agent = Agents.react({ modelClient: model, model: 'm', log, tools: [read, deploy, remove], ids: () => `id-${++n}`, ...extra });
  return { agent, model };
};

const outputsOf = (request: ModelRequest): Record<string, unknown> =>
  Object.fromEntries(request.items.filter((i) => i.type === 'function_call_output').map((i) => [(i as { call_id: string }).call_id, (i as { output: unknown }).output]));

describe('approval interrupts', () => {
  it('interrupts after running the calls that need no approval, in order; approve + run() executes the call and only then asks the model', async () => {
    executed.length = 0;
    const log = await openMemoryLog();
    const { agent, model } = agentOn(log, [threeCalls(), final('done')]);
    const session = await agent.newSession();
    const first = await session.run('ship it');
    expect(first.status).toBe('interrupted');
    expect(first.pendingApprovals).toEqual([{ callId: 'c2', name: 'deploy', arguments: '{"target":"prod"}', step: 1 }]);
    expect(executed).toEqual(['read a', 'read b']);
    expect(session.pendingApprovals()).toEqual(first.pendingApprovals);
    expect(model.requests).toHaveLength(1);
    let events = await readAll(log, session.id);
    const types = events.map((e) => e.type);
    expect(types.slice(types.indexOf('model.responded'))).toEqual(['model.responded', 'approval.requested', 'tool.result', 'tool.result', 'step.ended']);

    await session.approve('c2', { by: 'ana', reason: 'reviewed' });
    expect(session.pendingApprovals()).toEqual([]);
    const second = await session.run();
    expect(second).toMatchObject({ status: 'finished', pendingApprovals: [], outputText: 'done', steps: 1 });
    expect(executed).toEqual(['read a', 'read b', 'deploy prod']);
    expect(outputsOf(model.requests[1]!)).toEqual({ c1: 'contents of a', c2: 'deployed prod', c3: 'contents of b' });
    events = await readAll(log, session.id);
    const decision = events.find((e) => e.type === 'approval.recorded');
    expect(decision).toMatchObject({ type: 'approval.recorded', callId: 'c2', approved: true, by: 'ana', reason: 'reviewed', v: 2 });
    expect(checkSessionLaws(events)).toEqual([]);
    for (const mode of ['project', 'rerun'] as const) {
      const replayed = await replaySession(log, session.id, { mode });
      expect(replayed.identical, `${mode}: ${JSON.stringify(replayed.firstDivergence)} ${replayed.notes?.join('; ')}`).toBe(true);
    }
  });

  it('a rejected call gets `Rejected: <reason>` without running; a gate function asks only for the calls it names', async () => {
    executed.length = 0;
    const log = await openMemoryLog();
    const { agent, model } = agentOn(log, [
      calls(functionCall('r1', 'remove', { path: 'tmp' }), functionCall('r2', 'remove', { path: '/etc' }), functionCall('d1', 'deploy', { target: 'x' })),
      final('ok'),
    ]);
    const session = await agent.newSession();
    const result = await session.run('clean');
    expect(result.pendingApprovals.map((p) => p.callId)).toEqual(['r2', 'd1']);
    expect(executed).toEqual(['remove tmp']);
    await session.reject('r2', { by: 'ops', reason: 'never touch /etc' });
    await expect(session.run()).rejects.toSatisfy(isApprovalsPendingError);
    expect((await auditSession(log, session.id)).approvals.map((a) => [a.callId, a.status, a.by ?? null, a.reason ?? null])).toEqual([
      ['r2', 'rejected', 'ops', 'never touch /etc'],
      ['d1', 'pending', null, null],
    ]);
    await session.reject('d1');
    await session.run();
    expect(executed).toEqual(['remove tmp']);
    expect(outputsOf(model.requests[1]!)).toEqual({ r1: 'removed tmp', r2: 'Rejected: never touch /etc', d1: 'Rejected: no reason given' });
    const events = await readAll(log, session.id);
    expect(events.filter((e) => e.type === 'tool.result' && e.callId === 'r2')).toMatchObject([{ isError: true, output: 'Rejected: never touch /etc' }]);
    expect(checkSessionLaws(events)).toEqual([]);
    for (const mode of ['project', 'rerun'] as const) expect((await replaySession(log, session.id, { mode })).identical).toBe(true);
  });

  it('misuse gets a named error and records nothing: unknown call, decided call, run(input) while pending, run() while undecided', async () => {
    const log = await openMemoryLog();
    const { agent } = agentOn(log, [threeCalls(), final('done')]);
    const session = await agent.newSession();
    await session.run('go');
    const head = await log.head(session.id);
    await expect(session.approve('nope')).rejects.toSatisfy((e: unknown) => isApprovalNotPendingError(e) && e.why === 'unknown');
    await expect(session.approve('c1')).rejects.toSatisfy((e: unknown) => isApprovalNotPendingError(e) && /no call "c1"/.test(e.message));
    await expect(session.run('something else')).rejects.toSatisfy(isApprovalsPendingError);
    await expect(session.run()).rejects.toSatisfy((e: unknown) => isApprovalsPendingError(e) && e.callIds.join() === 'c2');
    await expect(session.approve('c2', { who: 'x' } as never)).rejects.toThrow(/who/);
    expect(await log.head(session.id)).toBe(head);
    await session.reject('c2', { reason: 'no' });
    const decided = await log.head(session.id);
    await expect(session.approve('c2')).rejects.toSatisfy((e: unknown) => isApprovalNotPendingError(e) && e.why === 'decided' && /already rejected/.test(e.message));
    expect(await log.head(session.id)).toBe(decided);
    expect((await session.run()).status).toBe('finished');
    await expect(session.approve('c2')).rejects.toSatisfy(isApprovalNotPendingError);
  });

  it('two writers deciding the same call: exactly one decision is recorded, the other gets ApprovalConflictError', async () => {
    const log = await openMemoryLog();
    const { agent } = agentOn(log, [threeCalls(), final('done')]);
    const session = await agent.newSession();
    await session.run('go');
    const a = await agent.resumeSession(session.id);
    const b = await agent.resumeSession(session.id);
    const outcomes = await Promise.allSettled([a.approve('c2', { by: 'a' }), b.reject('c2', { by: 'b' })]);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    const failure = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
    expect(isApprovalConflictError(failure.reason)).toBe(true);
    const decisions = (await readAll(log, session.id)).filter((e) => e.type === 'approval.recorded');
    expect(decisions).toHaveLength(1);
    const fresh = await agent.resumeSession(session.id);
    expect(fresh.pendingApprovals()).toEqual([]);
    expect((await fresh.run()).status).toBe('finished');
    expect(checkSessionLaws(await readAll(log, session.id))).toEqual([]);
  });

  it('approve and reject of one call on the SAME session object at once: exactly one wins, the other is refused and writes nothing', async () => {
    for (const order of ['approve first', 'reject first'] as const) {
      const log = await openMemoryLog();
      const { agent } = agentOn(log, [threeCalls(), final('done')]);
      const session = await agent.newSession();
      await session.run('go');
      const head = await log.head(session.id);
      const approve = () => session.approve('c2', { by: 'alice' });
      const reject = () => session.reject('c2', { by: 'bob', reason: 'no' });
      const outcomes = await Promise.allSettled(order === 'approve first' ? [approve(), reject()] : [reject(), approve()]);
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected']);
      const refusal = (outcomes[1] as PromiseRejectedResult).reason as unknown;
      expect(isApprovalNotPendingError(refusal) && refusal.why).toBe('decided');
      expect((refusal as Error).message).toMatch(order === 'approve first' ? /already approved by alice/ : /already rejected by bob/);
      const decisions = (await readAll(log, session.id)).filter((e) => e.type === 'approval.recorded');
      expect(decisions).toHaveLength(1);
      expect(decisions[0]).toMatchObject(order === 'approve first' ? { approved: true, by: 'alice', callId: 'c2' } : { approved: false, by: 'bob', callId: 'c2' });
      expect(await log.head(session.id)).toBe(head + 1);
      // Three at once: still one decision.
      const again = await Promise.allSettled([session.approve('c2'), session.reject('c2'), session.approve('c2')]);
      expect(again.every((o) => o.status === 'rejected' && isApprovalNotPendingError(o.reason))).toBe(true);
      expect(await log.head(session.id)).toBe(head + 1);
      expect((await session.run()).status).toBe('finished');
      expect(checkSessionLaws(await readAll(log, session.id))).toEqual([]);
    }
  });

  it('a refused decision does not block the next one on the same session object', async () => {
    const log = await openMemoryLog();
    const { agent } = agentOn(log, [threeCalls(), final('done')]);
    const session = await agent.newSession();
    await session.run('go');
    const outcomes = await Promise.allSettled([session.approve('nope'), session.approve('c2', { who: 'x' } as never), session.approve('c2', { by: 'ana' })]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'fulfilled']);
    expect(session.pendingApprovals()).toEqual([]);
  });

  it('a resumed session sees the pending calls from the fold, through a checkpoint, and finishes the run', async () => {
    executed.length = 0;
    const log = await openMemoryLog();
    const { agent } = agentOn(log, [threeCalls(), final('done')], { checkpointEvery: 3 });
    const session = await agent.newSession();
    await session.run('go');
    await session.session.save();
    const other = agentOn(log, [final('after resume')], { checkpointEvery: 3 });
    const resumed = await other.agent.resumeSession(session.id);
    expect(resumed.session.opened.from).not.toBe('full-fold');
    expect(resumed.pendingApprovals().map((p) => p.callId)).toEqual(['c2']);
    expect(resumed.interruptedRunId).toBe(session.interruptedRunId);
    await resumed.approve('c2');
    expect(await resumed.run()).toMatchObject({ status: 'finished', outputText: 'after resume' });
    expect(executed).toEqual(['read a', 'read b', 'deploy prod']);
    expect(checkSessionLaws(await readAll(log, session.id))).toEqual([]);
  });

  it('a gate answering a truthy non-boolean asks; with parallelToolCalls the interrupted log is the same as one at a time', async () => {
    const logs: unknown[] = [];
    for (const parallelToolCalls of [1, 3]) {
      const log = await openMemoryLog();
      const truthy = defineTool({ name: 'truthy', description: 't', parameters: z.object({}), needsApproval: (() => 'yes') as never, execute: () => 'ran' });
      const model = new ScriptedModelClient([
        calls(functionCall('a', 'read', { path: 'x' }), functionCall('t', 'truthy', {}), functionCall('b', 'read', { path: 'y' })),
        final('ok'),
      ]);
      let n = 0;
      const agent = Agents.react({ modelClient: model, model: 'm', log, tools: [read, truthy], parallelToolCalls, ids: () => `id-${++n}` });
      const session = await agent.newSession();
      expect((await session.run('go')).pendingApprovals.map((p) => p.callId)).toEqual(['t']);
      await session.approve('t');
      await session.run();
      logs.push((await readAll(log, session.id)).map(({ at: _a, hash: _h, prevHash: _p, contentDigest: _c, contentSalt: _s, ...e }) => ({ ...e, durationMs: 0 })));
    }
    expect(logs[1]).toEqual(logs[0]);
  });

  it('an approved call that was running when its process died is answered on resume, never run twice', async () => {
    const log = await openMemoryLog();
    let deploys = 0;
    const hangingDeploy = defineTool({
      name: 'deploy',
      description: 'Deploy',
      parameters: z.object({ target: z.string() }),
      needsApproval: true,
      execute: () => {
        deploys += 1;
        return new Promise(() => undefined); // the process "dies" while it runs
      },
    });
    const model = new ScriptedModelClient([calls(functionCall('d', 'deploy', { target: 'prod' })), final('after the crash')]);
    let n = 0;
    const agent = Agents.react({ modelClient: model, model: 'm', log, tools: [hangingDeploy], ids: () => `id-${++n}` });
    const first = await agent.newSession();
    await first.run('deploy');
    await first.approve('d', { by: 'ana' });
    const dying = new AbortController();
    const stuck = first.run(undefined, { signal: dying.signal }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 20));
    expect(deploys).toBe(1);
    // Another process opens the session from the log: the call started and has no result.
    const second = await agent.resumeSession(first.id);
    expect(second.session.state().run.openRun?.approvals).toMatchObject([{ callId: 'd', started: true, decision: { approved: true, by: 'ana' } }]);
    expect(await second.run()).toMatchObject({ status: 'finished', outputText: 'after the crash' });
    expect(deploys).toBe(1);
    const result = (await readAll(log, first.id)).find((e) => e.type === 'tool.result' && e.callId === 'd');
    expect(result).toMatchObject({ isError: true, output: 'Error: interrupted: the run ended while this approved call ran; it was not run again' });
    expect(checkSessionLaws(await readAll(log, first.id))).toEqual([]);
    dying.abort(new Error('the old process is gone'));
    await stuck;
  });

  it('a needsApproval that is neither a boolean nor a function is refused when the tool or the agent is defined', () => {
    const bad = { name: 'x', description: 'x', parameters: z.object({}), execute: () => 'x', needsApproval: 'yes' } as never;
    expect(() => defineTool(bad)).toThrow(/needsApproval/);
    expect(() => Agents.react({ modelClient: new ScriptedModelClient([]), model: 'm', tools: [bad] })).toThrow(/needsApproval/);
  });

  it('a throwing gate gives the call an error result and does not interrupt', async () => {
    const log = await openMemoryLog();
    const gated = defineTool({
      name: 'gated',
      description: 'gated',
      parameters: z.object({}),
      needsApproval: () => {
        throw new Error('gate broke');
      },
      execute: () => 'ran',
    });
    const model = new ScriptedModelClient([calls(functionCall('g1', 'gated', {})), final('ok')]);
    const agent = Agents.react({ modelClient: model, model: 'm', log, tools: [gated] });
    const session = await agent.newSession();
    expect((await session.run('go')).status).toBe('finished');
    expect(outputsOf(model.requests[1]!)).toEqual({ g1: 'Error: needsApproval of gated failed: gate broke' });
  });

  it('compaction while interrupted never summarises the pending call away (a policy that would cut there keeps it)', async () => {
    const log = await openMemoryLog();
    const { agent, model } = agentOn(log, [threeCalls(), final('done')]);
    const session = await agent.newSession();
    await session.run('go');
    // Keeps only the newest item: without protection it would drop c2's call and leave c2's result an orphan.
    const cutAtTheEnd: CompactPolicy & { describe(): { name: string; settings: Record<string, unknown> } } = {
      describe: () => ({ name: 'KeepNewest', settings: {} }),
      compact: (snapshot) => ({ ...emptyCompactLists(), summary: 'summary', memory: { items: snapshot.items.slice(-1), summary: 'summary' } }),
    };
    const seen: number[] = [];
    await session.session.compact({ ...cutAtTheEnd, compact: (snap) => (seen.push(snap.items.length), cutAtTheEnd.compact(snap)) });
    const items = session.memory.getItems();
    expect(items.some((i) => i.type === 'function_call' && (i as { call_id: string }).call_id === 'c2')).toBe(true);
    // The policy saw memory up to the pending call only (user input and c1's call).
    expect(seen).toEqual([2]);
    await session.approve('c2');
    await session.run();
    const sent = model.requests[1]!.items;
    const c2Call = sent.findIndex((i) => i.type === 'function_call' && (i as { call_id: string }).call_id === 'c2');
    const c2Out = sent.findIndex((i) => i.type === 'function_call_output' && (i as { call_id: string }).call_id === 'c2');
    expect(c2Call).toBeGreaterThanOrEqual(0);
    expect(c2Out).toBeGreaterThan(c2Call);
    expect(checkSessionLaws(await readAll(log, session.id))).toEqual([]);
  });
});
