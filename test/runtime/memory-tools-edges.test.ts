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
  it('a query returns the top hits of the whole session by one ranking, wherever they are; new events are read on catch-up', async () => {
    const log = await openMemoryLog();
    const session = await openSession(log, { id: 'seg' });
    // the best match (timeout four times) is the oldest note
    const notes = ['timeout timeout timeout timeout', 'timeout timeout retry', 'alpha', 'beta', 'timeout once', 'gamma', 'a timeout here'];
    for (let i = 0; i < notes.length; i++) await session.record([{ type: 'tool.result', callId: `c${i}`, output: notes[i]! }]);
    const index = new RecallIndex(log, 'seg');
    await index.catchUp();
    expect(index.size).toBe(7);
    expect(index.search('timeout', new Set(), 2).map((h) => h.id)).toEqual(['2:0', '3:0']);
    expect(index.search('timeout', new Set(['2:0']), 2).map((h) => h.id)).toEqual(['3:0', '6:0']);
    expect(index.resultOfCall('c3')).toBe('5:0');
    // Appended later: the next catch-up reads only the new events.
    await session.record([{ type: 'tool.result', callId: 'c9', output: 'late zeppelin' }]);
    await index.catchUp();
    expect(index.search('zeppelin', new Set(), 5).map((h) => h.id)).toEqual(['9:0']);
  });

  it('past 10,000 items (where the index was cut into segments searched newest first) the oldest best match still ranks first', async () => {
    const log = await openMemoryLog();
    const session = await openSession(log, { id: 'many', checkpointEvery: 0 });
    await session.record([{ type: 'tool.result', callId: 'best', output: 'timeout timeout timeout timeout' }]);
    for (let batch = 0; batch < 11; batch++) {
      await session.record(Array.from({ length: 1000 }, (_, i) => ({ type: 'tool.result' as const, callId: `f${batch}-${i}`, output: `filler ${i % 7 === 0 ? 'timeout ' : ''}note ${batch} ${i}` })));
    }
    const index = new RecallIndex(log, 'many');
    await index.catchUp();
    expect(index.size).toBe(11_001);
    const hits = index.search('timeout', new Set(), 3);
    expect(hits[0]?.id).toBe('2:0');
    expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
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
