// The live session is the one writer of a session (decision 0036): its state is the fold of the events it stored,
// and for the run, of the step's bookkeeping events it holds for the next append as well; memory is a façade over it;
// AgentRunSession counts nothing and reads its run state from it.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  Agents,
  DefaultContextProjector,
  ScriptedModelClient,
  assistantMessage,
  defineTool,
  functionCall,
  openMemoryLog,
  userMessage,
  type ContextProjector,
  type NewSessionEvent,
  type SessionEvent,
  type SessionEventLog,
} from '../../src/index.js';
import { createMemoryLog } from '../../src/log/index.js';
import { readAll } from '../replay/support.js';
import { appenderFor, createLiveSession, deferWrite, deferredGroups, flushDeferred, foldSession, openSession } from '../../src/session/index.js';

const clock = (): string => '2026-01-01T00:00:00.000Z';

describe('the live session', () => {
  it("folds a deferred step into the run state at once, into memory and the log only with the next write", async () => {
    const log = createMemoryLog({ clock });
    const live = createLiveSession({ sessionId: 's', appender: appenderFor(log, 's') });
    await live.write([{ type: 'run.started', runId: 'r1' }]);
    expect(deferWrite(live.memory, [{ type: 'step.started', runId: 'r1', step: 1 }])).toBe(true);
    expect(live.state().run.lastStep).toBe(1);
    expect(live.head()).toBe(1);
    expect((await readAll(log, 's')).map((e) => e.type)).toEqual(['run.started']);
    await live.memory.addUserInput('hi');
    const stored = await readAll(log, 's');
    expect(stored.map((e) => e.type)).toEqual(['run.started', 'step.started', 'user.input']);
    expect(live.state()).toEqual(foldSession(stored));
    expect(live.memory.state()).toBe(live.state().memory);
  });

  it('takes checkpoints at stored boundaries only, with the state of the events stored', async () => {
    const log = createMemoryLog({ clock });
    const checkpoints: { seq: number; lastStep: number }[] = [];
    const live = createLiveSession({
      sessionId: 's',
      appender: appenderFor(log, 's'),
      checkpoints: {
        every: 3,
        dueOnOpen: false,
        event: (state) => ({ type: 'checkpoint.taken', digest: `d${state.run.lastStep}`, checkpointEvery: 3 }),
        store: async (event, state) => {
          checkpoints.push({ seq: event.seq, lastStep: state.run.lastStep });
        },
      },
    });
    await live.write([{ type: 'run.started', runId: 'r1' }]);
    deferWrite(live.memory, [{ type: 'step.started', runId: 'r1', step: 1 }]);
    deferWrite(live.memory, [{ type: 'step.started', runId: 'r1', step: 2 }]);
    await live.memory.addUserInput('hi');
    const types = (await readAll(log, 's')).map((e) => `${e.seq}:${e.type}`);
    // The checkpoint falls after seq 3 (the second step.started): the merged append ends there.
    expect(types).toEqual(['1:run.started', '2:step.started', '3:step.started', '4:checkpoint.taken', '5:user.input']);
    expect(checkpoints).toEqual([{ seq: 4, lastStep: 2 }]);
  });

  it('equals the fold of the events stored plus the run events it holds, after any interleaving of writes, deferrals, flushes and checkpoints', async () => {
    type Op =
      | { readonly kind: 'write'; readonly event: NewSessionEvent }
      | { readonly kind: 'defer'; readonly event: NewSessionEvent }
      | { readonly kind: 'flush' }
      | { readonly kind: 'checkpoint' };
    const runId = fc.constantFrom('r1', 'r2');
    const written: fc.Arbitrary<NewSessionEvent> = fc.oneof(
      fc.string({ maxLength: 8 }).map((text): NewSessionEvent => ({ type: 'user.input', items: [userMessage(text)] })),
      runId.map((id): NewSessionEvent => ({ type: 'run.started', runId: id })),
      runId.map((id): NewSessionEvent => ({ type: 'run.finished', runId: id, steps: 1, outputText: 'ok' })),
      fc.tuple(runId, fc.nat(5)).map(([id, step]): NewSessionEvent => ({ type: 'plan.created', runId: id, step, plan: [], text: '' })),
      fc.constant<NewSessionEvent>({ type: 'compaction.requested' }),
    );
    const deferred: fc.Arbitrary<NewSessionEvent> = fc.oneof(
      fc.tuple(runId, fc.integer({ min: 1, max: 20 })).map(([id, step]): NewSessionEvent => ({ type: 'step.started', runId: id, step })),
      fc.tuple(runId, fc.integer({ min: 1, max: 20 })).map(([id, step]): NewSessionEvent => ({ type: 'step.ended', runId: id, step, toolCalls: 0 })),
    );
    const op: fc.Arbitrary<Op> = fc.oneof(
      written.map((event): Op => ({ kind: 'write', event })),
      deferred.map((event): Op => ({ kind: 'defer', event })),
      fc.constant<Op>({ kind: 'flush' }),
      fc.constant<Op>({ kind: 'checkpoint' }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 30 }), fc.integer({ min: 0, max: 4 }), async (ops, every) => {
        const log = createMemoryLog({ clock });
        const held: NewSessionEvent[] = [];
        const live = createLiveSession({
          sessionId: 's',
          appender: appenderFor(log, 's'),
          checkpoints: {
            every,
            dueOnOpen: false,
            event: (state) => ({ type: 'checkpoint.taken', digest: String(state.run.lastStep), checkpointEvery: every }),
            store: async () => undefined,
          },
        });
        for (const o of ops) {
          if (o.kind === 'write') {
            await live.write([o.event]);
            held.length = 0;
          } else if (o.kind === 'defer') {
            deferWrite(live.memory, [o.event]);
            held.push(o.event);
          } else if (o.kind === 'flush') {
            await flushDeferred(live.memory);
            held.length = 0;
          } else {
            await live.checkpoint();
            held.length = 0;
          }
          const stored = await readAll(log, 's');
          expect(live.head()).toBe(stored.length);
          const withHeld = foldSession([...stored, ...held.map((event, i) => ({ ...event, seq: stored.length + i + 1, sessionId: 's' }) as SessionEvent)]);
          expect(live.state().run).toEqual(withHeld.run);
          expect(live.state().memory).toEqual(foldSession(stored).memory);
        }
        await flushDeferred(live.memory);
        expect(live.state()).toEqual(foldSession(await readAll(log, 's')));
      }),
      { numRuns: 60 },
    );
  });
});

describe('AgentRunSession reads its run state from the session', () => {
  const readFile = defineTool({
    name: 'read_file',
    description: 'Read a file',
    parameters: z.object({ path: z.string() }),
    execute: ({ path }) => `// ${path}`,
  });

  it("knows the step in progress while its step.started still waits for the next append", async () => {
    const log = await openMemoryLog({ clock });
    const seen: { lastStep: number; waiting: number }[] = [];
    let agentSession: Awaited<ReturnType<ReturnType<typeof Agents.react>['newSession']>> | undefined;
    const inner = new DefaultContextProjector();
    // The projector runs inside the step, after step.started was put off and before anything else is appended.
    const projector: ContextProjector = {
      describe: () => inner.describe(),
      project: (items, budget) => {
        seen.push({ lastStep: agentSession!.lastStep, waiting: deferredGroups(agentSession!.memory) });
        return inner.project(items, budget);
      },
    };
    const agent = Agents.react({
      modelClient: new ScriptedModelClient([
        { items: [functionCall('call_1', 'read_file', { path: 'a.ts' })] },
        { outputText: 'done', items: [assistantMessage('done')] },
      ]),
      model: 'scripted',
      tools: [readFile],
      log,
      contextProjector: projector,
      contextBudget: { maxItems: 50 },
      ids: (() => {
        let n = 0;
        return () => `id-${++n}`;
      })(),
    });
    agentSession = await agent.newSession({ id: 's' });
    const result = await agentSession.run('read a.ts');
    expect(result.status).toBe('finished');
    // Each step.started was still held for the next append when the projector ran.
    expect(seen).toEqual([
      { lastStep: 1, waiting: 1 },
      { lastStep: 2, waiting: 2 },
    ]);
    expect(agentSession.lastStep).toBe(2);
    expect(agentSession.interruptedRunId).toBeUndefined();
    const steps = (await readAll(log, 's')).filter((e) => e.type === 'step.started').map((e) => (e as { step: number }).step);
    expect(steps).toEqual([1, 2]);
  });

  it('records a run whose run.failed the log refused as superseded by the next run, as the log has it open', async () => {
    const base = await openMemoryLog({ clock });
    let refuse = false;
    const log: SessionEventLog = new Proxy(base, {
      get(target, key) {
        if (key === 'append') {
          return (id: string, events: readonly NewSessionEvent[], options?: { expectedSeq?: number }) => {
            if (refuse && events.some((e) => e.type === 'run.failed')) return Promise.reject(new Error('disk full'));
            return target.append(id, events, options);
          };
        }
        const value = Reflect.get(target, key) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const agent = Agents.react({
      modelClient: new ScriptedModelClient([
        { items: [functionCall('call_1', 'read_file', { path: 'a.ts' })] },
        { outputText: 'done', items: [assistantMessage('done')] },
      ]),
      model: 'scripted',
      tools: [readFile],
      log,
      contextBudget: { maxItems: 50 },
      maxSteps: 1,
    });
    const session = await agent.newSession({ id: 's' });
    refuse = true;
    await expect(session.run('read a.ts')).rejects.toMatchObject({ reason: 'max-steps' });
    refuse = false;
    // The log holds the run open (its run.failed was refused): the fold says so, and the next run supersedes it.
    const open = session.interruptedRunId;
    expect(open).toBeDefined();
    await expect(session.run('again')).resolves.toMatchObject({ status: 'finished' });
    const failed = (await readAll(base, 's')).filter((e) => e.type === 'run.failed') as SessionEvent[];
    expect(failed.map((e) => (e as { runId: string; reason: string }).runId === open && (e as { reason: string }).reason)).toContain('interrupted');
    expect(session.interruptedRunId).toBeUndefined();
    const resumed = await agent.resumeSession('s');
    expect(resumed.interruptedRunId).toBeUndefined();
    expect(resumed.lastStep).toBe(session.lastStep);
  });
});

describe('openSession over the live session', () => {
  it('gives state() with the deferred step, and saves a checkpoint of the stored state only', async () => {
    const log = await openMemoryLog({ clock });
    const session = await openSession(log, { id: 's', checkpointEvery: 0 });
    await session.record([{ type: 'run.started', runId: 'r' }]);
    deferWrite(session.memory, [{ type: 'step.started', runId: 'r', step: 7 }]);
    expect(session.state().run.lastStep).toBe(7);
    await session.save();
    const events = await readAll(log, 's');
    expect(events.map((e) => e.type)).toEqual(['session.started', 'run.started', 'step.started', 'checkpoint.taken']);
    expect(session.state()).toEqual(foldSession(events));
  });
});
