// The compact log layout: fates as runs in context.projected (v2), the prompt recorded in model.requested only
// when it changes (v2), memory.compacted's tokens and placeholders' `replaces`, and v1 events read through upcasters.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  Agents,
  EVENT_VERSIONS,
  ScriptedModelClient,
  StructuredSummaryCompactPolicy,
  TypeAwareContextProjector,
  assistantMessage,
  createPromptResolver,
  defineTool,
  fatesOf,
  functionCall,
  openLevelLog,
  openMemoryLog,
  type ModelResult,
  type SessionEvent,
  type SessionEventOf,
} from '../../src/index.js';
import { GENESIS_HASH, chainHash } from '../../src/log/index.js';
import { eventKey, headKey } from '../../src/log/keys.js';
import { foldMemory, visibleEntries } from '../../src/memory/index.js';
import { checkSessionLaws } from '../../src/testing/runtime-laws.js';

const readAll = async (log: { read(id: string): AsyncIterable<SessionEvent> }, id: string): Promise<SessionEvent[]> => {
  const out: SessionEvent[] = [];
  for await (const e of log.read(id)) out.push(e);
  return out;
};
const ofType = <T extends SessionEvent['type']>(events: readonly SessionEvent[], type: T): SessionEventOf<T>[] =>
  events.filter((e): e is SessionEventOf<T> => e.type === type);

const final = (text: string): ModelResult => ({ outputText: text, items: [assistantMessage(text)] });
const call = (id: string, text: string): ModelResult => ({ items: [functionCall(id, 'echo', { text })] });
const echo = defineTool({
  name: 'echo',
  description: 'Echo the text',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => `echo: ${text} ${'x'.repeat(200)}`,
});

const agentOver = (log: Awaited<ReturnType<typeof openMemoryLog>>, model: ScriptedModelClient, systemPrompt = 'You are terse.') => {
  let n = 0;
  return Agents.react({
    modelClient: model,
    model: 'm',
    systemPrompt,
    tools: [echo],
    log,
    contextProjector: new TypeAwareContextProjector(),
    contextBudget: { maxTokens: 250, maxRecentToolResults: 2 },
    compactPolicy: new StructuredSummaryCompactPolicy({ maxItems: 8, maxRecentToolResults: 1 }, new TypeAwareContextProjector(), { compactAbove: 14 }),
    ids: () => `s-${++n}`,
  });
};

const script = (calls: number): ScriptedModelClient =>
  new ScriptedModelClient([...Array.from({ length: calls }, (_, i) => call(`c${i}`, `t${i}`)), final('done')]);

describe('context.projected v2', () => {
  it('records fates once, as runs over memory, that expand to the projection; append returns what read returns', async () => {
    const log = await openMemoryLog();
    const live: SessionEvent[] = [];
    const agent = Agents.react({
      ...agentOver(log, script(12)).options,
      onEvent: (n) => {
        if (n.type === 'EVENT') live.push(n.event);
      },
    });
    const session = await agent.newSession();
    await session.run('go');
    const events = await readAll(log, session.id);
    expect(live).toStrictEqual(events); // law 10, key order included
    const projected = ofType(events, 'context.projected');
    expect(projected.length).toBe(13);
    for (const event of projected) {
      expect(event.v).toBe(EVENT_VERSIONS['context.projected']);
      expect(Object.keys(event)).not.toContain('sent');
      expect(Object.keys(event)).not.toContain('fates');
      expect(Object.keys(event.report)).not.toContain('fates');
      // The runs cover exactly the memory the projection saw, and the non-dropped ones are what was sent.
      const before = events.filter((e) => e.seq < event.seq);
      const ids = visibleEntries(foldMemory(before)).map((e) => e.id);
      const fates = fatesOf(event, ids);
      expect(fates).toHaveLength(event.report.sourceItemCount);
      expect(fates.filter((f) => f.fate !== 'dropped')).toHaveLength(event.report.projectedItemCount);
    }
    expect(projected.some((e) => fatesOf(e).some((f) => f.fate === 'cleared'))).toBe(true);
    expect(projected.some((e) => fatesOf(e).some((f) => f.fate === 'dropped'))).toBe(true);
    expect(checkSessionLaws(events)).toEqual([]);
  });
});

describe('model.requested v2', () => {
  it('carries the prompt and tools on the first request and refers to it after; the resolver gives what the model got', async () => {
    const log = await openMemoryLog();
    const model = script(4);
    const session = await agentOver(log, model).newSession();
    await session.run('go');
    const requested = ofType(await readAll(log, session.id), 'model.requested');
    expect(requested[0]).toMatchObject({ systemPrompt: 'You are terse.' });
    expect(requested[0]!.tools).toHaveLength(1);
    expect(requested[0]!.promptSeq).toBeUndefined();
    for (const later of requested.slice(1)) {
      expect(later.promptSeq).toBe(requested[0]!.seq);
      expect('systemPrompt' in later || 'tools' in later).toBe(false);
    }
    const prompts = createPromptResolver();
    requested.forEach((event, i) => {
      const prompt = prompts.resolve(event);
      expect(prompt.systemPrompt).toBe(model.requests[i]!.systemPrompt);
      expect(prompt.tools).toEqual(model.requests[i]!.tools ?? []);
    });
  });

  it('records the prompt again after a resume and when it changes, and refers to it otherwise', async () => {
    const log = await openMemoryLog();
    const first = await agentOver(log, script(1)).newSession();
    await first.run('go');
    const resumed = await agentOver(log, script(1)).resumeSession(first.id);
    await resumed.run('again');
    const changed = await agentOver(log, script(1), 'You are verbose.').resumeSession(first.id);
    await changed.run('once more');
    const requested = ofType(await readAll(log, first.id), 'model.requested');
    expect(requested.map((r) => r.promptSeq ?? 'carried')).toEqual([
      'carried',
      requested[0]!.seq,
      'carried', // a resumed session carries it again on its first request
      requested[2]!.seq,
      'carried',
      requested[4]!.seq,
    ]);
    expect(requested[2]!.systemPrompt).toBe('You are terse.');
    expect(requested[4]!.systemPrompt).toBe('You are verbose.');
  });

  it('a reference to an event that carries no prompt is an error naming the seq', () => {
    const prompts = createPromptResolver();
    const event = { sessionId: 's', seq: 9, promptSeq: 3 } as unknown as SessionEventOf<'model.requested'>;
    expect(() => prompts.resolve(event)).toThrow('seq 9: promptSeq: model.requested refers to the prompt of seq 3');
  });
});

describe('memory.compacted v2', () => {
  it('records tokens before and after with the tokenizer, and placeholders name the item they replace', async () => {
    const log = await openMemoryLog();
    const session = await agentOver(log, script(12)).newSession();
    await session.run('go');
    const events = await readAll(log, session.id);
    const compactions = ofType(events, 'memory.compacted');
    expect(compactions.length).toBeGreaterThan(0);
    for (const c of compactions) {
      expect(c.tokens?.tokenizer).toBe('approx');
      expect(c.tokens!.after).toBeLessThan(c.tokens!.before);
      const placeholders = c.layout.filter((slot): slot is { item: never; replaces?: string } => 'item' in slot);
      expect(placeholders.length).toBeGreaterThan(0);
      for (const slot of placeholders) {
        expect(c.droppedIds).toContain(slot.replaces);
        const original = events.find((e) => e.seq === Number(slot.replaces!.split(':')[0]));
        expect(original?.type).toBe('tool.result');
        expect((slot.item as { call_id: string }).call_id).toBe((original as SessionEventOf<'tool.result'>).callId);
      }
    }
  });
});

describe('version 1 events read through the upcasters', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'context-ledger-v1-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads v1 context.projected (fates twice, sent) as runs and v1 model.requested as carrying its prompt; verify stays valid', async () => {
    const SESSION = 'old';
    const report = {
      sourceItemCount: 3, projectedItemCount: 2, droppedItemCount: 1, sourceApproxChars: 30, projectedApproxChars: 20,
      itemLimitApplied: true, characterLimitApplied: false, notes: ['maxItems applied: 2'],
      fates: [{ index: 2, fate: 'kept', rule: 'tail' }, { index: 0, fate: 'dropped', rule: 'maxItems' }, { index: 1, fate: 'cleared', rule: 'tier1' }],
    };
    const raw = [
      { type: 'context.projected', step: 1, projector: { name: 'DefaultContextProjector', settings: {} }, budget: { maxItems: 2 }, report,
        sent: ['2:0', '3:0'], fates: [{ id: '1:0', fate: 'dropped', rule: 'maxItems' }, { id: '2:0', fate: 'cleared', rule: 'tier1' }, { id: '3:0', fate: 'kept', rule: 'tail' }], digest: 'd' },
      { type: 'model.requested', step: 1, model: 'm', systemPrompt: 'sys', tools: [{ name: 't' }], itemCount: 2, digest: 'd' },
      { type: 'model.requested', step: 2, model: 'm', itemCount: 2, digest: 'd' },
    ];
    let prevHash = GENESIS_HASH;
    const stored = raw.map((fields, i) => {
      const event = { sessionId: SESSION, seq: i + 1, at: '2024-05-01T10:00:00.000Z', v: 1, ...fields, prevHash };
      const hash = chainHash(prevHash, event);
      prevHash = hash;
      return { ...event, hash };
    });
    const db = new ClassicLevel<string, string>(dir, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
    await db.open();
    await db.batch([
      ...stored.map((e) => ({ type: 'put' as const, key: eventKey(SESSION, e.seq), value: JSON.stringify(e) })),
      { type: 'put' as const, key: headKey(SESSION), value: JSON.stringify({ seq: 3, hash: prevHash }) },
    ]);
    await db.close();

    const log = await openLevelLog(dir);
    try {
      const [projected, first, second] = await readAll(log, SESSION);
      expect(projected).toMatchObject({ v: 4, fateRuns: 'dropped:maxItems cleared:tier1 kept:tail' });
      expect(Object.keys(projected!)).not.toContain('sent');
      expect(Object.keys((projected as SessionEventOf<'context.projected'>).report)).not.toContain('fates');
      expect(fatesOf(projected as SessionEventOf<'context.projected'>, ['1:0', '2:0', '3:0']).map((f) => f.id + '=' + f.fate)).toEqual([
        '1:0=dropped', '2:0=cleared', '3:0=kept',
      ]);
      expect(first).toMatchObject({ v: 3, systemPrompt: 'sys', tools: [{ name: 't' }] });
      expect(second).toMatchObject({ v: 3, tools: [] });
      expect(await log.verify(SESSION)).toEqual({ valid: true, eventCount: 3, firstBrokenSeq: null });
    } finally {
      await log.close();
    }
  });

  it('a v1 context.projected whose fates miss an item fails to decode with the seq and the reason', async () => {
    const SESSION = 'bad';
    const event = {
      sessionId: SESSION, seq: 1, at: '2024-05-01T10:00:00.000Z', v: 1, type: 'context.projected',
      projector: { name: 'DefaultContextProjector', settings: {} }, budget: {},
      report: { sourceItemCount: 2, projectedItemCount: 1, droppedItemCount: 1, sourceApproxChars: 1, projectedApproxChars: 1,
        itemLimitApplied: false, characterLimitApplied: false, notes: [], fates: [{ index: 0, fate: 'kept', rule: 'tail' }] },
      sent: [], fates: [], digest: 'd', prevHash: GENESIS_HASH,
    };
    const stored = { ...event, hash: chainHash(GENESIS_HASH, event) };
    const db = new ClassicLevel<string, string>(dir, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
    await db.open();
    await db.batch([
      { type: 'put', key: eventKey(SESSION, 1), value: JSON.stringify(stored) },
      { type: 'put', key: headKey(SESSION), value: JSON.stringify({ seq: 1, hash: stored.hash }) },
    ]);
    await db.close();
    const log = await openLevelLog(dir);
    try {
      await expect(readAll(log, SESSION)).rejects.toThrow(/seq 1|source item 1 has no fate/);
      await expect(readAll(log, SESSION)).rejects.toThrow(/source item 1 has no fate/);
    } finally {
      await log.close();
    }
  });
});
