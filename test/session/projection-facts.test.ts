// Checkpoints save the projection facts of memory's items, vouched for by the checkpoint's digest; a resume attaches
// them by position, so its first projection measures nothing already measured and equals the one before the save.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DefaultContextProjector, TypeAwareContextProjector, openAiTokenizer } from '../../src/context/index.js';
import type { ContextBudget, ContextProjection, ContextProjector, ProjectionFacts, Tokenizer } from '../../src/context/index.js';
import { itemTokenMemo } from '../../src/context/measure/items.js';
import { assistantMessage, functionCall, functionCallOutput, userMessage } from '../../src/items/index.js';
import type { MemoryItem } from '../../src/items/index.js';
import { openLevelLog, openMemoryLog } from '../../src/log/index.js';
import type { SessionEventLog } from '../../src/log/index.js';
import { ScriptedModelClient } from '../../src/model/index.js';
import { Agents, defineTool } from '../../src/runtime/index.js';
import { checkpointEventFor, openSession, writeCheckpoint } from '../../src/session/index.js';
import type { AgentSession } from '../../src/session/index.js';

const spy = (name = 'spy'): Tokenizer & { seen: string[] } => {
  const seen: string[] = [];
  return { name, seen, count: (text) => (seen.push(text), text.split(' ').length) };
};

const steps = (from: number, count: number): MemoryItem[] =>
  Array.from({ length: count }, (_, j) => {
    const k = from + j;
    return [
      userMessage(`question ${k} about the code`),
      functionCall(`c${k}`, 'grep', { pattern: `needle ${k}` }),
      functionCallOutput(`c${k}`, `match ${k}: ${'word '.repeat(k % 17)}`),
      assistantMessage(`answer ${k}`),
    ];
  }).flat();

const plain = (projection: ContextProjection): unknown => JSON.parse(JSON.stringify(projection));
const budget: ContextBudget = { maxTokens: 300, pinnedPrefixItems: 1, maxRecentToolResults: 6 };

/** A session as an agent loop leaves it: memory written, projected a few times, saved. */
const savedSession = async (log: SessionEventLog, tokenizer: Tokenizer | undefined, projector: ContextProjector, id = 's') => {
  const session = await openSession(log, { id, ...(tokenizer ? { tokenizer } : {}) });
  await session.memory.setSummary('Earlier: the user asked for a grep tool.');
  for (let k = 0; k < 40; k += 10) await session.memory.addOutputItems(steps(k, 10));
  projector.project(session.memory.getItems(), budget);
  const before = projector.project(session.memory.getItems(), budget);
  await session.save();
  return { session, before };
};

const storedFacts = async (log: SessionEventLog, id: string): Promise<{ seq: number; hash: string; data: { projection: ProjectionFacts } & Record<string, unknown> }> => {
  const checkpoint = await log.latestCheckpoint(id);
  if (!checkpoint) throw new Error('no checkpoint');
  return checkpoint as { seq: number; hash: string; data: { projection: ProjectionFacts } & Record<string, unknown> };
};

describe('checkpoints with projection facts', () => {
  it('give a resumed session its counts: the first projection counts nothing new and equals the one before the save', async () => {
    const log = await openMemoryLog();
    const tokenizer = spy();
    const projector = new TypeAwareContextProjector({ tokenizer });
    const { before } = await savedSession(log, tokenizer, projector);
    const { seq, data } = await storedFacts(log, 's');
    const saved = data.projection.tokens!.exact.filter((count) => count > 0).length;
    expect(data.projection).toMatchObject({ version: 1, items: 161, tokens: { tokenizer: 'spy' } });
    expect(saved).toBeGreaterThan(0);

    const counted = tokenizer.seen.length;
    const resumed = await openSession(log, { id: 's', tokenizer });
    expect(resumed.opened).toEqual({ from: { checkpointSeq: seq }, eventsFolded: 0, projectionFacts: { items: 161, tokenCounts: saved } });
    const after = projector.project(resumed.memory.getItems(), budget);
    expect(plain(after)).toEqual(plain(before));
    // Only the Tier-1 placeholders, new objects made from the restored items, are counted.
    expect(tokenizer.seen.slice(counted).every((text) => text.startsWith('[tool result cleared: grep('))).toBe(true);
    await log.close();
  });

  it('on LevelDB, through a tail of later events and a compaction-free append, project as a fresh fold does', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cl-facts-'));
    try {
      const tokenizer = openAiTokenizer();
      const projector = new DefaultContextProjector({ tokenizer });
      let log = await openLevelLog(dir);
      const { session } = await savedSession(log, tokenizer, projector);
      await session.memory.addOutputItems(steps(40, 3));
      await session.memory.addUserInput('and now?');
      await log.close();

      log = await openLevelLog(dir);
      const resumed = await openSession(log, { id: 's', tokenizer });
      expect(resumed.opened.eventsFolded).toBe(2);
      expect(resumed.opened.projectionFacts).toMatchObject({ items: 161 });
      for (const limits of [budget, { maxTokens: 2_000, pinnedPrefixItems: 1 }, { maxItems: 30, evictionStep: 5 }]) {
        const fresh = JSON.parse(JSON.stringify(resumed.memory.getItems())) as MemoryItem[];
        expect(plain(projector.project(resumed.memory.getItems(), limits))).toEqual(plain(projector.project(fresh, limits)));
      }
      await log.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('survive resume, save and resume again without a projection in between (facts of facts)', async () => {
    const log = await openMemoryLog();
    const tokenizer = spy();
    const projector = new TypeAwareContextProjector({ tokenizer });
    const { before } = await savedSession(log, tokenizer, projector);
    const first = (await storedFacts(log, 's')).data.projection;
    const resumed = await openSession(log, { id: 's', tokenizer });
    await resumed.memory.addOutputItems([functionCall('late', 'grep', { pattern: 'x' })]);
    await resumed.save();
    const second = (await storedFacts(log, 's')).data.projection;
    // The same facts for the restored items, and the new call (unanswered, its characters measured for the save).
    expect(second.items).toBe(first.items + 1);
    expect(second.chars.slice(0, first.items)).toEqual(first.chars);
    expect(second.groups).toEqual([...first.groups, 0]);
    expect(second.unanswered).toEqual([...first.unanswered, ['late', first.items]]);
    expect(second.tokens!.exact).toEqual([...first.tokens!.exact, 0]);
    expect(second.tokens!.atLeast).toEqual([...first.tokens!.atLeast, 0]);
    const counted = tokenizer.seen.length;
    const again = await openSession(log, { id: 's', tokenizer });
    expect(again.opened.projectionFacts).toEqual({ items: first.items + 1, tokenCounts: first.tokens!.exact.filter((c) => c > 0).length });
    const items = again.memory.getItems();
    const withoutLate = projector.project(items.slice(0, -1), budget);
    expect(plain(withoutLate)).toEqual(plain(before));
    expect(tokenizer.seen.slice(counted).every((text) => text.startsWith('[tool result cleared: grep('))).toBe(true);
    await log.close();
  });

  it('refuse a checkpoint whose saved count was changed: the digest covers it, the resume falls back and counts afresh', async () => {
    const log = await openMemoryLog();
    const tokenizer = spy();
    const projector = new DefaultContextProjector({ tokenizer });
    const { before } = await savedSession(log, tokenizer, projector);
    const checkpoint = await storedFacts(log, 's');
    const exact = [...checkpoint.data.projection.tokens!.exact];
    // An entry's count (index 0 is the summary message, one object shared by every memory with that summary).
    const at = exact.findIndex((count, i) => i > 0 && count > 0);
    exact[at] = (exact[at] as number) + 50;
    const tampered = { ...checkpoint.data, projection: { ...checkpoint.data.projection, tokens: { ...checkpoint.data.projection.tokens!, exact } } };
    await log.putCheckpoint('s', { seq: checkpoint.seq, hash: checkpoint.hash, data: tampered });

    const resumed = await openSession(log, { id: 's', tokenizer });
    expect(resumed.opened.from).toBe('full-fold');
    expect(resumed.opened.rejectedCheckpoint).toBe(
      `checkpoint at seq ${checkpoint.seq} does not match the digest recorded in the chain (its state and projection facts)`,
    );
    expect(resumed.opened.projectionFacts).toBeUndefined();
    const item = resumed.memory.getItems()[at] as MemoryItem;
    expect(itemTokenMemo(tokenizer).known(item)).toBeUndefined();
    expect(plain(projector.project(resumed.memory.getItems(), budget))).toEqual(plain(before));
    await log.close();
  });

  it('ignore facts the digest vouches for that do not describe the memory, naming the session and seq', async () => {
    const log = await openMemoryLog();
    const tokenizer = spy();
    const projector = new DefaultContextProjector({ tokenizer });
    const { session, before } = await savedSession(log, tokenizer, projector, 'bug');
    const state = session.state();
    // A writer's bug: facts of another list of items, digested and stored with this state.
    const wrong = { ...(await storedFacts(log, 'bug')).data.projection, items: 3, chars: [10, 20, 30], groups: [0, 0, 0], tokenLowerBounds: [0, 0, 0] };
    delete (wrong as { tokens?: unknown }).tokens;
    const [taken] = await log.append('bug', [checkpointEventFor(state, 10_000, wrong as ProjectionFacts)], { expectedSeq: await log.head('bug') });
    await writeCheckpoint(log, 'bug', taken!, state, { projection: wrong as ProjectionFacts });

    const resumed = await openSession(log, { id: 'bug', tokenizer });
    expect(resumed.opened).toEqual({
      from: { checkpointSeq: taken!.seq },
      eventsFolded: 0,
      projectionFacts: { items: 0, tokenCounts: 0, ignored: `session "bug", checkpoint at seq ${taken!.seq}: the facts describe 3 items, memory has 161` },
    });
    expect(plain(projector.project(resumed.memory.getItems(), budget))).toEqual(plain(before));

    const invalid = { ...wrong, chars: [10, 20] };
    const [again] = await log.append('bug', [checkpointEventFor(state, 10_000, invalid as ProjectionFacts)], { expectedSeq: await log.head('bug') });
    await writeCheckpoint(log, 'bug', again!, state, { projection: invalid as ProjectionFacts });
    expect((await openSession(log, { id: 'bug', tokenizer })).opened.projectionFacts).toEqual({
      items: 0,
      tokenCounts: 0,
      ignored: `session "bug", checkpoint at seq ${again!.seq}: not valid projection facts (chars: has 2 entries for 3 items)`,
    });
    await log.close();
  });

  it('are optional: a format-2 checkpoint written without them resumes as before', async () => {
    const log = await openMemoryLog();
    const projector = new DefaultContextProjector();
    const session = await openSession(log, { id: 'old', checkpointEvery: 0 });
    await session.memory.addOutputItems(steps(0, 5));
    const before = projector.project(session.memory.getItems(), { maxItems: 7 });
    const [taken] = await log.append('old', [checkpointEventFor(session.state(), 0)], { expectedSeq: await log.head('old') });
    await writeCheckpoint(log, 'old', taken!, session.state());
    expect(Object.keys((await log.latestCheckpoint('old'))!.data as object)).toEqual(['format', 'state']);

    const resumed = await openSession(log, { id: 'old', tokenizer: spy() });
    expect(resumed.opened).toEqual({ from: { checkpointSeq: taken!.seq }, eventsFolded: 0 });
    expect(plain(projector.project(resumed.memory.getItems(), { maxItems: 7 }))).toEqual(plain(before));
    await log.close();
  });

  it('without a tokenizer save characters and pairing; a resume with another tokenizer says why it got no counts', async () => {
    const log = await openMemoryLog();
    const projector = new DefaultContextProjector();
    await savedSession(log, undefined, projector, 'bare');
    expect((await storedFacts(log, 'bare')).data.projection.tokens).toBeUndefined();
    expect((await openSession(log, { id: 'bare', tokenizer: spy() })).opened.projectionFacts).toEqual({ items: 161, tokenCounts: 0 });

    const words = spy('words');
    const { session } = await savedSession(log, words, new DefaultContextProjector({ tokenizer: words }), 'named');
    const seq = await log.head('named');
    void session;
    expect((await openSession(log, { id: 'named', tokenizer: spy('other') })).opened.projectionFacts).toEqual({
      items: 161,
      tokenCounts: 0,
      ignored: `session "named", checkpoint at seq ${seq}: token counts were made with "words", not "other"`,
    });
    await log.close();
  });

  it('refuse a tokenizer option that is not a tokenizer', async () => {
    const log = await openMemoryLog();
    await expect(openSession(log, { tokenizer: { name: '', count: () => 1 } })).rejects.toThrow(
      'invalid options for openSession: tokenizer: expected a Tokenizer (an object with a non-empty name and count())',
    );
    await expect(openSession(log, { tokenizer: 'o200k' as unknown as Tokenizer })).rejects.toThrow('tokenizer: expected a Tokenizer');
    await log.close();
  });

  it("are saved and given back by an agent with its projector's tokenizer", async () => {
    const log = await openMemoryLog();
    const tokenizer = spy();
    const echo = defineTool({ name: 'echo', description: 'Echo', parameters: z.object({ text: z.string() }), execute: ({ text }) => text });
    const agent = (answers: ConstructorParameters<typeof ScriptedModelClient>[0]) =>
      Agents.react({
        modelClient: new ScriptedModelClient(answers),
        model: 'm',
        tools: [echo],
        log,
        contextProjector: new DefaultContextProjector({ tokenizer }),
        contextBudget: { maxTokens: 200 },
      });
    const first = await agent([{ items: [functionCall('c1', 'echo', { text: 'hi' })] }, { outputText: 'done', items: [assistantMessage('done')] }]).newSession();
    await first.run('say hi');
    await first.session.save();
    const resumed = await agent([{ outputText: 'ok', items: [assistantMessage('ok')] }]).resumeSession(first.id);
    const opened: AgentSession['opened'] = resumed.session.opened;
    // Memory: the task, the call, its output, the answer; the answer came after the last projection, so it has no count.
    expect(opened.projectionFacts).toEqual({ items: 4, tokenCounts: 3 });
    expect(resumed.session.opened.from).toEqual({ checkpointSeq: await log.head(first.id) });
    await log.close();
  });
});
