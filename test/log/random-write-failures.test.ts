// Fault injection: LevelDB writes (batches and puts) fail at random (20%) during a long runtime session; nothing acknowledged is lost and the session resumes.
import { ClassicLevel } from 'classic-level';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isContextLedgerError } from '../../src/base/errors.js';
import type { SessionEvent } from '../../src/events/index.js';
import { assistantMessage, functionCall } from '../../src/items/index.js';
import { createStoreLog, type SessionEventLog, type StringLevel } from '../../src/log/index.js';
import type { ModelClient, ModelResult } from '../../src/model/index.js';
import { Agents, defineTool } from '../../src/runtime/index.js';
import { collectAll, seededRandom, tempDir } from './support.js';

const SEED = Number(process.env['FAULT_SEED'] ?? 20261202);
const FAILURE_RATE = 0.2;
const ATTEMPTS = 60;

let dir: string;
let remove: () => Promise<void>;
beforeEach(async () => {
  ({ dir, remove } = await tempDir('faults'));
});
afterEach(async () => {
  await remove();
});

/** A model that answers even-numbered tasks at once and calls `count` twice before answering the others. */
const countingModel = (): ModelClient => {
  let n = 0;
  return {
    async create(request): Promise<ModelResult> {
      const start = request.items.findLastIndex((i) => i.type === 'message' && i.role === 'user');
      const task = request.items[start] as { content?: unknown } | undefined;
      const direct = typeof task?.content === 'string' && /[02468]$/.test(task.content);
      const outputsThisRun = request.items.slice(start).filter((i) => i.type === 'function_call_output').length;
      if (direct || outputsThisRun >= 2) return { outputText: 'done', items: [assistantMessage('done')] };
      n += 1;
      return { items: [functionCall('count', JSON.stringify({ by: n }), `call_${n}`)] };
    },
  };
};

const count = defineTool({
  name: 'count',
  description: 'Counts',
  parameters: z.object({ by: z.number() }),
  execute: ({ by }) => `counted ${by}`,
});

describe('fault injection: LevelDB writes failing at random', () => {
  it(`during a long runtime session (seed ${SEED}, ${FAILURE_RATE * 100}% of writes fail): gap-free, verify valid, nothing acknowledged missing, the session resumes`, async () => {
    console.log(`fault injection seed ${SEED} (replay with FAULT_SEED=${SEED})`);
    const random = seededRandom(SEED);
    const db = new ClassicLevel<string, string>(dir, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
    await db.open();
    let faults = true;
    let failedBatches = 0;
    let writtenBatches = 0;
    // every write fails at random: batches, and the plain puts of one-event appends
    const faulty =
      (real: (...args: unknown[]) => Promise<void>) =>
      (...args: unknown[]): Promise<void> => {
        if (faults && random() < FAILURE_RATE) {
          failedBatches += 1;
          return Promise.reject(Object.assign(new Error('injected LevelDB write failure'), { code: 'LEVEL_IO_ERROR' }));
        }
        writtenBatches += 1;
        return real(...args);
      };
    (db as unknown as { batch: unknown }).batch = faulty(db.batch.bind(db) as (...args: unknown[]) => Promise<void>);
    (db as unknown as { put: unknown }).put = faulty(db.put.bind(db) as (...args: unknown[]) => Promise<void>);
    const store = createStoreLog(db as unknown as StringLevel);
    const acknowledged: SessionEvent[] = [];
    const log: SessionEventLog = {
      ...store,
      async append(sessionId, events, options) {
        const stored = await store.append(sessionId, events, options);
        acknowledged.push(...stored);
        return stored;
      },
    };
    let id = 0;
    const agent = Agents.react({ modelClient: countingModel(), model: 'm', tools: [count], log, ids: () => `id-${++id}`, maxSteps: 6 });

    let session = await agent.newSession();
    const sessionId = session.id;
    let completed = 0;
    let failedRuns = 0;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      try {
        await session.run(`task ${attempt}`);
        completed += 1;
      } catch (error) {
        failedRuns += 1;
        if (process.env["FAULT_DEBUG"]) console.log(String(error), (error as { cause?: unknown }).cause);
        expect(isContextLedgerError(error), String(error)).toBe(true); // a LogWriteError, or an AgentRunError caused by one
        session = await agent.resumeSession(sessionId); // as a new process would: from the log alone
      }
    }
    faults = false;
    session = await agent.resumeSession(sessionId);
    const last = await session.run('the last task');
    expect(last.outputText).toBe('done');
    console.log(`${failedBatches} batches failed, ${writtenBatches} written; ${completed + 1} runs completed, ${failedRuns} failed`);
    expect(failedBatches).toBeGreaterThan(20);
    expect(failedRuns).toBeGreaterThan(5);
    expect(completed).toBeGreaterThan(0); // runs still complete between failures

    const stored = await collectAll(log.read(sessionId, { verify: true }));
    expect(stored.map((e) => e.seq)).toEqual(Array.from({ length: stored.length }, (_, i) => i + 1)); // gap-free
    expect(await log.verify(sessionId)).toEqual({ valid: true, eventCount: stored.length, firstBrokenSeq: null });
    // exactly the acknowledged events are stored: nothing acknowledged is missing, nothing unacknowledged appeared
    const mine = acknowledged.filter((e) => e.sessionId === sessionId);
    expect(stored.map((e) => [e.seq, e.hash])).toEqual(mine.map((e) => [e.seq, e.hash]));
    expect(stored).toEqual(mine);
    await log.close();
  });
});
