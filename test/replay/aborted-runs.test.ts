// A run the host aborted between two of its events re-runs identically (law 11), wherever the abort fell: opening the
// run, a step's start, its projection, a compaction, the model's answer (calls left unexecuted), the step's last tool
// result, a step's end. Found by the soak (npm run soak): 3 of 10 sampled sessions re-ran differently.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { StructuredSummaryCompactPolicy } from '../../src/compact/index.js';
import type { SessionEvent } from '../../src/events/index.js';
import { assistantMessage, functionCall } from '../../src/items/index.js';
import { openMemoryLog, type SessionEventLog } from '../../src/log/index.js';
import type { ModelClient } from '../../src/model/index.js';
import { replaySession } from '../../src/replay/index.js';
import { Agents, defineTool } from '../../src/runtime/index.js';
import { checkSessionLaws } from '../../src/testing/index.js';
import { prng } from '../../bench/support.js';

const readFile = defineTool({
  name: 'read_file',
  description: 'Read a file',
  parameters: z.object({ path: z.string() }),
  execute: async ({ path }) => {
    await new Promise((r) => setImmediate(r));
    return `contents of ${path}`;
  },
});

/** A model that calls two tools, then one, then answers (per run). */
const model = (): ModelClient => {
  let n = 0;
  return {
    async create(request) {
      n += 1;
      const lastUser = request.items.findLastIndex((i) => i.type === 'message' && (i as { role?: unknown }).role === 'user');
      const results = request.items.slice(lastUser + 1).filter((i) => i.type === 'function_call_output').length;
      if (results >= 3) return { outputText: 'done', items: [assistantMessage('done')] };
      return { items: results === 0 ? [functionCall(`a${n}`, 'read_file', { path: `a${n}.ts` }), functionCall(`b${n}`, 'read_file', { path: `b${n}.ts` })] : [functionCall(`c${n}`, 'read_file', { path: `c${n}.ts` })] };
    },
  };
};

const events = async (log: SessionEventLog, id: string): Promise<SessionEvent[]> => {
  const out: SessionEvent[] = [];
  for await (const event of log.read(id)) out.push(event);
  return out;
};

/**
 * Records a session of three runs; the second is aborted (by the host's signal) as soon as `abortWhen` says so of an
 * event stored in it. Returns the log and the recorded events.
 */
const record = async (abortWhen: (event: SessionEvent, index: number) => boolean): Promise<{ log: SessionEventLog; recorded: SessionEvent[] }> => {
  const log = await openMemoryLog();
  let armed: { controller: AbortController; index: number } | undefined;
  const agent = Agents.react({
    modelClient: model(),
    model: 'scripted',
    tools: [readFile],
    log,
    compactPolicy: new StructuredSummaryCompactPolicy({ maxItems: 6 }, undefined, { compactAbove: 8 }),
    checkpointEvery: 7,
    onEvent: (notification) => {
      if (notification.type !== 'EVENT' || !armed) return;
      const index = armed.index++;
      if (abortWhen(notification.event, index)) {
        armed.controller.abort(new Error('the host stopped it'));
        armed = undefined;
      }
    },
  });
  const session = await agent.newSession({ id: 's' });
  for (let run = 0; run < 3; run++) {
    const controller = new AbortController();
    if (run === 1) armed = { controller, index: 0 };
    await session.run(`task ${run}`, { signal: controller.signal }).catch(() => undefined);
    armed = undefined;
  }
  return { log, recorded: await events(log, 's') };
};

const expectIdenticalReplays = async (log: SessionEventLog, recorded: readonly SessionEvent[]): Promise<void> => {
  expect(recorded.some((e) => e.type === 'run.failed' && e.reason === 'aborted'), recorded.map((e) => e.type).join(' ')).toBe(true);
  for (const mode of ['project', 'rerun'] as const) {
    const result = await replaySession(log, 's', { mode });
    expect({ mode, identical: result.identical, first: result.firstDivergence, notes: result.notes }).toEqual({ mode, identical: true, first: undefined, notes: [] });
  }
  expect(checkSessionLaws(recorded)).toEqual([]);
};

describe('a run aborted between two of its events re-runs identically', () => {
  for (const [where, abortWhen] of [
    ['right after its input (before its first step)', (e: SessionEvent) => e.type === 'user.input'],
    ["right after a step's start", (e: SessionEvent) => e.type === 'step.started'],
    ['right after a projection', (e: SessionEvent) => e.type === 'context.projected'],
    ["right after the model's answer (its calls left unexecuted)", (e: SessionEvent) => e.type === 'model.responded'],
    ["right after the step's first tool result", (e: SessionEvent) => e.type === 'tool.result'],
    ["right after the step's last tool result (before the step ends)", (e: SessionEvent, i: number) => e.type === 'tool.result' && i > 8],
    ["right after a step's end", (e: SessionEvent) => e.type === 'step.ended'],
    ['right after a compaction', (e: SessionEvent) => e.type === 'memory.compacted'],
  ] as const) {
    it(where, async () => {
      const { log, recorded } = await record(abortWhen);
      await expectIdenticalReplays(log, recorded);
      await log.close();
    });
  }

  it('at any event of the run (seeded: 40 sessions, each aborted after a random one of its events)', async () => {
    const random = prng(20261205);
    for (let i = 0; i < 40; i++) {
      const at = Math.floor(random() * 30);
      const { log, recorded } = await record((_e, index) => index === at);
      const failed = recorded.some((e) => e.type === 'run.failed' && e.reason === 'aborted');
      if (failed) {
        for (const mode of ['project', 'rerun'] as const) {
          const result = await replaySession(log, 's', { mode });
          expect({ at, mode, identical: result.identical, first: result.firstDivergence }).toEqual({ at, mode, identical: true, first: undefined });
        }
      }
      await log.close();
    }
  });
});
