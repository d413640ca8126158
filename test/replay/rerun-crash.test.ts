// A recording whose process died mid-run (a later process resumed the session and continued the run) re-runs
// identically: the re-run's log stops storing where the recorded process did, and the re-run resumes as it did.
// The death is made in-process: from a chosen moment the log refuses every append, so nothing more is stored (the
// runtime's own run.failed included), exactly what a SIGKILL leaves (test-integration/runtime/deferred-kill.test.ts
// does it with a real process on LevelDB).
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
  type ModelClient,
  type ModelResult,
  type SessionEvent,
  type SessionEventLog,
} from '../../src/index.js';
import { crashPointsOf } from '../../src/replay/rerun.js';
import { checkSessionLaws } from '../../src/testing/runtime-laws.js';

/** The log, refusing every append once `dead()` is true. */
const mortal = (log: SessionEventLog, dead: () => boolean): SessionEventLog =>
  new Proxy(log, {
    get(target, key) {
      if (key === 'append') {
        return (...args: Parameters<SessionEventLog['append']>) => (dead() ? Promise.reject(new Error('the process is dead')) : target.append(...args));
      }
      const value = Reflect.get(target, key) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });

const answers = (): ModelResult[] => [
  { items: [functionCall('c1', 'read_file', { path: 'a.ts' })] },
  { items: [functionCall('c2', 'read_file', { path: 'b.ts' })] },
  { items: [functionCall('c3', 'read_file', { path: 'c.ts' })] },
  { outputText: 'done', items: [assistantMessage('done')] },
];

/**
 * Runs the script on `log` until `dieAt` says the process dies (it then stores nothing more and its run() is
 * abandoned), then a second "process" resumes the session and continues the run with the answers left.
 */
const recordWithDeath = async (dieAt: { tool?: string; request?: number }): Promise<{ log: SessionEventLog; id: string }> => {
  const log = await openMemoryLog();
  let dead = false;
  const script = answers();
  let requests = 0;
  const dying: ModelClient = {
    async create(request, options) {
      requests += 1;
      if (requests === dieAt.request) {
        dead = true;
        throw new Error('killed during the model call');
      }
      return new ScriptedModelClient([script[requests - 1]!]).create(request, options);
    },
  };
  const read = defineTool({
    name: 'read_file',
    description: 'Read a file',
    parameters: z.object({ path: z.string() }),
    execute: ({ path }) => `// ${path}`,
  });
  const options = { model: 'scripted', tools: [read], contextBudget: { maxTokens: 2_000 } } as const;
  const first = Agents.react({ ...options, modelClient: dying, log: mortal(log, () => dead), hooks: { afterToolCall: ({ call }) => { if (call.callId === dieAt.tool) dead = true; } } });
  const session = await first.newSession();
  await expect(session.run('Read the files.')).rejects.toThrow();
  // The next process: what is left of the script, on the same log.
  const answered = script.slice(dieAt.request !== undefined ? dieAt.request - 1 : requests);
  const second = Agents.react({ ...options, modelClient: new ScriptedModelClient(answered), log });
  const resumed = await second.resumeSession(session.id);
  await expect(resumed.run()).resolves.toMatchObject({ status: 'finished', outputText: 'done' });
  return { log, id: session.id };
};

const eventsOf = async (log: SessionEventLog, id: string): Promise<SessionEvent[]> => {
  const events: SessionEvent[] = [];
  for await (const e of log.read(id)) events.push(e);
  return events;
};

describe('re-running a recording whose process died mid-run', () => {
  it('dead after a tool result (step.ended and the next step.started never stored): identical in both modes', async () => {
    const { log, id } = await recordWithDeath({ tool: 'c2' });
    const events = await eventsOf(log, id);
    const runId = (events.find((e) => e.type === 'run.started') as { runId: string }).runId;
    const lastResult = events.find((e) => e.type === 'tool.result' && e.callId === 'c2')!;
    expect(crashPointsOf(events, runId)).toEqual([lastResult.seq]);
    expect(events.filter((e) => e.type === 'step.ended').map((e) => (e as { step: number }).step)).toEqual([1, 3, 4]);
    expect(checkSessionLaws(events)).toEqual([]);
    for (const mode of ['project', 'rerun'] as const) {
      const replayed = await replaySession(log, id, { mode });
      expect(replayed.identical, `${mode}: ${JSON.stringify(replayed.firstDivergence)} ${replayed.notes.join('; ')}`).toBe(true);
    }
  });

  it('dead during a model call (its request stored, no answer): identical in both modes', async () => {
    const { log, id } = await recordWithDeath({ request: 3 });
    const events = await eventsOf(log, id);
    const runId = (events.find((e) => e.type === 'run.started') as { runId: string }).runId;
    const requested = events.filter((e) => e.type === 'model.requested');
    expect(crashPointsOf(events, runId)).toEqual([requested[2]!.seq]);
    expect(events.some((e) => e.type === 'model.failed')).toBe(false);
    for (const mode of ['project', 'rerun'] as const) {
      const replayed = await replaySession(log, id, { mode });
      expect(replayed.identical, `${mode}: ${JSON.stringify(replayed.firstDivergence)} ${replayed.notes.join('; ')}`).toBe(true);
    }
  });

  it('a recording that did not die has no crash point, and one whose later steps differ still diverges', async () => {
    const { log, id } = await recordWithDeath({ tool: 'c2' });
    const events = await eventsOf(log, id);
    const runId = (events.find((e) => e.type === 'run.started') as { runId: string }).runId;
    expect(crashPointsOf(events.filter((e) => e.seq <= events.find((x) => x.type === 'tool.result' && x.callId === 'c2')!.seq), runId)).toEqual([]);
    // The same recording with the continuing process's answer changed: the re-run must still say so.
    const forged = await openMemoryLog();
    for (const event of events) {
      const { sessionId: _s, seq: _q, at: _a, v: _v, prevHash: _p, hash: _h, contentDigest: _d, contentSalt: _c, ...payload } = event as Record<string, unknown>;
      if (payload['type'] === 'model.responded' && payload['outputText'] === 'done') payload['outputText'] = 'forged';
      await forged.append(id, [payload as never]);
    }
    const replayed = await replaySession(forged, id, { mode: 'rerun' });
    expect(replayed.identical).toBe(false);
    // The re-run answers with the forged text; the recorded run.finished still says 'done'.
    expect(replayed.firstDivergence).toMatchObject({ type: 'run.finished', fields: ['outputText'] });
  });
});
