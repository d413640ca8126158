// AgentSession compaction: manual compact (errors propagate and are recorded), every path of autoCompactIfNecessary, and
// the facts a compaction clears (only those its snapshot held).
import { describe, expect, it } from 'vitest';
import { StructuredSummaryCompactPolicy, type CompactPolicy, type CompactResult } from '../../src/compact/index.js';
import { InvalidOptionsError } from '../../src/base/errors.js';
import { EVENT_VERSIONS, decodeEvent, emptyCompactLists, type MemorySnapshot, type SessionEvent, type SessionEventOf } from '../../src/events/index.js';
import { assistantMessage, userMessage } from '../../src/items/index.js';
import { openMemoryLog, type SessionEventLog } from '../../src/log/index.js';
import { foldMemory } from '../../src/memory/index.js';
import { openSession, type AgentSession, type CompactHookContext, type CompactedHookContext, type SessionHooks } from '../../src/session/index.js';

const readAll = async (log: SessionEventLog, id: string): Promise<SessionEvent[]> => {
  const out: SessionEvent[] = [];
  for await (const e of log.read(id)) out.push(e);
  return out;
};

const keepLast = new StructuredSummaryCompactPolicy({ maxItems: 2 });

/** A policy whose pieces are spies; by default it always wants to compact and keeps the last 2 items. */
const spyPolicy = (overrides: Partial<CompactPolicy> = {}): CompactPolicy & { calls: { shouldCompact: number; compact: number } } => {
  const calls = { shouldCompact: 0, compact: 0 };
  return {
    calls,
    shouldCompact: (snapshot: MemorySnapshot) => {
      calls.shouldCompact += 1;
      return overrides.shouldCompact ? overrides.shouldCompact(snapshot) : true;
    },
    compact: (snapshot: MemorySnapshot) => {
      calls.compact += 1;
      return overrides.compact ? overrides.compact(snapshot) : keepLast.compact(snapshot);
    },
    describe: () => ({ name: 'SpyPolicy', settings: { keep: 2 } }),
  };
};

interface Harness {
  readonly log: SessionEventLog;
  readonly session: AgentSession;
  readonly events: () => Promise<SessionEvent[]>;
  /** Events appended since the harness was set up (after the seeded items). */
  readonly newEvents: () => Promise<SessionEvent[]>;
}

/** A session with four items and a summary already in memory. */
const harness = async (hooks?: SessionHooks): Promise<Harness> => {
  const log = await openMemoryLog();
  const session = await openSession(log, { id: 's', ...(hooks ? { hooks } : {}) });
  await session.memory.addUserInput('one');
  await session.memory.addOutputItems([assistantMessage('two')]);
  await session.memory.addUserInput('three');
  await session.memory.addOutputItems([assistantMessage('four')]);
  await session.memory.setSummary('earlier');
  const seeded = session.memory.headSeq();
  const events = () => readAll(log, 's');
  return { log, session, events, newEvents: async () => (await events()).filter((e) => e.seq > seeded) };
};

describe('AgentSession.compact (manual)', () => {
  it('compacts without asking shouldCompact and records memory.compacted with trigger manual', async () => {
    const { session, newEvents, events, log } = await harness();
    const policy = spyPolicy({ shouldCompact: () => false });
    const result = await session.compact(policy, { step: 7 });
    expect(policy.calls).toEqual({ shouldCompact: 0, compact: 1 });
    expect(session.memory.snapshot().items).toEqual([userMessage('three'), assistantMessage('four')]);
    expect(session.memory.getSummary()).toBe(result.summary);
    const [event] = await newEvents();
    expect(event).toMatchObject({
      type: 'memory.compacted',
      trigger: 'manual',
      step: 7,
      policy: { name: 'SpyPolicy', settings: { keep: 2 } },
      keptIds: ['4:0', '5:0'],
      droppedIds: ['2:0', '3:0'],
      layout: [{ keep: '4:0' }, { keep: '5:0' }],
      summary: result.summary,
    });
    expect(foldMemory(await events())).toEqual(session.memory.state());
    await log.close();
  });

  it('a throwing policy: the error propagates and compaction.failed is recorded; memory is as it was', async () => {
    const { session, newEvents, log } = await harness();
    const before = session.memory.state();
    const boom = new Error('policy exploded');
    await expect(session.compact(spyPolicy({ compact: () => { throw boom; } }))).rejects.toBe(boom);
    await expect(session.compact(spyPolicy({ compact: () => Promise.reject(new Error('async too')) }))).rejects.toThrow('async too');
    expect(session.memory.state()).toBe(before);
    expect(await newEvents()).toMatchObject([
      { type: 'compaction.failed', trigger: 'manual', stage: 'compact', error: 'policy exploded', policy: { name: 'SpyPolicy' } },
      { type: 'compaction.failed', trigger: 'manual', stage: 'compact', error: 'async too' },
    ]);
    await log.close();
  });

  it('a describe() that throws: thrown, and recorded as compaction.failed', async () => {
    const { session, newEvents, log } = await harness();
    const before = session.memory.state();
    const policy: CompactPolicy = { compact: (s) => keepLast.compact(s), describe: () => { throw new Error('no name'); } };
    await expect(session.compact(policy, { step: 1 })).rejects.toThrow('no name');
    expect(await newEvents()).toMatchObject([{ type: 'compaction.failed', trigger: 'manual', stage: 'compact', step: 1, policy: { name: 'CompactPolicy' }, error: 'no name' }]);
    expect(session.memory.state()).toBe(before);
    await log.close();
  });

  it('refuses a missing policy', async () => {
    const { session, log } = await harness();
    await expect(session.compact(null as unknown as CompactPolicy)).rejects.toThrow(InvalidOptionsError);
    await log.close();
  });

  it('runs onCompact after a manual compaction, and not beforeCompact', async () => {
    const seen: string[] = [];
    let after: CompactedHookContext | undefined;
    const { session, log } = await harness({
      beforeCompact: () => {
        seen.push('before');
      },
      onCompact: (context) => {
        seen.push('on');
        after = context;
      },
    });
    const result = await session.compact(keepLast);
    expect(seen).toEqual(['on']);
    expect(after).toMatchObject({ sessionId: 's', trigger: 'manual', policy: keepLast.describe(), result });
    expect(after?.event.type).toBe('memory.compacted');
    expect(after?.event.seq).toBe(session.memory.headSeq());
    expect(after?.snapshot.items).toHaveLength(4);
    await log.close();
  });

  it('an onCompact that throws is recorded as hook.failed; the manual compaction stands and returns', async () => {
    const { session, newEvents, log } = await harness({ onCompact: () => { throw new Error('observer broke'); } });
    const result = await session.compact(keepLast);
    expect(result.memory?.items).toHaveLength(2);
    expect((await newEvents()).map((e) => e.type)).toEqual(['memory.compacted', 'hook.failed']);
    expect((await newEvents())[1]).toMatchObject({ hook: 'onCompact', error: 'observer broke' });
    expect(session.memory.snapshot().items).toHaveLength(2);
    await log.close();
  });

  it('getLastCompactResult is the result of the last manual compaction, without its memory', async () => {
    const { session, log } = await harness();
    expect(session.getLastCompactResult()).toBeNull();
    const result = await session.compact(keepLast);
    const { memory: _memory, ...record } = result;
    expect(session.getLastCompactResult()).toEqual(record);
    expect(session.getLastCompactResult()).not.toHaveProperty('memory');
    await log.close();
  });
});

describe('AgentSession.autoCompactIfNecessary', () => {
  it('no policy: null and nothing recorded', async () => {
    const { session, newEvents, log } = await harness();
    expect(await session.autoCompactIfNecessary(null)).toBeNull();
    expect(await session.autoCompactIfNecessary(undefined, { step: 1 })).toBeNull();
    expect(await newEvents()).toEqual([]);
    await log.close();
  });

  it('a policy without shouldCompact: never automatic, null and nothing recorded', async () => {
    const { session, newEvents, log } = await harness();
    let compacted = 0;
    const manualOnly: CompactPolicy = {
      compact: (s) => {
        compacted += 1;
        return keepLast.compact(s);
      },
    };
    expect(await session.autoCompactIfNecessary(manualOnly, { step: 1 })).toBeNull();
    expect(compacted).toBe(0);
    expect(await newEvents()).toEqual([]);
    await log.close();
  });

  it('shouldCompact false (sync or async): null, no compact call, nothing recorded', async () => {
    const hooks = { beforeCompact: () => { throw new Error('must not run'); } };
    const { session, newEvents, log } = await harness(hooks);
    const sync = spyPolicy({ shouldCompact: () => false });
    const asyncNo = spyPolicy({ shouldCompact: async () => false });
    expect(await session.autoCompactIfNecessary(sync, { step: 1 })).toBeNull();
    expect(await session.autoCompactIfNecessary(asyncNo, { step: 2 })).toBeNull();
    expect(sync.calls).toEqual({ shouldCompact: 1, compact: 0 });
    expect(asyncNo.calls).toEqual({ shouldCompact: 1, compact: 0 });
    expect(await newEvents()).toEqual([]);
    // the real policy under its threshold
    expect(await session.autoCompactIfNecessary(new StructuredSummaryCompactPolicy({ maxItems: 4 }))).toBeNull();
    expect(await newEvents()).toEqual([]);
    await log.close();
  });

  it('shouldCompact throws: compaction.failed at stage shouldCompact, no throw, memory as it was', async () => {
    const { session, newEvents, log } = await harness();
    const before = session.memory.state();
    const policy = spyPolicy({ shouldCompact: () => { throw new Error('cannot decide'); } });
    await expect(session.autoCompactIfNecessary(policy, { step: 4 })).resolves.toBeNull();
    const asyncPolicy = spyPolicy({ shouldCompact: () => Promise.reject(new Error('cannot decide later')) });
    await expect(session.autoCompactIfNecessary(asyncPolicy)).resolves.toBeNull();
    expect(policy.calls.compact + asyncPolicy.calls.compact).toBe(0);
    expect(session.memory.state()).toBe(before);
    const events = await newEvents();
    expect(events).toMatchObject([
      { type: 'compaction.failed', trigger: 'auto', stage: 'shouldCompact', step: 4, error: 'cannot decide', policy: { name: 'SpyPolicy' } },
      { type: 'compaction.failed', trigger: 'auto', stage: 'shouldCompact', error: 'cannot decide later' },
    ]);
    expect(events[1]).not.toHaveProperty('step');
    await log.close();
  });

  it('beforeCompact returns false: vetoed, no compact call, recorded as compaction.skipped (so a re-run skips it too)', async () => {
    let context: CompactHookContext | undefined;
    const { session, newEvents, log } = await harness({
      beforeCompact: (c) => {
        context = c;
        return false;
      },
    });
    const policy = spyPolicy();
    expect(await session.autoCompactIfNecessary(policy, { step: 9 })).toBeNull();
    expect(policy.calls).toEqual({ shouldCompact: 1, compact: 0 });
    const recorded = await newEvents();
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({ type: 'compaction.skipped', trigger: 'auto', step: 9, reason: 'vetoed', policy: { name: 'SpyPolicy', settings: { keep: 2 } } });
    expect(context).toMatchObject({ sessionId: 's', trigger: 'auto', step: 9, policy: { name: 'SpyPolicy', settings: { keep: 2 } } });
    expect(context?.snapshot.items).toHaveLength(4);
    expect(context?.snapshot.summary).toBe('earlier');
    await log.close();
  });

  it('beforeCompact returns nothing or true (sync or async): it observes and compaction goes ahead', async () => {
    const calls: string[] = [];
    const returns = [undefined, true, Promise.resolve(undefined)];
    const { session, newEvents, log } = await harness({
      beforeCompact: () => {
        calls.push('before');
        return returns.shift() as boolean | undefined;
      },
    });
    for (let i = 0; i < 3; i++) {
      await session.memory.addUserInput(`more ${i}`);
      expect(await session.autoCompactIfNecessary(spyPolicy())).not.toBeNull();
    }
    expect(calls).toEqual(['before', 'before', 'before']);
    expect((await newEvents()).filter((e) => e.type === 'memory.compacted')).toHaveLength(3);
    await log.close();
  });

  it('beforeCompact throws: hook.failed is recorded and the compaction is vetoed', async () => {
    const { session, newEvents, log } = await harness({ beforeCompact: () => { throw new Error('hook bug'); } });
    const before = session.memory.state();
    const policy = spyPolicy();
    await expect(session.autoCompactIfNecessary(policy, { step: 2 })).resolves.toBeNull();
    expect(policy.calls.compact).toBe(0);
    expect(await newEvents()).toMatchObject([{ type: 'hook.failed', hook: 'beforeCompact', error: 'hook bug', step: 2 }]);
    expect(session.memory.state().entries).toBe(before.entries);
    expect(session.memory.getSummary()).toBe('earlier');
    await log.close();
  });

  it('the policy throws: compaction.failed, no throw, memory as it was', async () => {
    const onCompact: string[] = [];
    const { session, newEvents, events, log } = await harness({ onCompact: () => { onCompact.push('on'); } });
    const before = session.memory.state();
    const policy = spyPolicy({ compact: () => { throw new Error('summarizer down'); } });
    await expect(session.autoCompactIfNecessary(policy, { step: 5 })).resolves.toBeNull();
    expect(session.memory.state()).toBe(before);
    expect(await newEvents()).toMatchObject([{ type: 'compaction.failed', trigger: 'auto', stage: 'compact', step: 5, error: 'summarizer down' }]);
    expect(onCompact).toEqual([]);
    expect(foldMemory(await events())).toEqual(before);
    expect(session.getLastCompactResult()).toBeNull();
    await log.close();
  });

  it('a non-Error throw is recorded by its text', async () => {
    const { session, newEvents, log } = await harness();
    await session.autoCompactIfNecessary(spyPolicy({ compact: () => { throw 'plain string'; } }));
    expect(await newEvents()).toMatchObject([{ type: 'compaction.failed', error: 'plain string' }]);
    await log.close();
  });

  it('compacts: memory.compacted with trigger auto and step, onCompact after it, the result returned', async () => {
    let after: CompactedHookContext | undefined;
    const { session, newEvents, events, log } = await harness({ onCompact: (c) => { after = c; } });
    const result = await session.autoCompactIfNecessary(keepLast, { step: 12 });
    expect(result).not.toBeNull();
    const [event] = (await newEvents()) as SessionEventOf<'memory.compacted'>[];
    expect(event).toMatchObject({ type: 'memory.compacted', trigger: 'auto', step: 12, policy: keepLast.describe(), droppedIds: ['2:0', '3:0'] });
    expect(after).toMatchObject({ trigger: 'auto', step: 12, result });
    expect(after?.event).toEqual(event);
    expect(session.memory.snapshot().items).toEqual(result?.memory?.items);
    expect(session.getLastCompactResult()).toEqual(event!.result);
    expect(foldMemory(await events())).toEqual(session.memory.state());
    await log.close();
  });

  it('onCompact throws: hook.failed is recorded after memory.compacted; the compaction stands', async () => {
    const { session, newEvents, log } = await harness({ onCompact: async () => { throw new Error('listener failed'); } });
    const result = await session.autoCompactIfNecessary(keepLast, { step: 3 });
    expect(result?.memory?.items).toHaveLength(2);
    expect(session.memory.snapshot().items).toHaveLength(2);
    expect(await newEvents()).toMatchObject([
      { type: 'memory.compacted', trigger: 'auto', step: 3 },
      { type: 'hook.failed', hook: 'onCompact', error: 'listener failed', step: 3 },
    ]);
    await log.close();
  });

  it('a describe() that throws is recorded as a failure, not thrown', async () => {
    const { session, newEvents, log } = await harness();
    const policy: CompactPolicy = { shouldCompact: () => true, compact: (s) => keepLast.compact(s), describe: () => { throw new Error('no name'); } };
    await expect(session.autoCompactIfNecessary(policy)).resolves.toBeNull();
    expect(await newEvents()).toMatchObject([{ type: 'compaction.failed', trigger: 'auto', policy: { name: 'CompactPolicy' }, error: 'no name' }]);
    await log.close();
  });

  it('keeps items appended while the policy ran', async () => {
    const { session, log } = await harness();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow = spyPolicy({
      compact: async (snapshot): Promise<CompactResult> => {
        await gate;
        return keepLast.compact(snapshot);
      },
    });
    const running = session.autoCompactIfNecessary(slow);
    await new Promise((r) => setTimeout(r, 0));
    await session.memory.addUserInput('arrived meanwhile');
    release();
    expect(await running).not.toBeNull();
    expect(session.memory.snapshot().items).toEqual([userMessage('three'), assistantMessage('four'), userMessage('arrived meanwhile')]);
    await log.close();
  });

  it('does not apply a result when memory was restored while the policy ran (compaction.failed at stage record)', async () => {
    const { session, newEvents, log } = await harness();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow = spyPolicy({
      compact: async (snapshot): Promise<CompactResult> => {
        await gate;
        return keepLast.compact(snapshot);
      },
    });
    const running = session.autoCompactIfNecessary(slow);
    await new Promise((r) => setTimeout(r, 0));
    await session.memory.restore({ items: [userMessage('replaced')], summary: 'restored' });
    release();
    expect(await running).toBeNull();
    expect(session.memory.snapshot().items).toEqual([userMessage('replaced')]);
    expect((await newEvents()).map((e) => e.type)).toEqual(['memory.restored', 'compaction.failed']);
    expect((await newEvents())[1]).toMatchObject({ stage: 'record', trigger: 'auto' });
    await log.close();
  });

  it('getLastCompactResult after an automatic compaction, and after resume', async () => {
    const { session, log } = await harness();
    await session.autoCompactIfNecessary(keepLast, { step: 1 });
    const last = session.getLastCompactResult();
    expect(last?.contextReport?.droppedItemCount).toBe(2);
    const resumed = await openSession(log, { id: 's' });
    expect(resumed.getLastCompactResult()).toEqual(last);
    await log.close();
  });
});

// Fault: facts recorded while an asynchronous compaction ran were cleared by its memory.compacted without reaching a policy.
describe('a compaction clears only the facts its snapshot held', () => {
  it('a fact recorded while the policy runs survives the compaction and reaches the next policy', async () => {
    const log = await openMemoryLog();
    const session = await openSession(log, { id: 's1' });
    await session.memory.addUserInput('task');
    await session.record([{ type: 'test.result', status: 'failed', suite: 'before', failed: 1 }]);

    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const seen: MemorySnapshot[] = [];
    const slow: CompactPolicy = {
      shouldCompact: () => true,
      compact: async (snapshot): Promise<CompactResult> => {
        seen.push(snapshot);
        await gate;
        return { ...emptyCompactLists(), memory: { items: snapshot.items, summary: 'sum' } };
      },
    };
    const compaction = session.autoCompactIfNecessary(slow, { step: 1 });
    // While the policy runs, a tool records a fact.
    await session.record([{ type: 'test.result', status: 'passed', suite: 'during', passed: 3 }]);
    release();
    expect(await compaction).not.toBeNull();

    expect(seen[0]!.facts?.map((f) => f.type === 'test.result' && f.suite)).toEqual(['before']);
    expect(session.memory.state().facts.map((f) => f.type === 'test.result' && f.suite)).toEqual(['during']);
    await session.autoCompactIfNecessary(slow, { step: 2 });
    expect(seen[1]!.facts?.map((f) => f.type === 'test.result' && f.suite)).toEqual(['during']);
    expect(session.memory.state().facts).toEqual([]);

    // The fold of the log agrees with live memory.
    const events: SessionEvent[] = [];
    for await (const e of log.read('s1')) events.push(e);
    expect(foldMemory(events)).toEqual(session.memory.state());
    const compacted = events.filter((e) => e.type === 'memory.compacted');
    expect(compacted.map((e) => e.type === 'memory.compacted' && e.factsThroughSeq)).toEqual([3, 4]);
  });

  it('memory.compacted v1 (before factsThroughSeq) still clears every fact recorded before it', () => {
    expect(EVENT_VERSIONS['memory.compacted']).toBe(3);
    const base = { sessionId: 's', at: 'now', prevHash: '', hash: '' };
    const raw = [
      { ...base, seq: 1, v: 1, type: 'user.input', items: [userMessage('x')] },
      { ...base, seq: 2, v: 1, type: 'test.result', status: 'failed' },
      {
        ...base, seq: 3, v: 1, type: 'memory.compacted', trigger: 'manual', policy: { name: 'P', settings: {} },
        layout: [{ keep: '1:0' }], keptIds: ['1:0'], droppedIds: [], summary: null, result: {},
      },
      { ...base, seq: 4, v: 1, type: 'test.result', status: 'passed' },
    ];
    const events = raw.map((r) => {
      const decoded = decodeEvent(r);
      if (decoded._tag === 'Left') throw decoded.left;
      return decoded.right;
    });
    expect(events[2]).toMatchObject({ v: 3 });
    expect(events[2]).not.toHaveProperty('factsThroughSeq');
    expect(foldMemory(events).facts.map((f) => f.seq)).toEqual([4]);
  });
});
