import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hasRankingInternals, newRecallSearch, topResults } from '../../src/runtime/memory-tools/recall-index.js';
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

  it('an event.erased removes every item of the erased events and the scrubbed copies from an index built before it', async () => {
    const log = await openMemoryLog();
    const session = await openSession(log, { id: 'er' });
    const message = (text: string) => ({ type: 'message' as const, role: 'assistant' as const, content: text });
    await session.record([{ type: 'model.output', items: [message('zebra one'), message('zebra two'), message('giraffe three')] }]);
    await session.record([{ type: 'memory.restored', items: [message('zebra two'), message('okapi four')] }]);
    const index = new RecallIndex(log, 'er');
    await index.catchUp();
    expect(index.search('zebra', new Set(), 10).map((h) => h.id).sort()).toEqual(['2:0', '2:1', '3:0']);
    expect(await log.erase('er', { seqs: [2] }, { reason: 'r' })).toMatchObject({ erased: [2], copies: [3] });
    await index.catchUp();
    expect(index.search('zebra giraffe', new Set(), 10)).toEqual([]);
    expect(index.search('okapi', new Set(), 10).map((h) => h.id)).toEqual(['3:1']);
    expect(['2:0', '2:1', '2:2', '3:0', '3:1'].map((id) => index.has(id))).toEqual([false, false, false, false, true]);
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

describe('the recall ranking', () => {
  it('takes the top hits from minisearch as its search() ranks them: same ids, scores, terms and order, for any query, exclusion and limit', () => {
    const index = newRecallSearch();
    expect(hasRankingInternals(index)).toBe(true); // a minisearch upgrade that drops them is noticed here
    const words = ['timeout', 'retry', 'parser', 'error', 'test', 'tests', 'testing', 'budget', 'seven', 'alpha'];
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 60 }),
        fc.array(fc.constantFrom(...words, 'tes', 'absent'), { minLength: 1, maxLength: 3 }),
        fc.nat({ max: 20 }),
        fc.integer({ min: 1, max: 12 }),
        (docs, query, excludeEvery, limit) => {
          const search = newRecallSearch();
          docs.forEach((text, i) => search.add({ id: `${i + 1}:0`, kind: 'k', ...(i % 2 ? { step: i } : {}), text: text.join(' ') }));
          const exclude = new Set(docs.map((_, i) => `${i + 1}:0`).filter((_, i) => excludeEvery > 0 && i % excludeEvery === 0));
          const options = { boostDocument: (id: unknown) => (exclude.has(id as string) ? 0 : 1) };
          const expected = search.search(query.join(' '), options).slice(0, limit).map((r) => ({ id: r.id, score: r.score, terms: r.terms, kind: r['kind'], step: r['step'] }));
          const got = topResults(search, query.join(' '), options, limit)!.map((r) => ({ id: r.id, score: r.score, terms: r.terms, kind: (r as Record<string, unknown>)['kind'], step: (r as Record<string, unknown>)['step'] }));
          expect(got).toEqual(expected);
        },
      ),
      { numRuns: 200 },
    );
  });
});
