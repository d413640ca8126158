// Compaction by tokens and usage: the triggers, keepTokens, no compaction loop, retained user turns, FactSummaryCompactPolicy, rebuilding.
import { describe, expect, it } from 'vitest';
import {
  FactSummaryCompactPolicy,
  LlmCompactPolicy,
  StructuredSummaryCompactPolicy,
  compactPolicyFromDescription,
  compactTriggerOf,
  compactionCut,
  type CompactContext,
  type CompactPolicy,
} from '../../src/compact/index.js';
import { approxTokenizer, itemTokenCount } from '../../src/context/index.js';
import type { MemorySnapshot, SessionEvent, SessionEventOf } from '../../src/events/index.js';
import { assistantMessage, functionCall, functionCallOutput, systemMessage, userMessage, type MemoryItem } from '../../src/items/index.js';
import { openMemoryLog, type SessionEventLog } from '../../src/log/index.js';
import { ScriptedModelClient, type ModelClient, type ModelResult } from '../../src/model/index.js';
import { Agents } from '../../src/runtime/index.js';
import { replaySession } from '../../src/replay/index.js';
import { memoryTokenTracker, openSession } from '../../src/session/index.js';

const readAll = async (log: SessionEventLog, id: string): Promise<SessionEvent[]> => {
  const out: SessionEvent[] = [];
  for await (const e of log.read(id)) out.push(e);
  return out;
};
const compactions = (events: readonly SessionEvent[]) => events.filter((e): e is SessionEventOf<'memory.compacted'> => e.type === 'memory.compacted');
const tokensOf = (items: readonly MemoryItem[]): number => items.reduce((n, i) => n + itemTokenCount(i, approxTokenizer), 0);

/** A model that calls a `noop` tool `steps` times, then answers; each answer reports `inputTokens`. */
const looping = (steps: number, inputTokens?: number): ModelClient => {
  let n = 0;
  return {
    async create(): Promise<ModelResult> {
      n += 1;
      const usage = inputTokens !== undefined ? { usage: { inputTokens } } : {};
      if (n > steps) return { outputText: 'done', items: [assistantMessage('done')], ...usage };
      return { items: [functionCall(`c${n}`, 'noop', {})], ...usage };
    },
  };
};

const runLoop = async (policy: CompactPolicy, first: string, model: ModelClient) => {
  const log = await openMemoryLog();
  let n = 0;
  const agent = Agents.react({
    modelClient: model,
    model: 'm',
    log,
    ids: () => `id-${++n}`,
    maxSteps: 60,
    compactPolicy: policy,
    tools: [{ name: 'noop', description: 'does nothing', parameters: (await import('zod')).z.object({}), execute: () => 'ok' }],
  });
  const session = await agent.newSession();
  await session.run(first);
  return { log, events: await readAll(log, session.id), id: session.id };
};

describe('token and usage triggers', () => {
  it('one 40k-token tool output triggers a compaction by tokens though the item count is low', () => {
    const items = [userMessage('fix it'), functionCall('c1', 'read', {}), functionCallOutput('c1', 'x'.repeat(160_000)), assistantMessage('read it')];
    const reason = compactTriggerOf({ compactAbove: 100, compactAboveTokens: 10_000, keepTokens: 2_000 }, { items, summary: null }, { tokens: tokensOf(items) });
    expect(reason).toEqual({ kind: 'tokens', value: tokensOf(items), threshold: 10_000 });
    expect(compactTriggerOf({ compactAbove: 100 }, { items, summary: null }, { tokens: tokensOf(items) })).toBeUndefined();
    // The one-argument call (an old caller) counts approximately.
    expect(new FactSummaryCompactPolicy({ maxItems: 2, compactAbove: 100, compactAboveTokens: 10_000 }).shouldCompact({ items, summary: null })).toBe(true);
  });

  it('usage: the reported input tokens above the threshold trigger kind usage', () => {
    const items = [userMessage('a'), assistantMessage('b')];
    expect(compactTriggerOf({ compactAboveTokens: 1000 }, { items, summary: null }, { tokens: 10, lastInputTokens: 5000 })).toEqual({ kind: 'usage', value: 5000, threshold: 1000 });
  });

  it('50 steps with one item above the threshold (retained) give a bounded number of compactions, each recorded with its reason', async () => {
    const huge = `please keep this in mind: ${'y'.repeat(20_000)}`;
    const policy = new FactSummaryCompactPolicy({ maxItems: 4, compactAbove: 1000, compactAboveTokens: 2000, keepTokens: 500, retainUserMessages: true });
    const { events, log, id } = await runLoop(policy, huge, looping(50));
    const done = compactions(events);
    expect(done.length).toBeGreaterThan(0);
    expect(done.length).toBeLessThanOrEqual(3);
    for (const c of done) expect(c.reason).toMatchObject({ kind: 'tokens', threshold: 2000 });
    expect(events.filter((e) => e.type === 'step.started')).toHaveLength(51);
    expect((await replaySession(log, id, { mode: 'rerun' })).identical).toBe(true);
  });

  it('the same with a usage trigger: a provider that always reports more than the threshold', async () => {
    const policy = new FactSummaryCompactPolicy({ maxItems: 4, compactAbove: 1000, compactAboveTokens: 2000, keepTokens: 500 });
    const { events, log, id } = await runLoop(policy, 'go', looping(50, 5000));
    const done = compactions(events);
    expect(done.length).toBeGreaterThan(0);
    expect(done.length).toBeLessThanOrEqual(6);
    expect(done.every((c) => c.reason?.kind === 'usage' && c.reason.value === 5000)).toBe(true);
    expect((await replaySession(log, id, { mode: 'rerun' })).identical).toBe(true);
  });

  it('a policy with only a one-argument shouldCompact still works, recorded as kind items', async () => {
    const log = await openMemoryLog();
    const session = await openSession(log, { id: 's' });
    await session.memory.record([{ type: 'user.input', items: [userMessage('a'), assistantMessage('b'), userMessage('c')] }]);
    const policy: CompactPolicy = {
      shouldCompact: (snapshot) => snapshot.items.length > 2,
      compact: (snapshot) => ({ ...new FactSummaryCompactPolicy({ maxItems: 1 }).compact(snapshot) }),
    };
    expect(await session.autoCompactIfNecessary(policy)).not.toBeNull();
    expect(compactions(await readAll(log, 's'))[0]?.reason).toEqual({ kind: 'items', value: 3 });
    await session.compact(policy);
    expect(compactions(await readAll(log, 's'))[1]?.reason).toEqual({ kind: 'manual' });
  });
});

describe('keepTokens', () => {
  it('keeps the newest items within keepTokens at a turn boundary, never splitting a pair', () => {
    const items = [
      userMessage('one'),
      assistantMessage('a'.repeat(400)),
      userMessage('two'),
      functionCall('c1', 'read', {}),
      functionCallOutput('c1', 'b'.repeat(400)),
      userMessage('three'),
      functionCall('c2', 'read', {}),
      functionCallOutput('c2', 'c'.repeat(40)),
      assistantMessage('done'),
    ];
    const { cut } = compactionCut(items, { keepTokens: 60 }, approxTokenizer);
    expect(cut).toBe(5);
    expect(tokensOf(items.slice(cut))).toBeLessThanOrEqual(60);
    // Within 30 tokens the turn is too large: the cut walks back to the turn, then forward to a step boundary (no pair split).
    const tight = compactionCut(items, { keepTokens: 10, compactAboveTokens: 20 }, approxTokenizer).cut;
    expect([6, 8]).toContain(tight);
  });
});

describe('retainUserMessages', () => {
  const items = [
    userMessage('first request: build the parser'),
    assistantMessage('ok'),
    userMessage('also handle escapes'),
    assistantMessage('ok'),
    userMessage('and unicode'),
    assistantMessage('ok'),
    userMessage('now the tests'),
    assistantMessage('working'),
  ];

  it('LlmCompactPolicy keeps the user messages of the compacted span by identity; past maxChars the oldest go to the summary', async () => {
    const answer = { outputText: '{"goal":"parser"}', items: [] };
    const all = await new LlmCompactPolicy(new ScriptedModelClient([answer]), 'm', 2, { retainUserMessages: true }).compact({ items, summary: null });
    expect(all.memory!.items).toEqual([items[0], items[2], items[4], items[6], items[7]]);
    expect(all.memory!.items[0]).toBe(items[0]);
    const some = await new LlmCompactPolicy(new ScriptedModelClient([answer]), 'm', 2, { retainUserMessages: { maxChars: 30 } }).compact({ items, summary: null });
    expect(some.memory!.items).toEqual([items[2], items[4], items[6], items[7]]);
  });

  it('in a session the retained messages are kept by id in memory.compacted', async () => {
    const log = await openMemoryLog();
    const session = await openSession(log, { id: 's' });
    await session.memory.record([{ type: 'user.input', items }]);
    const ids = session.memory.state().entries.map((e) => e.id);
    await session.compact(new FactSummaryCompactPolicy({ maxItems: 2, retainUserMessages: { maxChars: 30 } }));
    const [event] = compactions(await readAll(log, 's'));
    expect(event!.keptIds).toEqual([ids[2], ids[4], ids[6], ids[7]]);
    expect(event!.summary).toContain('## User requests\n- first request: build the parser');
    expect(event!.summary).not.toContain('also handle escapes');
  });

  it('a second compaction inside one long request makes progress: retained requests alone before the turn cut are no cut (the demo compacted 93 → 93)', async () => {
    // After a first compaction memory starts with the retained requests, then the current request's long work.
    const work = Array.from({ length: 30 }, (_, i) => [functionCall(`c${i}`, 'read_file', `{"path":"f${i}.ts"}`), functionCallOutput(`c${i}`, `contents ${i}`)]).flat();
    const memory = [userMessage('task one'), userMessage('task two'), userMessage('task three: the long one'), ...work];
    for (const policy of [
      new FactSummaryCompactPolicy({ maxItems: 20, retainUserMessages: true }),
      new LlmCompactPolicy(new ScriptedModelClient([{ outputText: '{"goal":"g","completed":["read"]}', items: [] }]), 'm', 20, { retainUserMessages: true }),
    ]) {
      const result = await policy.compact({ items: memory, summary: null });
      // The requests stay as items; the old half of the current request's work is summarised: memory shrinks.
      expect(result.memory!.items.length).toBeLessThan(memory.length);
      expect(result.memory!.items.slice(0, 3)).toEqual(memory.slice(0, 3));
      expect(result.memory!.items.length).toBeLessThanOrEqual(3 + 21);
    }
    // Without retention, the requests are what a turn cut summarises (they leave as items): unchanged behaviour.
    expect(compactionCut(memory, { maxItems: 20 }, approxTokenizer).cut).toBe(2);
  });

  it('StructuredSummaryCompactPolicy keeps the user messages its projection drops', () => {
    const result = new StructuredSummaryCompactPolicy({ maxItems: 2 }, undefined, { retainUserMessages: true }).compact({ items, summary: null });
    expect(result.memory!.items).toEqual([items[0], items[2], items[4], items[6], items[7]]);
  });
});

describe('FactSummaryCompactPolicy', () => {
  const session = (): MemoryItem[] => [
    systemMessage('be careful'),
    userMessage('Fix the date parser'),
    functionCall('c1', 'read_file', { path: 'src/date.ts' }),
    functionCallOutput('c1', 'export const parse = ...'),
    functionCall('c2', 'edit_file', { path: 'src/date.ts' }),
    functionCallOutput('c2', 'Error: patch did not apply'),
    functionCall('c3', 'run_tests', { suite: 'unit' }),
    functionCallOutput('c3', 'Error: 2 failed'),
    functionCall('c4', 'run_tests', { suite: 'unit' }),
    functionCallOutput('c4', '10 passed'),
    userMessage('also keep the offset'),
    assistantMessage('on it'),
    userMessage('thanks'),
    assistantMessage('done'),
  ];
  const facts = [
    { type: 'test.result', seq: 1, status: 'failed', suite: 'unit', passed: 8, failed: 2 },
    { type: 'command.failed', seq: 2, command: 'npm test', exitCode: 1 },
    { type: 'test.result', seq: 3, status: 'passed', suite: 'unit', passed: 10, failed: 0 },
    { type: 'approval.recorded', seq: 4, action: 'edit src/date.ts', approved: true, by: 'maintainer' },
    { type: 'artifact.changed', seq: 5, path: 'src/date.ts', change: 'modified' },
  ] as never;

  it('renders the sections from what was compacted and the recorded facts', () => {
    const result = new FactSummaryCompactPolicy({ maxItems: 2 }).compact({ items: session(), summary: null, facts });
    expect(result.summary).toBe(
      [
        '## Goal\nFix the date parser',
        '## User requests\n- Fix the date parser\n- also keep the offset',
        '## Files read\n- src/date.ts',
        '## Files modified\n- src/date.ts',
        '## Failed commands\n- npm test (exit 1)',
        '## Test results\n- passed: unit (10 passed, 0 failed)',
        '## Approvals\n- approved: edit src/date.ts by maintainer',
        '## Artifacts\n- modified src/date.ts',
        '## Unresolved tool errors\n- edit_file({"path":"src/date.ts"}): Error: patch did not apply',
      ].join('\n\n'),
    );
    expect(result.goal).toBe('Fix the date parser');
    expect(result.memory!.items).toEqual(session().slice(12));
  });

  it('merges a previous summary: de-duplicated, never nested, the latest test per suite, bounded by maxSummaryChars', () => {
    const policy = new FactSummaryCompactPolicy({ maxItems: 2, maxSummaryChars: 600 });
    let summary: string | null = null;
    for (let i = 0; i < 10; i++) {
      const result = policy.compact({ items: session(), summary, facts });
      summary = result.summary ?? null;
    }
    expect(summary!.match(/## Goal/g)).toHaveLength(1);
    expect(summary!.match(/## Test results/g)).toHaveLength(1);
    expect(summary).toContain('- passed: unit (10 passed, 0 failed)');
    expect(summary).not.toContain('failed: unit');
    expect(summary!.length).toBeLessThanOrEqual(600);
    for (const section of summary!.split('\n\n')) {
      const lines = section.split('\n').filter((l) => l.startsWith('- '));
      expect(new Set(lines).size).toBe(lines.length);
    }
    // Another policy's summary is carried under its own headings, not nested.
    const carried = policy.compact({ items: session(), summary: 'AI4J_COMPACT_SUMMARY\nContext projection: 2/4 items retained.', facts }).summary!;
    expect(carried).toContain('## Earlier summary\n- AI4J_COMPACT_SUMMARY\n- Context projection: 2/4 items retained.');
  });

  it('rejects options it cannot use', () => {
    expect(() => new FactSummaryCompactPolicy({})).toThrow(/maxItems: give maxItems or keepTokens/);
    expect(() => new FactSummaryCompactPolicy({ maxItems: 10, compactAbove: 5 })).toThrow(/compactAbove/);
    expect(() => new FactSummaryCompactPolicy({ keepTokens: 100, compactAboveTokens: 50 })).toThrow(/keepTokens: must be at most compactAboveTokens/);
  });
});

describe('compactPolicyFromDescription rebuilds the new options', () => {
  const client = new ScriptedModelClient([]);
  const policies: CompactPolicy[] = [
    new FactSummaryCompactPolicy({ maxItems: 8, compactAbove: 20, compactAboveTokens: 9000, keepTokens: 3000, retainUserMessages: { maxChars: 500 }, maxSummaryChars: 2000, maxRequestChars: 100, maxEntries: 5 }),
    new StructuredSummaryCompactPolicy({ maxItems: 8 }, undefined, { compactAboveTokens: 9000, keepTokens: 3000, retainUserMessages: true }),
    new LlmCompactPolicy(client, 'm', 8, { compactAboveTokens: 9000, keepTokens: 3000, retainUserMessages: true, summarizerMaxTokens: 4000 }),
  ];
  for (const policy of policies) {
    it(policy.describe!().name, () => {
      const again = compactPolicyFromDescription(policy.describe!(), { summarizer: client });
      expect(again.describe!()).toEqual(policy.describe!());
      expect(again.constructor).toBe(policy.constructor);
    });
  }
});

describe('memoryTokenTracker', () => {
  it('equals a fresh count after appends, a compaction, a summary and a restore', async () => {
    const log = await openMemoryLog();
    const session = await openSession(log, { id: 's' });
    const measure = memoryTokenTracker(approxTokenizer);
    const fresh = () => {
      const state = session.memory.state();
      const summary = state.summary?.trim() ? itemTokenCount(systemMessage(state.summary), approxTokenizer) : 0;
      return tokensOf(state.entries.map((e) => e.item)) + summary;
    };
    for (let i = 0; i < 6; i++) {
      await session.memory.record([{ type: 'user.input', items: [userMessage(`u${i} ${'z'.repeat(i * 10)}`), assistantMessage(`a${i}`)] }]);
      expect(measure(session.memory.state()).tokens).toBe(fresh());
    }
    await session.compact(new FactSummaryCompactPolicy({ maxItems: 3 }));
    const after = measure(session.memory.state());
    expect(after.tokens).toBe(fresh());
    expect(after.lastCompaction).toEqual({ items: session.memory.state().entries.length, tokens: fresh() });
    await session.memory.record([{ type: 'user.input', items: [userMessage('later')] }]);
    expect(measure(session.memory.state())).toEqual({ tokens: fresh(), items: session.memory.state().entries.length, lastCompaction: after.lastCompaction });
    await session.memory.setSummary('a new summary');
    expect(measure(session.memory.state()).tokens).toBe(fresh());
    await session.memory.restore({ items: [userMessage('restored')], summary: null });
    expect(measure(session.memory.state()).tokens).toBe(fresh());
  });
});

describe('the trigger without listing memory (a snapshot lists its items on first read)', () => {
  it('a snapshot keeps the items of its moment, read before or after memory changes', async () => {
    const session = await openSession(await openMemoryLog(), { id: 's' });
    await session.memory.record([{ type: 'user.input', items: [userMessage('one'), userMessage('two')] }]);
    const early = session.memory.snapshot();
    const readNow = session.memory.snapshot();
    expect(readNow.items).toEqual([userMessage('one'), userMessage('two')]);
    await session.memory.record([{ type: 'user.input', items: [userMessage('three')] }]);
    await session.compact(new FactSummaryCompactPolicy({ maxItems: 1 }));
    // Read only now, after an append and a compaction: still the two items memory held when it was taken.
    expect(early.items).toEqual([userMessage('one'), userMessage('two')]);
    expect(early.items).toBe(early.items);
    expect(readNow.items).toEqual([userMessage('one'), userMessage('two')]);
    // Spread, JSON and structuredClone see the items as a plain field.
    expect({ ...early }.items).toEqual(early.items);
    expect(JSON.parse(JSON.stringify(early)).items).toEqual([userMessage('one'), userMessage('two')]);
    expect(structuredClone(early).items).toEqual([userMessage('one'), userMessage('two')]);
  });

  it('compactTriggerOf takes the number of items from the context, without reading snapshot.items', () => {
    const snapshot = {
      get items(): readonly MemoryItem[] {
        throw new Error('items listed');
      },
      summary: null,
    };
    const policy = new FactSummaryCompactPolicy({ maxItems: 2, compactAbove: 5, compactAboveTokens: 100 });
    expect(policy.compactTrigger(snapshot, { tokens: 10, items: 6 })).toEqual({ kind: 'items', value: 6, threshold: 5 });
    expect(policy.compactTrigger(snapshot, { tokens: 150, items: 3 })).toEqual({ kind: 'tokens', value: 150, threshold: 100 });
    expect(policy.compactTrigger(snapshot, { tokens: 10, items: 3 })).toBeUndefined();
    expect(policy.compactTrigger(snapshot, { tokens: 10, items: 0 })).toBeUndefined();
    // Without the count the trigger reads the items, as before.
    expect(() => policy.compactTrigger(snapshot, { tokens: 10 })).toThrow('items listed');
  });

  it("an automatic compaction's gate hands the policy the snapshot's item count, and records the same reason", async () => {
    const seen: { items: number | undefined; listed: number }[] = [];
    const inner = new FactSummaryCompactPolicy({ maxItems: 2, compactAbove: 3 });
    const policy = {
      shouldCompact: (snapshot: MemorySnapshot, context?: CompactContext) => {
        seen.push({ items: context?.items, listed: snapshot.items.length });
        return inner.shouldCompact(snapshot, context);
      },
      compactTrigger: (snapshot: MemorySnapshot, context?: CompactContext) => inner.compactTrigger(snapshot, context),
      compact: (snapshot: MemorySnapshot) => inner.compact(snapshot),
      describe: () => inner.describe(),
    };
    const log = await openMemoryLog();
    const session = await openSession(log, { id: 's' });
    for (let i = 0; i < 4; i++) {
      await session.memory.record([{ type: 'user.input', items: [userMessage(`u${i}`)] }]);
      await session.autoCompactIfNecessary(policy);
    }
    expect(seen.map((s) => s.items)).toEqual(seen.map((s) => s.listed));
    expect(seen.map((s) => s.items)).toEqual([1, 2, 3, 4]);
    const compacted = (await readAll(log, 's')).filter((e): e is SessionEventOf<'memory.compacted'> => e.type === 'memory.compacted');
    expect(compacted.map((e) => e.reason)).toEqual([{ kind: 'items', value: 4, threshold: 3 }]);
  });
});
