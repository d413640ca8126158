// The runtime budgets the whole request: system prompt, tools and framing come off maxTokens; calibrate learns a margin from usage; replay in both modes stays identical.
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import {
  Agents,
  auditUsageDrift,
  ScriptedModelClient,
  TypeAwareContextProjector,
  assistantMessage,
  defineTool,
  effectiveBudget,
  functionCall,
  openAiTokenizer,
  openMemoryLog,
  replayContext,
  replaySession,
  type ModelResult,
  type SessionEvent,
  type SessionEventLog,
} from '../../src/index.js';
import { projectRequest } from '../../src/runtime/index.js';
import { checkSessionLaws } from '../../src/testing/index.js';

const readAll = async (log: SessionEventLog, id: string): Promise<SessionEvent[]> => {
  const out: SessionEvent[] = [];
  for await (const e of log.read(id)) out.push(e);
  return out;
};

const tools = Array.from({ length: 20 }, (_, k) =>
  defineTool({
    name: `tool_${k}`,
    description: `Tool number ${k}: reads a file from the repository and returns its contents, with line numbers.`,
    parameters: z.object({ path: z.string().describe('the path to read'), from: z.number().optional() }),
    execute: async ({ path }) => `contents of ${path} `.repeat(30),
  }),
);
const systemPrompt = 'You are a careful coding agent. '.repeat(60);
const turns = (count: number, usage?: (k: number) => number): ModelResult[] => [
  ...Array.from({ length: count }, (_, k) => ({
    items: [functionCall(`call_${k}`, `tool_${k % 20}`, { path: `src/file_${k}.ts` })],
    ...(usage ? { usage: { inputTokens: usage(k) } } : {}),
  })),
  { outputText: 'done', items: [assistantMessage('done')], ...(usage ? { usage: { inputTokens: usage(count) } } : {}) },
];

describe('the whole request in maxTokens', () => {
  it('takes the system prompt, 20 tools and the reserve off maxTokens, records them, and replays identically', async () => {
    const log = await openMemoryLog();
    const tokenizer = openAiTokenizer();
    const agent = Agents.react({
      modelClient: new ScriptedModelClient(turns(8)),
      model: 'm',
      systemPrompt,
      tools,
      log,
      contextProjector: new TypeAwareContextProjector({ tokenizer }),
      contextBudget: { maxTokens: 3_000, reserveOutputTokens: 500 },
    });
    const session = await agent.newSession();
    await session.run('read the files');
    const events = await readAll(log, session.id);
    const projected = events.filter((e) => e.type === 'context.projected');
    expect(projected.length).toBe(9);
    for (const event of projected) {
      if (event.type !== 'context.projected') continue;
      expect(event.v).toBe(4);
      expect(event.request?.overheadTokens).toBeGreaterThan(1_000);
      // Items, overhead and framing within maxTokens less the reserve (the newest item may go over on its own).
      expect((event.report.projectedTokens ?? 0) + (event.report.overheadTokens ?? 0)).toBeLessThanOrEqual(2_500 + 400);
    }
    const last = projected.at(-1);
    if (last?.type !== 'context.projected') throw new Error('no projection');
    expect(last.report.tokenLimitApplied).toBe(true);
    expect(last.report.notes.at(-1)).toMatch(/^request overhead: \d+ token\(s\) \(\d+ prompt and tools, \d+ framing\), 500 reserved for output; items had \d+ of maxTokens 3000$/);
    // Budgeting the items alone (as before) sends more than the whole request allows.
    const itemsOnly = new TypeAwareContextProjector({ tokenizer }).project(
      (await replayContext(log, session.id, { step: 9 })).at.memory.entries.map((e) => e.item),
      { maxTokens: 3_000 },
    );
    expect((itemsOnly.report.projectedTokens ?? 0) + (last.request?.overheadTokens ?? 0)).toBeGreaterThan(3_000);
    expect(checkSessionLaws(events)).toEqual([]);
    expect((await replaySession(log, session.id)).identical).toBe(true);
    expect((await replaySession(log, session.id, { mode: 'rerun' })).identical).toBe(true);
    expect((await replayContext(log, session.id, { step: 9 })).identical).toBe(true);
  });

  it('effectiveBudget is what the projector is given (the function an overflow retry calls)', () => {
    expect(effectiveBudget({ maxTokens: 16_000, reserveOutputTokens: 4_000, maxItems: 9 }, { overheadTokens: 1_200 })).toEqual({ maxTokens: 10_800, maxItems: 9 });
    expect(effectiveBudget({ maxTokens: 1_000 }, { overheadTokens: 5_000 })).toEqual({ maxTokens: 1 });
    expect(effectiveBudget({ maxTokens: 0 }, { overheadTokens: 10 })).toEqual({ maxTokens: 0 });
    expect(effectiveBudget({ reserveOutputTokens: 10 }, { overheadTokens: 10 })).toEqual({});
    expect(effectiveBudget({ maxTokens: 2_000 }, { overheadTokens: 100, marginTokens: 50 })).toEqual({ maxTokens: 1_850 });
  });

  it('an adapter\'s requestOverheadTokens is used, and a bad one is a clear error', async () => {
    const log = await openMemoryLog();
    const client = Object.assign(new ScriptedModelClient(turns(1)), { requestOverheadTokens: () => 777 });
    const agent = Agents.react({ modelClient: client, model: 'm', systemPrompt, tools, log, contextBudget: { maxTokens: 5_000 } });
    const session = await agent.newSession();
    await session.run('go');
    const first = (await readAll(log, session.id)).find((e) => e.type === 'context.projected');
    expect(first?.type === 'context.projected' && first.request).toEqual({ overheadTokens: 777 });
    const bad = Agents.react({ modelClient: Object.assign(new ScriptedModelClient(turns(1)), { requestOverheadTokens: () => -3 }), model: 'm', log: await openMemoryLog(), contextBudget: { maxTokens: 5_000 } });
    await expect((await bad.newSession()).run('go')).rejects.toThrow(/requestOverheadTokens.*-3.*non-negative integer/s);
  });
});

describe('calibrate', () => {
  it('keeps the largest recent drift between usage.inputTokens and the count as a margin, recorded, and replays identically', async () => {
    const log = await openMemoryLog();
    const usage = [900, 700, 400, 650, 1];
    const client = new ScriptedModelClient(
      usage.map((inputTokens, k): ModelResult =>
        k < 4 ? { items: [functionCall(`call_${k}`, 'tool_0', { path: `f${k}` })], usage: { inputTokens } } : { outputText: 'done', items: [assistantMessage('done')], usage: { inputTokens } },
      ),
    );
    const agent = Agents.react({ modelClient: client, model: 'm', systemPrompt: 'be brief', tools: tools.slice(0, 1), log, contextBudget: { maxTokens: 4_000, calibrate: true } });
    const session = await agent.newSession();
    await session.run('go');
    const projected = (await readAll(log, session.id)).flatMap((e) => (e.type === 'context.projected' ? [e] : []));
    const drifts = projected.map((e, k) => (usage[k] as number) - ((e.report.projectedTokens ?? 0) + (e.report.overheadTokens ?? 0)));
    expect(projected[0]?.request?.marginTokens).toBeUndefined();
    for (let k = 1; k < projected.length; k++) {
      const seen = drifts.slice(0, k);
      expect(projected[k]?.request).toMatchObject({
        marginTokens: Math.max(0, ...seen),
        calibration: { steps: seen.map((_, j) => j + 1), drifts: seen },
      });
    }
    expect(Math.max(...drifts)).toBeGreaterThan(0);
    // The audit gives the same drift per step, from the log alone.
    const audited = await auditUsageDrift(log, session.id);
    expect(audited.map((d) => d.drift)).toEqual(drifts);
    expect(audited.map((d) => d.inputTokens)).toEqual(usage);
    expect(audited[2]).toMatchObject({ step: 3, countedTokens: (projected[2]?.report.projectedTokens ?? 0) + (projected[2]?.report.overheadTokens ?? 0), marginTokens: projected[2]?.request?.marginTokens });
    expect((await auditUsageDrift(log, session.id, { fromStep: 2, toStep: 3 })).map((d) => d.step)).toEqual([2, 3]);
    expect((await replaySession(log, session.id)).identical).toBe(true);
    expect((await replaySession(log, session.id, { mode: 'rerun' })).identical).toBe(true);
  });

  it('the margin comes off the items\' budget', () => {
    const projector = new TypeAwareContextProjector();
    const items = Array.from({ length: 40 }, (_, k) => assistantMessage(`message ${k} `.repeat(10)));
    const without = projectRequest(projector, items, { maxTokens: 800 }, { overheadTokens: 50 }, projector.tokenizer);
    const withMargin = projectRequest(projector, items, { maxTokens: 800 }, { overheadTokens: 50, marginTokens: 200 }, projector.tokenizer);
    expect(withMargin.items.length).toBeLessThan(without.items.length);
    expect((withMargin.report.projectedTokens ?? 0) + (withMargin.report.overheadTokens ?? 0)).toBeLessThanOrEqual(600);
    expect(withMargin.report.notes.at(-1)).toContain('200 calibration margin');
  });
});
