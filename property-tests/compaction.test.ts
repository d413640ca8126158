// Compaction laws over random sessions and random policies: the log folds to the result's memory, coverage (law 8),
// and checkpoint + tail fold equals full fold.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LlmCompactPolicy, StructuredSummaryCompactPolicy, type CompactPolicy, type CompactResult } from '../src/compact/index.js';
import { DefaultContextProjector, TypeAwareContextProjector, type ContextBudget } from '../src/context/index.js';
import type { NewSessionEvent, SessionEvent } from '../src/events/index.js';
import { isFunctionCallOutput, isUserMessage, type MemoryItem } from '../src/items/index.js';
import { openMemoryLog, type SessionEventLog } from '../src/log/index.js';
import { foldMemory, initialMemoryState, memoryReducer, type MemoryState } from '../src/memory/index.js';
import { foldSession } from '../src/session/index.js';
import { ScriptedModelClient, type ModelResult } from '../src/model/index.js';
import { openSession, rebuildState } from '../src/session/index.js';
import { arbitraryBudget, arbitraryItems } from '../src/testing/arbitraries.js';
import { arbitraryNewEvent } from '../src/testing/events.js';

// ---------------------------------------------------------------- generators

type PolicySpec =
  | { readonly kind: 'structured'; readonly budget: ContextBudget; readonly typeAware: boolean; readonly extraAbove: number | undefined; readonly maxSummaryChars: number | undefined }
  | { readonly kind: 'llm'; readonly maxItems: number; readonly extraAbove: number | undefined; readonly answer: ModelResult | Error };

type Op =
  | { readonly kind: 'events'; readonly events: NewSessionEvent[] }
  | { readonly kind: 'items'; readonly items: MemoryItem[] }
  | { readonly kind: 'compact'; readonly trigger: 'manual' | 'auto'; readonly policy: PolicySpec };

const line = fc.string({ maxLength: 30 });
const stringOrList = fc.oneof(line, fc.array(line, { maxLength: 3 }), fc.constant(null));

/** What a summarizer might answer: JSON (plain, fenced, in prose), prose only, empty, or a failure. */
const arbitraryAnswer: fc.Arbitrary<ModelResult | Error> = (() => {
  const json = fc
    .record(
      { goal: fc.option(line, { nil: null }), completed: stringOrList, pending: stringOrList, decisions: stringOrList, errors: stringOrList, testResults: stringOrList, openQuestions: stringOrList },
      { requiredKeys: [] },
    )
    .map((o) => JSON.stringify(o));
  const text = fc.oneof(
    { weight: 3, arbitrary: json },
    { weight: 1, arbitrary: json.map((j) => `\`\`\`json\n${j}\n\`\`\``) },
    { weight: 1, arbitrary: fc.tuple(line, json, line).map(([a, j, b]) => `${a.replace(/[{}]/g, '')}\n${j}\n${b.replace(/[{}]/g, '')}`) },
    { weight: 2, arbitrary: fc.string({ maxLength: 60 }) },
    { weight: 1, arbitrary: fc.constantFrom('', '   ') },
  );
  return fc.oneof(
    { weight: 8, arbitrary: text.map((t): ModelResult => ({ outputText: t, items: [] })) },
    { weight: 2, arbitrary: text.map((t): ModelResult => ({ items: [{ type: 'message', role: 'assistant', content: t }] })) },
    { weight: 1, arbitrary: line.map((m) => new Error(`model failed: ${m}`)) },
  );
})();

const arbitraryPolicy: fc.Arbitrary<PolicySpec> = fc.oneof(
  fc.record({
    kind: fc.constant('structured' as const),
    budget: arbitraryBudget({ maxItems: 20, maxApproxChars: 3_000, maxTokens: 800 }),
    typeAware: fc.boolean(),
    /** Added to the budget's maxItems (a trigger below what is kept is refused); -1 means "not set". */
    extraAbove: fc.option(fc.integer({ min: -1, max: 15 }), { nil: undefined }),
    maxSummaryChars: fc.option(fc.integer({ min: 0, max: 300 }), { nil: undefined }),
  }),
  fc.record({
    kind: fc.constant('llm' as const),
    maxItems: fc.nat(15),
    extraAbove: fc.option(fc.nat(10), { nil: undefined }),
    answer: arbitraryAnswer,
  }),
);

const arbitraryOp: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.array(arbitraryNewEvent(), { minLength: 1, maxLength: 4 }).map((events): Op => ({ kind: 'events', events })) },
  { weight: 3, arbitrary: arbitraryItems({ maxTurns: 3, maxOutputChars: 300 }).map((items): Op => ({ kind: 'items', items })) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('compact' as const), trigger: fc.constantFrom('manual' as const, 'auto' as const), policy: arbitraryPolicy }) },
);

const arbitraryOps = fc.array(arbitraryOp, { minLength: 1, maxLength: 8 });

// ---------------------------------------------------------------- running a session

const policyOf = (spec: PolicySpec): CompactPolicy =>
  spec.kind === 'structured'
    ? new StructuredSummaryCompactPolicy(spec.budget, spec.typeAware ? new TypeAwareContextProjector() : new DefaultContextProjector(), {
        ...(spec.extraAbove !== undefined ? { compactAbove: spec.extraAbove < 0 ? -1 : Math.max(0, spec.budget.maxItems ?? 0) + spec.extraAbove } : {}),
        ...(spec.maxSummaryChars !== undefined ? { maxSummaryChars: spec.maxSummaryChars } : {}),
      })
    : new LlmCompactPolicy(new ScriptedModelClient([spec.answer]), 'summarizer', spec.maxItems, spec.extraAbove !== undefined ? { compactAbove: spec.maxItems + spec.extraAbove } : {});

/** A session's items as the events a runtime would record: user input, model output, tool results. */
const eventsForItems = (items: readonly MemoryItem[]): NewSessionEvent[] => {
  const events: NewSessionEvent[] = [];
  let output: MemoryItem[] = [];
  const flush = (): void => {
    if (output.length > 0) events.push({ type: 'model.output', items: output });
    output = [];
  };
  for (const item of items) {
    if (isUserMessage(item)) {
      flush();
      events.push({ type: 'user.input', items: [item] });
    } else if (isFunctionCallOutput(item) && typeof item.output === 'string') {
      flush();
      events.push({ type: 'tool.result', callId: item.call_id, output: item.output });
    } else {
      output.push(item);
    }
  }
  flush();
  return events;
};

const readAll = async (log: SessionEventLog, id: string): Promise<SessionEvent[]> => {
  const out: SessionEvent[] = [];
  for await (const e of log.read(id)) out.push(e);
  return out;
};

const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

interface Played {
  readonly log: SessionEventLog;
  readonly events: SessionEvent[];
}

/**
 * Plays the ops through `openSession` on an in-memory log. After each compaction it checks that folding the
 * log gives exactly the result's memory (or, when the compaction failed or did not run, memory as it was).
 */
const play = async (ops: readonly Op[], saveAfter?: number): Promise<Played> => {
  let tick = 0;
  const log = await openMemoryLog({ clock: () => new Date(Date.UTC(2026, 0, 1, 0, 0, 0, tick++)) });
  const session = await openSession(log, { id: 's', checkpointEvery: 0 });
  for (const [index, op] of ops.entries()) {
    if (index === saveAfter) await session.save();
    if (op.kind === 'events') {
      await session.record(op.events);
      continue;
    }
    if (op.kind === 'items') {
      const events = eventsForItems(op.items);
      if (events.length > 0) await session.record(events);
      continue;
    }
    const policy = policyOf(op.policy);
    const before = session.memory.state();
    const headBefore = session.memory.headSeq();
    let result: CompactResult | null = null;
    let threw = false;
    if (op.trigger === 'manual') {
      try {
        result = await session.compact(policy);
      } catch {
        threw = true;
      }
    } else {
      result = await session.autoCompactIfNecessary(policy, { step: tick });
    }
    const events = await readAll(log, 's');
    const folded = foldMemory(events);
    expect(plain(folded)).toEqual(plain(session.memory.state()));
    const added = events.filter((e) => e.seq > headBefore);
    if (result) {
      // the law: folding the log after memory.compacted yields exactly the result's memory
      expect(added.map((e) => e.type)).toEqual(['memory.compacted']);
      expect(plain(folded.entries.map((e) => e.item))).toEqual(plain(result.memory!.items));
      expect(folded.summary).toBe(result.memory!.summary ?? null);
      const event = added[0]!;
      if (event.type !== 'memory.compacted') throw new Error('unreachable');
      expect(event.trigger).toBe(op.trigger);
      expect(event.policy).toEqual(plain(policy.describe!()));
      // kept and dropped partition the entries that were in memory
      expect([...event.keptIds, ...event.droppedIds].sort()).toEqual(before.entries.map((e) => e.id).sort());
      expect(event.layout).toHaveLength(result.memory!.items.length);
      expect(event.summarizer !== undefined).toBe(result.summarizer !== undefined);
      if (result.summarizer) expect(event.summarizer?.rawAnswer).toBe(result.summarizer.rawAnswer);
    } else {
      // no compaction: memory is exactly as it was; a failure is recorded, a skip records nothing
      expect(plain(folded)).toEqual(plain(before));
      if (threw) expect(added.map((e) => e.type)).toEqual(['compaction.failed']);
      else expect(added.every((e) => e.type === 'compaction.failed')).toBe(true);
    }
  }
  return { log, events: await readAll(log, 's') };
};

// ---------------------------------------------------------------- laws

describe('compaction laws', () => {
  it('folding the log after each compaction gives exactly the result memory (random sessions, random policies)', async () => {
    await fc.assert(
      fc.asyncProperty(arbitraryOps, async (ops) => {
        const { log } = await play(ops);
        await log.close();
      }),
    );
  });

  it('coverage (law 8): every item that entered memory is in memory or named as removed, at every seq', async () => {
    await fc.assert(
      fc.asyncProperty(arbitraryOps, async (ops) => {
        const { log, events } = await play(ops);
        await log.close();
        const entered = new Set<string>();
        const removed = new Set<string>();
        let state: MemoryState = initialMemoryState;
        for (const event of events) {
          const beforeIds = new Set(state.entries.map((e) => e.id));
          if (event.type === 'memory.compacted') {
            // a compaction names only items that are in memory, and names every item it removes
            for (const id of event.droppedIds) {
              expect(beforeIds.has(id)).toBe(true);
              removed.add(id);
            }
          }
          if (event.type === 'memory.restored' || event.type === 'memory.cleared') for (const id of entered) removed.add(id);
          state = memoryReducer(state, event);
          const now = new Set(state.entries.map((e) => e.id));
          for (const id of now) entered.add(id);
          for (const id of entered) {
            if (!now.has(id) && !removed.has(id)) throw new Error(`item ${id} left memory at seq ${event.seq} (${event.type}) without being named as removed`);
          }
          if (event.type === 'memory.compacted') for (const id of event.droppedIds) expect(now.has(id)).toBe(false);
        }
      }),
    );
  });

  it('checkpoint + tail fold equals full fold, and resume uses the checkpoint', async () => {
    await fc.assert(
      fc.asyncProperty(arbitraryOps, fc.nat(), async (ops, at) => {
        const saveAfter = ops.length === 0 ? 0 : at % ops.length;
        const { log, events } = await play(ops, saveAfter);
        const k = events.findIndex((e) => e.type === 'checkpoint.taken') + 1;
        const full = foldMemory(events);
        const head = foldMemory(events.slice(0, k));
        expect(plain(foldMemory(events.slice(k), head))).toEqual(plain(full));
        if (k > 0) {
          const rebuilt = await rebuildState(log, 's');
          expect(rebuilt.from).toEqual({ checkpointSeq: k });
          expect(rebuilt.eventsFolded).toBe(events.length - k);
          expect(plain(rebuilt.state)).toEqual(plain(full));
          expect(plain(rebuilt.session)).toEqual(plain(foldSession(events)));
          const resumed = await openSession(log, { id: 's' });
          expect(plain(resumed.memory.state())).toEqual(plain(full));
          expect(resumed.getLastCompactResult()).toEqual(plain(full.lastCompaction?.result ?? null));
        }
        await log.close();
      }),
    );
  });
});
