import { describe, expect, it } from 'vitest';
import {
  Agents,
  RecallIndex,
  ScriptedModelClient,
  assistantMessage,
  isInvalidEventError,
  isInvalidOptionsError,
  isSessionBusyError,
  openMemoryLog,
  openSession,
  recallTool,
  workingMemoryTool,
} from '../../src/index.js';

const context = { sessionId: 's', runId: 'r', step: 1, callId: 'c', signal: new AbortController().signal, record: async () => undefined };

describe('memory tools at their edges', () => {
  it('the index searches its segments newest first and stops once it has its hits; a rare word is found in the oldest', async () => {
    const log = await openMemoryLog();
    const session = await openSession(log, { id: 'seg' });
    for (let i = 0; i < 6; i++) await session.record([{ type: 'tool.result', callId: `c${i}`, output: i === 0 ? 'alpha and a rare zeppelin' : `alpha number ${i}` }]);
    const index = new RecallIndex(log, 'seg', { segmentItems: 2 });
    await index.catchUp();
    expect(index.size).toBe(6);
    const newest = index.search('alpha', new Set(), 2).map((h) => h.id);
    expect(newest.sort()).toEqual(['6:0', '7:0']);
    expect(index.search('zeppelin', new Set(), 5).map((h) => h.id)).toEqual(['2:0']);
    expect(index.search('alpha', new Set(['6:0', '7:0']), 2).map((h) => h.id).sort()).toEqual(['4:0', '5:0']);
    expect(index.resultOfCall('c3')).toBe('5:0');
    // Appended later: the next catch-up reads only the new events.
    await session.record([{ type: 'tool.result', callId: 'c9', output: 'late zeppelin' }]);
    await index.catchUp();
    expect(index.search('zeppelin', new Set(), 5).map((h) => h.id).sort()).toEqual(['2:0', '8:0']);
    expect(index.search('late', new Set(), 1).map((h) => h.id)).toEqual(['8:0']);
  });

  it('a memory tool outside an agent step says so; bad tool options are refused when the tool is made', async () => {
    await expect(Promise.resolve(recallTool().execute({ id: '1:0' }, context as never))).rejects.toThrow(/only inside an agent's step/);
    expect(() => recallTool({ maxChars: 0 })).toThrow(/maxChars/);
    expect(() => recallTool({ defaultLimit: 51 })).toThrow(/defaultLimit/);
    await expect(Promise.resolve(workingMemoryTool({ blocks: [{ name: 'a', maxChars: 5 }] }).execute({ operation: 'set', block: 'a', text: 'x' }, context as never))).rejects.toThrow(/only inside/);
  });

  it('workingMemory options are checked: unique names, initial within maxChars, no clash with a user tool', () => {
    const base = { modelClient: new ScriptedModelClient([]), model: 'm' };
    const attempt = (workingMemory: unknown): unknown => {
      try {
        return Agents.react({ ...base, workingMemory } as never);
      } catch (error) {
        return error;
      }
    };
    expect(isInvalidOptionsError(attempt({ blocks: [{ name: 'a', maxChars: 3 }, { name: 'a', maxChars: 3 }] }))).toBe(true);
    expect(isInvalidOptionsError(attempt({ blocks: [{ name: 'a', maxChars: 3, initial: 'toolong' }] }))).toBe(true);
    expect(isInvalidOptionsError(attempt({ blocks: [{ name: 'a', maxChars: -1 }] }))).toBe(true);
    expect(isInvalidOptionsError(attempt({ blocks: [] }))).toBe(true);
  });

  it('a session.rewound that carries no valid memory is refused before it is appended; rewinding while running is refused', async () => {
    const log = await openMemoryLog();
    const session = await openSession(log, { id: 'bad-rewind' });
    const head = await log.head('bad-rewind');
    const error = await session.record([{ type: 'session.rewound', toSeq: 1, memory: { entries: 'no' } }]).catch((e: unknown) => e);
    expect(isInvalidEventError(error)).toBe(true);
    expect(String((error as Error).message)).toContain('memory.entries');
    expect(await log.head('bad-rewind')).toBe(head);

    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const agent = Agents.react({ modelClient: { create: async () => (await gate, { outputText: 'x', items: [assistantMessage('x')] }) }, model: 'm', log });
    const running = await agent.newSession();
    const run = running.run('go');
    const busy = await running.rewind({ toSeq: 1 }).catch((e: unknown) => e);
    expect(isSessionBusyError(busy)).toBe(true);
    release();
    await run;
    const rewound = await running.rewind({ toSeq: 1 });
    expect(running.memory.state().entries).toEqual([]);
    expect(rewound.toSeq).toBe(1);
  });
});
