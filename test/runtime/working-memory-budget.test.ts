// Working-memory blocks are counted like the system prompt in the whole-request budget and never dropped (issue 20):
// a summary of ~360 tokens, a ~240-character plan and maxTokens 800 sent the summary and the newest items but not the block.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  Agents,
  ScriptedModelClient,
  TypeAwareContextProjector,
  assistantMessage,
  defineTool,
  fatesOf,
  functionCall,
  itemTokenCount,
  openMemoryLog,
  replaySession,
  textOf,
  type ModelClient,
  type ModelRequest,
  type ModelResult,
  type SessionEvent,
  type SessionEventLog,
} from '../../src/index.js';
import { REPLAYED_REQUEST, projectRequest } from '../../src/runtime/index.js';
import { checkSessionLaws } from '../../src/testing/index.js';

const readAll = async (log: SessionEventLog, id: string): Promise<SessionEvent[]> => {
  const out: SessionEvent[] = [];
  for await (const e of log.read(id)) out.push(e);
  return out;
};

const SUMMARY = `Summary of the work so far: ${'the parser was rewritten, the failing tests were found and the build was fixed; '.repeat(17)}`;
const PLAN = 'Plan: 1) read the failing parser test 2) fix the tokenizer off-by-one 3) run the whole suite 4) update the docs 5) write the changelog entry 6) ask for a review of the diff.'.padEnd(240, '.');
const noop = defineTool({ name: 'noop', description: 'Does nothing useful, and says so at length.', parameters: z.object({}), execute: () => 'nothing happened here, as expected. '.repeat(3) });

/** The reproduction: the plan is set at step 1, then six tool steps and an answer, under maxTokens 800. */
const script = (): ModelResult[] => [
  { items: [functionCall('w1', 'working_memory', { operation: 'set', block: 'plan', text: PLAN })] },
  ...Array.from({ length: 6 }, (_, k): ModelResult => ({ items: [functionCall(`c${k}`, 'noop', {})] })),
  { outputText: 'done', items: [assistantMessage('done')] },
];

const agentOn = (log: SessionEventLog, modelClient: ModelClient, contextBudget: Record<string, number>) =>
  Agents.react({
    modelClient,
    model: 'm',
    log,
    systemPrompt: 'You are a careful coding agent. Keep your plan in working memory. '.repeat(3),
    tools: [noop],
    contextProjector: new TypeAwareContextProjector(),
    workingMemory: { blocks: [{ name: 'plan', description: 'what you will do next', maxChars: 400 }] },
    contextBudget,
  });

describe('working memory in the whole-request budget', () => {
  it('the block is sent at every step after the edit, counted like the system prompt; the summary and newest items too; replay is identical', async () => {
    const log = await openMemoryLog();
    const model = new ScriptedModelClient(script());
    const session = await agentOn(log, model, { maxTokens: 800 }).newSession();
    await session.session.memory.setSummary(SUMMARY);
    expect(itemTokenCount(assistantMessage(SUMMARY), new TypeAwareContextProjector().tokenizer)).toBeGreaterThan(340);
    await session.run('fix the parser');
    const events = await readAll(log, session.id);
    const projected = events.flatMap((e) => (e.type === 'context.projected' ? [e] : []));
    // Every request after the edit carries the plan, the summary and the newest item.
    const afterEdit = model.requests.slice(1);
    expect(afterEdit).toHaveLength(7);
    for (const request of afterEdit) {
      const texts = request.items.map((i) => textOf(i));
      expect(texts.some((t) => t.includes(PLAN))).toBe(true);
      expect(texts.some((t) => t.includes(SUMMARY.trim()))).toBe(true);
      expect(request.items.at(-1)).toEqual(model.requests.indexOf(request) === 7 ? expect.anything() : expect.objectContaining({ type: 'function_call_output' }));
    }
    for (const event of projected.slice(1)) {
      // summary (pinned), the block (pinned, never dropped), older items dropped by maxTokens, the newest pair.
      expect(event.fateRuns).toMatch(/^kept:pinned\*2 (dropped:maxTokens(\*\d+)? )?kept:tail\*2$/);
      expect(event.request?.workingMemoryTokens).toBeGreaterThan(50);
      expect(event.report.notes.at(-1)).toMatch(/working memory/);
      expect(event.v).toBe(4);
    }
    // The block sits after the summary, as memory orders it.
    const fates = fatesOf(projected.at(-1)!);
    expect(fates.slice(0, 2)).toEqual([expect.objectContaining({ fate: 'kept', rule: 'pinned' }), expect.objectContaining({ fate: 'kept', rule: 'pinned' })]);
    expect(textOf(model.requests.at(-1)!.items[1]!)).toContain(PLAN);
    expect(checkSessionLaws(events)).toEqual([]);
    for (const mode of ['project', 'rerun'] as const) {
      const replayed = await replaySession(log, session.id, { mode });
      expect({ mode, identical: replayed.identical, at: replayed.firstDivergence }).toEqual({ mode, identical: true, at: undefined });
    }
  });

  it('the block takes its place in maxItems (never exceeded), and a 0 limit still sends nothing', async () => {
    for (const maxItems of [2, 3, 5]) {
      const log = await openMemoryLog();
      const model = new ScriptedModelClient(script());
      const session = await agentOn(log, model, { maxItems, maxTokens: 5_000 }).newSession();
      await session.session.memory.setSummary(SUMMARY);
      await session.run('fix the parser');
      for (const request of model.requests.slice(1)) {
        expect(request.items.length).toBeLessThanOrEqual(maxItems);
        expect(request.items.some((i) => textOf(i).includes(PLAN))).toBe(true);
      }
      expect(checkSessionLaws(await readAll(log, session.id))).toEqual([]);
      expect((await replaySession(log, session.id, { mode: 'rerun' })).identical).toBe(true);
    }
    const projector = new TypeAwareContextProjector();
    const items = [assistantMessage(SUMMARY), assistantMessage(PLAN), assistantMessage('newest')];
    for (const empty of [{ maxItems: 0 }, { maxTokens: 0 }, { maxApproxChars: 0 }]) {
      expect(projectRequest(projector, items, empty, { overheadTokens: 10 }, projector.tokenizer, { workingMemoryIndex: 1 }).items).toEqual([]);
    }
  });

  it('a session recorded before this rule (the block competing as a pinned item, no workingMemoryTokens) replays as it was recorded', async () => {
    // A model client that replays requests without workingMemoryTokens makes the runtime project as it did before v4.
    const log = await openMemoryLog();
    const scripted = new ScriptedModelClient(script());
    const old: ModelClient & { [REPLAYED_REQUEST]: () => { request: { overheadTokens: number } } } = {
      create: (request: ModelRequest) => scripted.create(request),
      [REPLAYED_REQUEST]: () => ({ request: { overheadTokens: 450 } }),
    };
    const session = await agentOn(log, old, { maxTokens: 800 }).newSession();
    await session.session.memory.setSummary(SUMMARY);
    await session.run('fix the parser');
    const events = await readAll(log, session.id);
    const projected = events.flatMap((e) => (e.type === 'context.projected' ? [e] : []));
    expect(projected.every((e) => e.request !== undefined && e.request.workingMemoryTokens === undefined)).toBe(true);
    // The defect this fixes: the block was dropped by maxTokens.
    expect(projected.at(-1)!.fateRuns).toMatch(/^kept:pinned dropped:maxTokens/);
    for (const mode of ['project', 'rerun'] as const) {
      const replayed = await replaySession(log, session.id, { mode });
      expect({ mode, identical: replayed.identical, at: replayed.firstDivergence }).toEqual({ mode, identical: true, at: undefined });
    }
  });
});
