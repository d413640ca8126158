// countTokensOnWrite (decision 0038): memory's items are counted with the session's tokenizer once stored, in the
// background (a bounded chunk per turn of the event loop), into the memo projections read; nothing reaches the log.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DefaultContextProjector, type Tokenizer } from '../../src/context/index.js';
import { itemTokenMemo } from '../../src/context/measure/items.js';
import { InvalidOptionsError } from '../../src/base/errors.js';
import { FactSummaryCompactPolicy } from '../../src/compact/index.js';
import { assistantMessage, functionCall, functionCallOutput, userMessage, type MemoryItem } from '../../src/items/index.js';
import { createMemoryLog, deterministicSalts, openMemoryLog } from '../../src/log/index.js';
import type { SessionEventLog } from '../../src/log/index.js';
import type { SessionEvent } from '../../src/events/index.js';
import { entryListCopyCount } from '../../src/memory/reducer.js';
import { ScriptedModelClient } from '../../src/model/index.js';
import { Agents, defineTool } from '../../src/runtime/index.js';
import { COUNT_CHUNK_CHARS } from '../../src/session/count-on-write.js';
import { openSession, type AgentSession, type OpenSessionOptions } from '../../src/session/index.js';
import { readAll } from '../replay/support.js';

const clock = (): string => '2026-01-01T00:00:00.000Z';

/** A word-counting tokenizer that records every text it is asked (a fresh object: a memo of its own). */
const spy = (name = 'spy', throwOn?: string): Tokenizer & { seen: string[] } => {
  const seen: string[] = [];
  return {
    name,
    seen,
    count: (text) => {
      seen.push(text);
      if (throwOn !== undefined && text.includes(throwOn)) throw new Error(`cannot count ${throwOn}`);
      return text.split(' ').length;
    },
  };
};

/** One turn of the event loop (the counter runs a chunk per turn). */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const steps = (from: number, count: number): MemoryItem[] =>
  Array.from({ length: count }, (_, j) => {
    const k = from + j;
    return [userMessage(`question ${k}`), functionCall(`c${k}`, 'grep', { pattern: `needle ${k}` }), assistantMessage(`answer ${k}`)];
  }).flat();

/** What a session goes through: input, output, a tool result, a summary, a compaction, a restore. */
const work = async (session: AgentSession): Promise<void> => {
  await session.memory.addUserInput('find the needle');
  await session.memory.addOutputItems([functionCall('call_1', 'grep', { pattern: 'needle' })]);
  await session.record([{ type: 'tool.result', callId: 'call_1', output: 'src/a.ts: needle', isError: false, name: 'grep' }]);
  await session.memory.addOutputItems(steps(0, 20));
  await session.memory.setSummary('The user looks for a needle.');
  await session.compact(new FactSummaryCompactPolicy({ maxItems: 6 }));
  await session.memory.addOutputItems(steps(20, 5));
  await session.memory.restore({ items: [userMessage('restored question'), ...steps(40, 3)], summary: 'restored summary' });
  await session.memory.addOutputItems(steps(50, 2));
};

const allKnown = (session: AgentSession, tokenizer: Tokenizer): boolean[] =>
  session.memory.getItems().map((item) => itemTokenMemo(tokenizer).known(item) !== undefined);

const open = (log: SessionEventLog, options: OpenSessionOptions): Promise<AgentSession> =>
  openSession(log, { id: 's', ids: () => 'unused', checkpointEvery: 0, ...options });

describe('countTokensOnWrite', () => {
  it('counts every item memory holds once the writes drain, after compaction and restore too, off the write itself', async () => {
    const tokenizer = spy();
    const session = await open(createMemoryLog({ clock }), { tokenizer, countTokensOnWrite: true });
    await session.memory.addUserInput('first question');
    // The write resolved before the background turn ran: counting is not part of it.
    expect(tokenizer.seen).toEqual([]);
    await session.tokensCounted();
    expect(tokenizer.seen).toEqual(['first question']);
    await work(session);
    await session.tokensCounted();
    const known = allKnown(session, tokenizer);
    expect(known.length).toBeGreaterThan(5);
    expect(known.every(Boolean)).toBe(true);
    // A rewind brings back memory as it was (new item objects, read from the event): counted too.
    await session.rewind({ toSeq: 6 });
    expect(allKnown(session, tokenizer).some(Boolean)).toBe(false);
    await session.tokensCounted();
    expect(allKnown(session, tokenizer).length).toBeGreaterThan(20);
    expect(allKnown(session, tokenizer).every(Boolean)).toBe(true);
    // The counts are the tokenizer's: the same as counting a fresh (unfrozen, so uncached) copy of each item.
    const fresh = spy('fresh');
    for (const item of session.memory.getItems()) {
      expect(itemTokenMemo(tokenizer).known(item)).toBe(itemTokenMemo(fresh).exact(structuredClone(item)));
    }
    await session.close();
  });

  it('without the option, nothing is counted by writing', async () => {
    const tokenizer = spy();
    const session = await open(createMemoryLog({ clock }), { tokenizer });
    await work(session);
    await session.tokensCounted();
    expect(allKnown(session, tokenizer).some(Boolean)).toBe(false);
    expect(tokenizer.seen).toEqual([]);
  });

  it('never counts an item twice: kept entries of a compaction and counted items are not asked again', async () => {
    const tokenizer = spy();
    const session = await open(createMemoryLog({ clock }), { tokenizer, countTokensOnWrite: true });
    await session.memory.addOutputItems(steps(0, 10));
    await session.tokensCounted();
    expect(tokenizer.seen).toHaveLength(40);
    await session.compact(new FactSummaryCompactPolicy({ maxItems: 6 }));
    await session.tokensCounted();
    // The kept entries went through the compaction counted: only the summary, a new item, is asked.
    const summary = session.memory.getSummary();
    expect(summary).toEqual(expect.any(String));
    expect(tokenizer.seen.slice(40)).toEqual([summary]);
    await session.memory.addOutputItems(steps(100, 2));
    await session.tokensCounted();
    expect(tokenizer.seen.slice(41)).toEqual(['question 100', 'grep', '{"pattern":"needle 100"}', 'answer 100', 'question 101', 'grep', '{"pattern":"needle 101"}', 'answer 101']);
    // Projections find every count: they ask the tokenizer nothing more.
    new DefaultContextProjector({ tokenizer }).project(session.memory.getItems(), { maxTokens: 10_000 });
    expect(tokenizer.seen).toHaveLength(49);
  });

  it('stores the same events, byte for byte, with and without it (a session and an agent run)', async () => {
    const storedTexts = async (log: SessionEventLog, id: string): Promise<string[]> => {
      const texts: string[] = [];
      for await (const text of log.readStored(id)) texts.push(text);
      return texts;
    };
    const record = async (countTokensOnWrite: boolean) => {
      const log = await openMemoryLog({ clock, salt: deterministicSalts('count-on-write') });
      const session = await open(log, { tokenizer: spy(), countTokensOnWrite, metadata: { task: 't' } });
      await work(session);
      await session.tokensCounted();
      return storedTexts(log, 's');
    };
    const off = await record(false);
    const on = await record(true);
    expect(on.length).toBeGreaterThanOrEqual(10);
    expect(on).toEqual(off);

    const run = async (countTokensOnWrite: boolean) => {
      const log = await openMemoryLog({ clock, salt: deterministicSalts('count-on-write') });
      const tokenizer = spy();
      let n = 0;
      const read = defineTool({ name: 'read', description: 'read', parameters: z.object({ path: z.string() }), execute: ({ path }) => `text of ${path}` });
      const agent = Agents.react({
        modelClient: new ScriptedModelClient([{ items: [functionCall('k1', 'read', { path: 'a.ts' })] }, { outputText: 'done', items: [assistantMessage('done')] }]),
        model: 'm',
        log,
        ids: () => `id-${++n}`,
        tools: [read],
        contextProjector: new DefaultContextProjector({ tokenizer }),
        contextBudget: { maxTokens: 1_000 },
        countTokensOnWrite,
      });
      const session = await agent.newSession();
      await session.run('read a.ts');
      await session.session.tokensCounted();
      // The last answer came after the last projection: only the background counted it.
      const known = allKnown(session.session, tokenizer);
      expect(known.at(-1)).toBe(countTokensOnWrite);
      if (countTokensOnWrite) expect(known.every(Boolean)).toBe(true);
      await session.close();
      // A model call's measured duration differs from run to run, and with it the digests and hashes (as in
      // test/runtime/step-writes.test.ts): everything else is compared.
      return (await readAll(log, session.id)).map((event) => {
        const { hash: _h, prevHash: _p, contentDigest: _c, durationMs: _d, ...rest } = event as SessionEvent & { contentDigest?: string; durationMs?: number };
        return rest;
      });
    };
    const agentOff = await run(false);
    const agentOn = await run(true);
    expect(agentOn.map((e) => e.type)).toContain('tool.result');
    expect(agentOn).toEqual(agentOff);
  });

  it('with checkpoints, changes only the checkpoint digests (they cover the counts saved) and the chain hashes after them', async () => {
    const record = async (countTokensOnWrite: boolean) => {
      const log = await openMemoryLog({ clock, salt: deterministicSalts('count-on-write') });
      const session = await open(log, { tokenizer: spy(), countTokensOnWrite, checkpointEvery: 4 });
      for (let k = 0; k < 6; k++) {
        await session.memory.addOutputItems(steps(k, 1));
        await session.tokensCounted();
      }
      return readAll(log, 's');
    };
    const strip = (events: SessionEvent[]) =>
      events.map((event) => {
        const { hash: _h, prevHash: _p, ...rest } = event;
        return rest.type === 'checkpoint.taken' ? { ...rest, digest: '(covers the counts)', contentDigest: '(of the digest too)' } : rest;
      });
    const off = await record(false);
    const on = await record(true);
    expect(strip(on)).toEqual(strip(off));
    const digests = (events: SessionEvent[]) => events.flatMap((e) => (e.type === 'checkpoint.taken' ? [e.digest] : []));
    expect(digests(on)).toHaveLength(2);
    expect(digests(on)[0]).not.toBe(digests(off)[0]);
  });

  it("gives a checkpoint every item's count, and a resume gives them back: nothing is counted for the first projection", async () => {
    const save = async (countTokensOnWrite: boolean) => {
      const log = createMemoryLog({ clock });
      const tokenizer = spy();
      const session = await open(log, { tokenizer, countTokensOnWrite });
      await work(session);
      await session.tokensCounted();
      await session.save();
      const resumedTokenizer = spy();
      const resumed = await open(log, { tokenizer: resumedTokenizer });
      return { resumed, resumedTokenizer, items: session.memory.getItems().length };
    };
    const on = await save(true);
    expect(on.resumed.opened.projectionFacts).toEqual({ items: on.items, tokenCounts: on.items });
    expect(allKnown(on.resumed, on.resumedTokenizer).every(Boolean)).toBe(true);
    new DefaultContextProjector({ tokenizer: on.resumedTokenizer }).project(on.resumed.memory.getItems(), { maxTokens: 10_000 });
    expect(on.resumedTokenizer.seen).toEqual([]);
    // Without the option (and no projection before the save), the checkpoint has no count to give.
    const off = await save(false);
    expect(off.resumed.opened.projectionFacts).toEqual({ items: off.items, tokenCounts: 0 });
  });

  it('counts, in the background, what a resumed session holds without a count (a tail after the checkpoint)', async () => {
    const log = createMemoryLog({ clock });
    const first = await open(log, { tokenizer: spy(), countTokensOnWrite: true });
    await first.memory.addOutputItems(steps(0, 5));
    await first.tokensCounted();
    await first.save();
    await first.memory.addOutputItems(steps(10, 5));
    await first.close();
    const tokenizer = spy();
    const resumed = await open(log, { tokenizer, countTokensOnWrite: true });
    expect(resumed.opened.projectionFacts).toEqual({ items: 15, tokenCounts: 15 });
    expect(allKnown(resumed, tokenizer).filter(Boolean)).toHaveLength(15);
    expect(allKnown(resumed, tokenizer)).toHaveLength(30);
    await resumed.tokensCounted();
    expect(allKnown(resumed, tokenizer).every(Boolean)).toBe(true);
    // Only the tail (15 items, 20 texts) was counted.
    expect(tokenizer.seen).toHaveLength(20);
    expect(tokenizer.seen.every((text) => text === 'grep' || /1[0-4]/.test(text))).toBe(true);
  });

  it('counts a huge batch over several turns of the event loop, each turn bounded', async () => {
    const turns: number[] = [];
    let now = 0;
    let ticking = true;
    const tick = (): void => {
      now += 1;
      if (ticking) setImmediate(tick);
    };
    const tokenizer: Tokenizer = { name: 'turns', count: (text) => (turns.push(now), Math.ceil(text.length / 4)) };
    const session = await open(createMemoryLog({ clock }), { tokenizer, countTokensOnWrite: true });
    const perItem = 4_096;
    const items = Array.from({ length: 20 }, (_, i) => userMessage(`${i}`.padEnd(perItem, 'x')));
    await session.memory.addOutputItems(items);
    setImmediate(tick);
    await session.tokensCounted();
    ticking = false;
    expect(turns).toHaveLength(20);
    const perTurn = new Map<number, number>();
    for (const at of turns) perTurn.set(at, (perTurn.get(at) ?? 0) + 1);
    // A turn ends once its texts reach COUNT_CHUNK_CHARS: 4 items of 4,096 characters, so 5 turns for 20 items.
    const most = Math.ceil(COUNT_CHUNK_CHARS / perItem);
    expect([...perTurn.values()]).toEqual(Array.from({ length: 20 / most }, () => most));
  });

  it('close() cancels what is pending: nothing is counted after it, and tokensCounted resolves', async () => {
    const tokenizer = spy();
    const session = await open(createMemoryLog({ clock }), { tokenizer, countTokensOnWrite: true });
    await session.memory.addOutputItems(Array.from({ length: 40 }, (_, i) => userMessage(`${i} ${'word '.repeat(1_000)}`)));
    await turn();
    const before = tokenizer.seen.length;
    expect(before).toBeGreaterThan(0);
    expect(before).toBeLessThan(40);
    const drained = session.tokensCounted();
    await session.close();
    await drained;
    for (let i = 0; i < 5; i++) await turn();
    expect(tokenizer.seen).toHaveLength(before);
    // Writes still work after close, and are not counted.
    await session.memory.addUserInput('after close');
    for (let i = 0; i < 3; i++) await turn();
    expect(tokenizer.seen).toHaveLength(before);
    await session.close();
  });

  it('a tokenizer that throws breaks no write and rejects nothing; the projection that needs the item throws it', async () => {
    const tokenizer = spy('fragile', 'boom');
    const session = await open(createMemoryLog({ clock }), { tokenizer, countTokensOnWrite: true });
    await session.memory.addOutputItems([userMessage('fine one'), userMessage('boom here'), userMessage('fine two')]);
    await session.tokensCounted();
    const memo = itemTokenMemo(tokenizer);
    expect(session.memory.getItems().map((item) => memo.known(item) !== undefined)).toEqual([true, false, true]);
    await session.memory.addUserInput('still writable');
    await session.tokensCounted();
    expect(() => new DefaultContextProjector({ tokenizer }).project(session.memory.getItems(), { maxTokens: 10_000 })).toThrow('cannot count boom');

    // A tokenizer that breaks its contract on every text: the same (the check's error is the projection's).
    const broken: Tokenizer = { name: 'broken', count: () => -1 };
    const other = await open(createMemoryLog({ clock }), { tokenizer: broken, countTokensOnWrite: true });
    await other.memory.addOutputItems(steps(0, 3));
    await other.tokensCounted();
    expect(() => new DefaultContextProjector({ tokenizer: broken }).project(other.memory.getItems(), { maxTokens: 10_000 })).toThrow(InvalidOptionsError);
  });

  it('builds memory only between writes: a burst of appends copies the entry list as often as without it', async () => {
    const copies = async (countTokensOnWrite: boolean): Promise<number> => {
      const tokenizer = spy();
      // Each append waits a turn of the event loop, as a disk's does: the counter's turns fall between them.
      const log = createMemoryLog({ clock });
      const slow = new Proxy(log, {
        get(target, key) {
          const value = Reflect.get(target, key) as unknown;
          if (key === 'append') {
            return async (...args: Parameters<SessionEventLog['append']>) => {
              await turn();
              return target.append(...args);
            };
          }
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
      const session = await open(slow, { tokenizer, countTokensOnWrite });
      await session.memory.addOutputItems(steps(0, 50));
      await session.tokensCounted();
      session.memory.state();
      const before = entryListCopyCount();
      // Twenty appends queued at once (as a step's tool results are, one after another without a read between), the
      // last of them one that changes nothing in memory (its turn finds memory stale and waits for the writes to end).
      await Promise.all([
        ...Array.from({ length: 20 }, (_, i) => session.memory.addOutputItems([assistantMessage(`burst ${i}`)])),
        session.record([{ type: 'run.started', runId: 'r1' }]),
      ]);
      await session.tokensCounted();
      session.memory.state();
      const made = entryListCopyCount() - before;
      if (countTokensOnWrite) expect(allKnown(session, tokenizer).every(Boolean)).toBe(true);
      return made;
    };
    const off = await copies(false);
    const on = await copies(true);
    expect(off).toBe(1);
    expect(on).toBe(off);
  });

  it('is refused without a tokenizer, or when not a boolean, with an error naming the option', async () => {
    const log = createMemoryLog({ clock });
    const refused = await open(log, { countTokensOnWrite: true }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(InvalidOptionsError);
    expect((refused as InvalidOptionsError).issues).toEqual([{ path: 'countTokensOnWrite', message: expect.stringContaining('needs the tokenizer option') }]);
    expect((refused as Error).message).toMatch(/^invalid options for openSession: countTokensOnWrite: needs the tokenizer option/);
    const wrongType = await open(log, { tokenizer: spy(), countTokensOnWrite: 'yes' as unknown as boolean }).catch((error: unknown) => error);
    expect(wrongType).toBeInstanceOf(InvalidOptionsError);
    expect((wrongType as InvalidOptionsError).issues[0]?.path).toBe('countTokensOnWrite');
    expect(await log.head('s')).toBe(0);
    // countTokensOnWrite: false needs nothing.
    await expect(open(log, { countTokensOnWrite: false })).resolves.toBeDefined();

    const projectorWithout = { project: new DefaultContextProjector().project, describe: () => ({ name: 'mine', settings: {} }) };
    const agentError = (() => {
      try {
        Agents.react({ modelClient: new ScriptedModelClient([]), model: 'm', contextProjector: projectorWithout as never, countTokensOnWrite: true });
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(agentError).toBeInstanceOf(InvalidOptionsError);
    expect((agentError as InvalidOptionsError).message).toMatch(/^invalid options for Agents\.react: countTokensOnWrite: needs a contextProjector with a tokenizer/);
    expect(() => Agents.react({ modelClient: new ScriptedModelClient([]), model: 'm', countTokensOnWrite: 1 as unknown as boolean })).toThrow(InvalidOptionsError);
  });
});
