import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  Agents,
  FactSummaryCompactPolicy,
  LlmCompactPolicy,
  RecallIndex,
  ScriptedModelClient,
  StructuredSummaryCompactPolicy,
  TypeAwareContextProjector,
  assistantMessage,
  auditItem,
  auditSession,
  compactTool,
  defineTool,
  functionCall,
  isInvalidOptionsError,
  memoryAt,
  openMemoryLog,
  recallHintLine,
  recallTool,
  replaySession,
  textOf,
  type ModelRequest,
  type ModelResult,
  type SessionEvent,
  type SessionEventLog,
} from '../../src/index.js';
import { checkSessionLaws } from '../../src/testing/runtime-laws.js';
import { checkFateLaw } from '../../src/replay/fate-law.js';

const readAll = async (log: SessionEventLog, id: string): Promise<SessionEvent[]> => {
  const out: SessionEvent[] = [];
  for await (const e of log.read(id)) out.push(e);
  return out;
};
const final = (text: string): ModelResult => ({ outputText: text, items: [assistantMessage(text)] });
const call = (id: string, name: string, args: object): ModelResult => ({ items: [functionCall(id, name, args)] });
const outputOf = (request: ModelRequest, callId: string): string => {
  const item = request.items.find((i) => i.type === 'function_call_output' && (i as { call_id?: string }).call_id === callId);
  return String((item as { output?: unknown } | undefined)?.output ?? '');
};
const requestText = (request: ModelRequest): string => JSON.stringify(request.items);

const files: Record<string, string> = {
  'a.txt': `alpha secret: the migration key is ZEBRA-42. ${'padding '.repeat(700)}tail of a`,
  'b.txt': 'beta notes: nothing here',
  'c.txt': 'gamma notes: the retry budget is seven',
};
const read = defineTool({
  name: 'read',
  description: 'Read a file',
  parameters: z.object({ path: z.string() }),
  execute: ({ path }) => files[path] ?? 'no such file',
});

const lawful = async (log: SessionEventLog, id: string): Promise<void> => {
  const events = await readAll(log, id);
  expect(checkSessionLaws(events)).toEqual([]);
  expect(checkFateLaw(events, await auditSession(log, id))).toEqual([]);
};

describe('recall', () => {
  it('a cleared result is read back by the call id its placeholder names, in pages, and audit shows the recall', async () => {
    const log = await openMemoryLog();
    let placeholder = '';
    const model = new ScriptedModelClient([
      call('c1', 'read', { path: 'a.txt' }),
      call('c2', 'read', { path: 'b.txt' }),
      (request) => {
        placeholder = outputOf(request, 'c1');
        const id = /\[tool result cleared: read\((.+)\)\]/.exec(placeholder)?.[1] ?? 'missing';
        return call('r1', 'recall', { id });
      },
      (request) => {
        const first = outputOf(request, 'r1');
        const offset = Number(/"offset": (\d+)/.exec(first)?.[1]);
        return call('r2', 'recall', { id: 'c1', offset });
      },
      final('done'),
    ]);
    const agent = Agents.react({
      modelClient: model,
      model: 'm',
      log,
      tools: [read, recallTool({ maxChars: 3000 })],
      contextProjector: new TypeAwareContextProjector(),
      contextBudget: { maxRecentToolResults: 1 },
    });
    const session = await agent.newSession();
    await session.run('read the files');
    expect(placeholder).toBe('[tool result cleared: read(c1)]');
    const events = await readAll(log, session.id);
    const results = events.filter((e): e is Extract<SessionEvent, { type: 'tool.result' }> => e.type === 'tool.result');
    const page1 = results.find((r) => r.callId === 'r1')!;
    const page2 = results.find((r) => r.callId === 'r2')!;
    expect(page1.isError).toBe(false);
    expect(page1.output).toContain('ZEBRA-42');
    expect(page1.output).toMatch(/characters 0–3000 of \d+; \d+ left/);
    expect(page2.output).toContain('tail of a');
    const original = files['a.txt']!;
    const body = (out: string): string => out.split('\n').slice(1).filter((l) => !l.startsWith('[characters')).join('\n');
    expect(body(page1.output) + body(page2.output)).toBe(original);
    const c1 = results.find((r) => r.callId === 'c1')!;
    const life = await auditItem(log, session.id, `${c1.seq}:0`);
    expect(life.recalled?.map((r) => r.step)).toEqual([3, 4]);
    await lawful(log, session.id);
    for (const mode of ['project', 'rerun'] as const) expect((await replaySession(log, session.id, { mode })).identical).toBe(true);
  });

  it('after a compaction and a resume, recall by item id, by call id and by query reaches the compacted items', async () => {
    const log = await openMemoryLog();
    const first = Agents.react({ modelClient: new ScriptedModelClient([call('c1', 'read', { path: 'c.txt' }), call('c2', 'read', { path: 'b.txt' }), final('read')]), model: 'm', log, tools: [read, recallTool()] });
    const s1 = await first.newSession();
    await s1.run('read c then b');
    await s1.session.compact(new StructuredSummaryCompactPolicy({ maxItems: 1 }));
    await s1.session.compact(new StructuredSummaryCompactPolicy({ maxItems: 1 }));
    const c1 = (await readAll(log, s1.id)).find((e) => e.type === 'tool.result' && e.callId === 'c1')!;
    expect(s1.memory.state().entries.some((e) => e.id === `${c1.seq}:0`)).toBe(false);

    const model = new ScriptedModelClient([
      call('r1', 'recall', { id: `${c1.seq}:0` }),
      call('r2', 'recall', { id: 'c1' }),
      call('r3', 'recall', { query: 'retry budget' }),
      call('r4', 'recall', { id: 'nope' }),
      call('r5', 'recall', { id: 'c1', query: 'x' }),
      call('r6', 'recall', { id: 'c1', offset: -1 }),
      call('r7', 'recall', {}),
      call('r8', 'recall', { id: '99999:0' }),
      final('ok'),
    ]);
    const again = Agents.react({ modelClient: model, model: 'm', log, tools: [read, recallTool()] });
    const s2 = await again.resumeSession(s1.id);
    await s2.run('what was the retry budget?');
    const results = new Map((await readAll(log, s1.id)).filter((e) => e.type === 'tool.result').map((e) => [(e as { callId: string }).callId, e as Extract<SessionEvent, { type: 'tool.result' }>]));
    expect(results.get('r1')!.output).toContain(files['c.txt']);
    expect(results.get('r1')!.output).toContain('no longer in memory');
    expect(results.get('r2')!.output).toContain(files['c.txt']);
    expect(results.get('r3')!.output).toContain(`${c1.seq}:0`);
    expect(results.get('r3')!.output).toContain('retry budget');
    expect(results.get('r4')!).toMatchObject({ isError: true });
    expect(results.get('r4')!.output).toContain('no tool call "nope"');
    expect(results.get('r5')!.output).toContain('exactly one of "id" or "query", got both');
    expect(results.get('r6')!.output).toContain('offset must be 0 or more');
    expect(results.get('r7')!.output).toContain('got neither');
    expect(results.get('r8')!.output).toContain('no item "99999:0"');
    for (const id of ['r5', 'r6', 'r7', 'r8']) expect(results.get(id)!.isError).toBe(true);
    await lawful(log, s1.id);
    for (const mode of ['project', 'rerun'] as const) expect(await replaySession(log, s1.id, { mode })).toMatchObject({ identical: true });
  });

  it('after an erase, recall by id gives the erasure notice (when, by whom, why) and a query no longer finds the item, though the index was built before', async () => {
    const log = await openMemoryLog();
    const first = Agents.react({
      modelClient: new ScriptedModelClient([call('c1', 'read', { path: 'c.txt' }), call('c2', 'read', { path: 'b.txt' }), call('q1', 'recall', { query: 'retry budget' }), final('read')]),
      model: 'm',
      log,
      tools: [read, recallTool()],
      contextProjector: new TypeAwareContextProjector(),
      contextBudget: { maxRecentToolResults: 0 },
    });
    const session = await first.newSession();
    await session.run('read c then b');
    const c1 = (await readAll(log, session.id)).find((e) => e.type === 'tool.result' && e.callId === 'c1')!;
    // the index of this log and session was built by q1, and found c1 then
    const q1 = (await readAll(log, session.id)).find((e) => e.type === 'tool.result' && e.callId === 'q1') as { output: string };
    expect(q1.output).toContain(`${c1.seq}:0`);
    // out of memory, so a query would find it if the index still held it
    await session.session.compact(new StructuredSummaryCompactPolicy({ maxItems: 1 }));
    expect(session.memory.state().entries.some((e) => e.id === `${c1.seq}:0`)).toBe(false);
    const erased = await log.erase(session.id, { itemIds: [`${c1.seq}:0`] }, { reason: 'retry budget is confidential', by: 'legal' });
    const model = new ScriptedModelClient([call('r1', 'recall', { id: `${c1.seq}:0` }), call('r2', 'recall', { id: 'c1' }), call('r3', 'recall', { query: 'seven' }), final('ok')]);
    const again = Agents.react({ modelClient: model, model: 'm', log, tools: [read, recallTool()], contextProjector: new TypeAwareContextProjector(), contextBudget: { maxRecentToolResults: 0 } });
    await (await again.resumeSession(session.id)).run('what was the retry budget?');
    const results = new Map((await readAll(log, session.id)).filter((e) => e.type === 'tool.result').map((e) => [(e as { callId: string }).callId, e as Extract<SessionEvent, { type: 'tool.result' }>]));
    const mark = (await readAll(log, session.id)).find((e) => e.seq === c1.seq)!.erased!;
    for (const id of ['r1', 'r2']) {
      const output = results.get(id)!.output;
      expect(output).toContain(`Its content was erased at ${mark.at} by legal: retry budget is confidential (event.erased at seq ${erased.seq})`);
      expect(output).not.toContain('seven');
    }
    // neither the item nor the recall answer that quoted it (a copy, scrubbed with it) is found
    expect(results.get('r3')!.output).toBe('No item you no longer see as it was matches "seven".');
    // an index built after the erase never holds the item
    const fresh = new RecallIndex(log, session.id);
    await fresh.catchUp();
    expect(fresh.has(`${c1.seq}:0`)).toBe(false);
    expect(fresh.search('retry budget', new Set(), 5).map((h) => h.id)).not.toContain(`${c1.seq}:0`);
  });

  it('a query skips what the model sees as it was: items kept by the last projection', async () => {
    const log = await openMemoryLog();
    const model = new ScriptedModelClient([call('c1', 'read', { path: 'c.txt' }), call('r1', 'recall', { query: 'retry budget' }), final('ok')]);
    const agent = Agents.react({ modelClient: model, model: 'm', log, tools: [read, recallTool()] });
    const session = await agent.newSession();
    await session.run('go');
    const r1 = (await readAll(log, session.id)).find((e) => e.type === 'tool.result' && e.callId === 'r1') as { output: string };
    expect(r1.output).toBe('No item you no longer see as it was matches "retry budget".');
  });
});

describe('working memory', () => {
  it('edits are memory.noted events; the blocks ride pinned after the summary; refusals write nothing; compaction keeps them, clear removes them', async () => {
    const log = await openMemoryLog();
    const model = new ScriptedModelClient([
      call('w1', 'working_memory', { operation: 'set', block: 'plan', text: '1. read a' }),
      call('w2', 'working_memory', { operation: 'append', block: 'plan', text: '\n2. read b' }),
      call('w3', 'working_memory', { operation: 'replace', block: 'plan', old: 'read a', new: 'read A' }),
      call('w4', 'working_memory', { operation: 'replace', block: 'plan', old: 'absent', new: 'x' }),
      call('w5', 'working_memory', { operation: 'set', block: 'plan', text: 'x'.repeat(41) }),
      call('w6', 'working_memory', { operation: 'set', block: 'nope', text: 'x' }),
      final('noted'),
    ]);
    const agent = Agents.react({
      modelClient: model,
      model: 'm',
      log,
      contextBudget: { maxItems: 3 },
      workingMemory: { blocks: [{ name: 'plan', maxChars: 40, description: 'the steps' }, { name: 'facts', maxChars: 100, initial: 'repo: x' }] },
    });
    const session = await agent.newSession();
    await session.run('plan it');
    const events = await readAll(log, session.id);
    const noted = events.filter((e): e is Extract<SessionEvent, { type: 'memory.noted' }> => e.type === 'memory.noted');
    expect(noted.map((n) => [n.block, n.text])).toEqual([
      ['plan', ''],
      ['facts', 'repo: x'],
      ['plan', '1. read a'],
      ['plan', '1. read a\n2. read b'],
      ['plan', '1. read A\n2. read b'],
    ]);
    const errors = events.filter((e) => e.type === 'tool.result' && e.isError).map((e) => (e as { output: string }).output);
    expect(errors).toHaveLength(3);
    expect(errors[0]).toContain('does not contain the old text');
    expect(errors[1]).toContain('over its limit of 40');
    expect(errors[2]).toContain('no block "nope"');
    // Every request carries the blocks, first (no summary yet), though maxItems is 3.
    for (const request of model.requests) expect(textOf(request.items[0]!)).toContain('Working memory');
    expect(textOf(model.requests.at(-1)!.items[0]!)).toContain('1. read A\n2. read b');
    const state = session.memory.state();
    expect(state.blocks.map((b) => b.text)).toEqual(['1. read A\n2. read b', 'repo: x']);

    await session.session.compact(new StructuredSummaryCompactPolicy({ maxItems: 1 }));
    const entries = session.memory.getEntries();
    expect(entries[0]!.id).toMatch(/:summary$/);
    expect(entries[1]!.id).toBe(state.blocksId);
    const audit = await auditSession(log, session.id);
    expect(audit.notes.map((n) => n.block)).toEqual(['plan', 'facts', 'plan', 'plan', 'plan']);
    expect(audit.steps.at(-1)!.workingMemory?.blocks.map((b) => b.chars)).toEqual([19, 7]);
    await lawful(log, session.id);
    for (const mode of ['project', 'rerun'] as const) expect((await replaySession(log, session.id, { mode })).identical).toBe(true);

    await session.memory.clear();
    expect(session.memory.state().blocks).toEqual([]);
    expect((await memoryAt(log, session.id, { seq: await log.head(session.id) })).memory.blocks).toEqual([]);
  });
});

describe('compaction on request', () => {
  it('the compact tool schedules a compaction at the top of the next step; the LLM policy gets the focus; reason is requested', async () => {
    const log = await openMemoryLog();
    const summarizer = new ScriptedModelClient([{ outputText: '{"goal":"g","completed":["read c"]}', items: [] }]);
    const model = new ScriptedModelClient([
      call('c1', 'read', { path: 'c.txt' }),
      call('c2', 'read', { path: 'b.txt' }),
      call('k1', 'compact', { focus: 'keep the retry budget' }),
      final('done'),
    ]);
    const agent = Agents.react({
      modelClient: model,
      model: 'm',
      log,
      tools: [read, compactTool(), recallTool()],
      compactPolicy: new LlmCompactPolicy(summarizer, 's', 2, { compactAbove: 1000 }),
    });
    const session = await agent.newSession();
    await session.run('go');
    const events = await readAll(log, session.id);
    const compacted = events.find((e): e is Extract<SessionEvent, { type: 'memory.compacted' }> => e.type === 'memory.compacted')!;
    expect(compacted.reason).toEqual({ kind: 'requested', instructions: 'keep the retry budget' });
    expect(compacted.step).toBe(4);
    const requested = events.find((e) => e.type === 'compaction.requested')!;
    const nextModelCall = events.find((e) => e.type === 'model.requested' && e.seq > requested.seq)!;
    expect(compacted.seq).toBeLessThan(nextModelCall.seq);
    expect(textOf(summarizer.requests[0]!.items[0]!)).toContain('Focus of this summary (from the agent or its host):\nkeep the retry budget');
    expect(compacted.summary).toContain('recall({ query }) searches');
    expect(session.session.state().run.requestedCompaction).toBeUndefined();
    await lawful(log, session.id);
    for (const mode of ['project', 'rerun'] as const) expect((await replaySession(log, session.id, { mode })).identical).toBe(true);
  });

  it('FactSummaryCompactPolicy ends its summary with the recall hint when the agent has a recall tool; both replays are identical', async () => {
    const log = await openMemoryLog();
    const model = new ScriptedModelClient([call('c1', 'read', { path: 'c.txt' }), call('c2', 'read', { path: 'b.txt' }), call('c3', 'read', { path: 'c.txt' }), final('done')]);
    const agent = Agents.react({ modelClient: model, model: 'm', log, tools: [read, recallTool({ name: 'lookup' })], compactPolicy: new FactSummaryCompactPolicy({ maxItems: 2 }) });
    const session = await agent.newSession();
    await session.run('go');
    const compacted = (await readAll(log, session.id)).filter((e): e is Extract<SessionEvent, { type: 'memory.compacted' }> => e.type === 'memory.compacted');
    expect(compacted.length).toBeGreaterThan(0);
    for (const event of compacted) expect(event.summary?.split('\n').at(-1)).toBe(recallHintLine('lookup'));
    for (const mode of ['project', 'rerun'] as const) expect((await replaySession(log, session.id, { mode })).identical).toBe(true);
  });

  it('session.compact(policy, { instructions }) records them as a requested reason; without a policy the tool is an error result', async () => {
    const log = await openMemoryLog();
    const agent = Agents.react({ modelClient: new ScriptedModelClient([call('k1', 'compact', {}), final('x')]), model: 'm', log, tools: [compactTool()] });
    const session = await agent.newSession();
    await session.run('go');
    const events = await readAll(log, session.id);
    expect(events.find((e) => e.type === 'tool.result' && e.callId === 'k1')).toMatchObject({ isError: true });
    expect(events.some((e) => e.type === 'compaction.requested')).toBe(false);
    await session.session.compact(new StructuredSummaryCompactPolicy({ maxItems: 1 }), { instructions: 'focus on x' });
    const compacted = (await readAll(log, session.id)).find((e) => e.type === 'memory.compacted') as { reason?: unknown };
    expect(compacted.reason).toEqual({ kind: 'requested', instructions: 'focus on x' });
  });
});

describe('rewind', () => {
  it('rewinds across a compaction and a resume; memory is memoryAt(toSeq); audit marks the rewound steps; both replays are identical', async () => {
    const log = await openMemoryLog();
    const script = (): ModelResult[] => [call('c1', 'read', { path: 'c.txt' }), call('w1', 'working_memory', { operation: 'set', block: 'plan', text: 'v1' }), final('one')];
    const agent = Agents.react({
      modelClient: new ScriptedModelClient([...script(), call('c2', 'read', { path: 'b.txt' }), final('two')]),
      model: 'm',
      log,
      tools: [read, recallTool()],
      workingMemory: { blocks: [{ name: 'plan', maxChars: 100 }] },
    });
    const session = await agent.newSession();
    await session.run('first');
    const afterFirst = await log.head(session.id);
    await session.session.compact(new StructuredSummaryCompactPolicy({ maxItems: 1 }));
    await session.run('second');
    await expect(session.rewind({ toSeq: 0 })).rejects.toThrow(/toSeq/);
    await expect(session.rewind({ toStep: 99 })).rejects.toThrow(/never started step 99/);
    // A seq and a step together are refused by name, as memoryAt and forkSession refuse them; nothing is written.
    const headBefore = await log.head(session.id);
    const both = await session.rewind({ toSeq: 3, toStep: 1 } as never).catch((e: unknown) => e);
    expect(isInvalidOptionsError(both)).toBe(true);
    expect((both as Error).message).toMatch(/rewind.*\{ toSeq \} or \{ toStep \}, not both/);
    expect(await log.head(session.id)).toBe(headBefore);

    const resumed = await Agents.react({ modelClient: new ScriptedModelClient([call('r1', 'recall', { id: 'c2' }), final('three')]), model: 'm', log, tools: [read, recallTool()], workingMemory: { blocks: [{ name: 'plan', maxChars: 100 }] } }).resumeSession(session.id);
    const rewound = await resumed.rewind({ toSeq: afterFirst }, { reason: 'undo the second request' });
    expect(rewound.toSeq).toBe(afterFirst);
    const at = await memoryAt(log, session.id, { seq: afterFirst });
    expect(JSON.parse(JSON.stringify(resumed.memory.state()))).toEqual(JSON.parse(JSON.stringify(at.memory)));
    expect(resumed.memory.state().blocks.map((b) => b.text)).toEqual(['v1']);
    expect(resumed.memory.state().summary).toBeNull();
    await resumed.run('third');
    const events = await readAll(log, session.id);
    const r1 = events.find((e) => e.type === 'tool.result' && e.callId === 'r1') as { output: string; isError: boolean };
    expect(r1.isError).toBe(false);
    expect(r1.output).toContain(files['b.txt']);
    const audit = await auditSession(log, session.id);
    expect(audit.rewinds).toHaveLength(1);
    expect(audit.steps.filter((s) => s.rewound).map((s) => s.step)).toEqual(audit.rewinds[0]!.steps);
    expect(audit.rewinds[0]!.steps.length).toBeGreaterThan(0);
    const steps = events.filter((e) => e.type === 'step.started').map((e) => (e as { step: number }).step);
    expect(new Set(steps).size).toBe(steps.length);
    await lawful(log, session.id);
    for (const mode of ['project', 'rerun'] as const) {
      const replay = await replaySession(log, session.id, { mode });
      expect(replay.firstDivergence).toBeUndefined();
      expect(replay.identical).toBe(true);
    }
  });
});
