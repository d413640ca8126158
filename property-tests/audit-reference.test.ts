// The streaming audit (appends folded in batches, memory looked at once per step) yields exactly the records of the
// reference audit (test/support/reference-audit.ts: every event through the reducer, memory compared before and
// after each), for random agent sessions with compaction, summaries, restores, clears and facts between runs, over
// the whole session and over random step ranges.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  Agents,
  DefaultContextProjector,
  ScriptedModelClient,
  StructuredSummaryCompactPolicy,
  assistantMessage,
  defineTool,
  functionCall,
  openAiTokenizer,
  openMemoryLog,
  userMessage,
  type ModelResult,
} from '../src/index.js';
import { auditItem, streamAudit, type AuditOptions, type AuditRecord } from '../src/replay/index.js';
import type { AgentRunSession } from '../src/runtime/index.js';
import type { SessionEventLog } from '../src/log/index.js';
import { arbitraryBudget } from '../src/testing/index.js';
import { referenceStreamAudit } from '../test/support/reference-audit.js';

const tool = defineTool({
  name: 'run',
  description: 'Run a command',
  parameters: z.object({ size: z.number().int() }),
  execute: ({ size }) => 'o'.repeat(size),
});

let callNo = 0;
const toolStep = fc.integer({ min: 0, max: 800 }).map((size): ModelResult => {
  callNo += 1;
  return { items: [functionCall(`c-${callNo}`, 'run', { size })] };
});

/** What happens to memory between two runs, besides the runs themselves. */
const between = fc.constantFrom('nothing', 'summary', 'summary-null', 'clear', 'restore', 'fact', 'input');

const session = fc.record({
  runs: fc.array(fc.record({ steps: fc.array(toolStep, { maxLength: 8 }), then: between }), { minLength: 1, maxLength: 4 }),
  budget: arbitraryBudget({ maxItems: 12, maxTokens: 900, maxApproxChars: 4000 }),
  compactKeep: fc.option(fc.integer({ min: 2, max: 8 }), { nil: undefined }),
  // o200k counts lazily, so a step's report may leave memory's tokens out and the audit counts them itself.
  o200k: fc.boolean(),
  range: fc.option(fc.tuple(fc.integer({ min: 0, max: 12 }), fc.integer({ min: 0, max: 12 })), { nil: undefined }),
});

const collect = async <R,>(records: AsyncIterable<R>): Promise<R[]> => {
  const all: R[] = [];
  for await (const record of records) all.push(record);
  return all;
};

const changeMemory = async (s: AgentRunSession, what: string, i: number): Promise<void> => {
  if (what === 'summary') await s.memory.setSummary(`summary ${i}`);
  else if (what === 'summary-null') await s.memory.setSummary(null);
  else if (what === 'clear') await s.memory.clear();
  else if (what === 'restore') {
    const { items, summary } = s.memory.snapshot();
    await s.memory.restore({ items: items.filter((_, k) => k % 2 === 0), summary: summary ?? `restored ${i}` });
  } else if (what === 'fact') await s.memory.record([{ type: 'command.failed', command: `npm test ${i}`, exitCode: 1, error: 'failed' }]);
  else if (what === 'input') await s.memory.addUserInput(userMessage(`note ${i}`));
};

/** The records without the cost and cache accounting (the reference audit has none; test/replay/accounting.test.ts covers it). */
const withoutAccounts = (records: readonly AuditRecord[]): unknown[] =>
  records.map((record) => {
    if (record.kind === 'step') {
      const { account: _a, ...step } = record.step;
      return { ...record, step };
    }
    if (record.kind === 'compaction') {
      const { account: _a, ...compaction } = record.compaction;
      return { ...record, compaction };
    }
    if (record.kind === 'end') {
      const { account: _a, ...end } = record;
      return end;
    }
    return record;
  });

const expectSameAudit = async (log: SessionEventLog, id: string, options: AuditOptions): Promise<void> => {
  expect(withoutAccounts(await collect(streamAudit(log, id, options)))).toEqual(await collect(referenceStreamAudit(log, id, options)));
};

describe('the streaming audit', () => {
  it('yields the same records as the reference audit', async () => {
    await fc.assert(
      fc.asyncProperty(session, async ({ runs, budget, compactKeep, o200k, range }) => {
        const log = await openMemoryLog();
        const answers = runs.flatMap((run) => [...run.steps, { outputText: 'done', items: [assistantMessage('done')] }]);
        const projector = new DefaultContextProjector(o200k ? { tokenizer: openAiTokenizer() } : {});
        const agent = Agents.react({
          modelClient: new ScriptedModelClient(answers),
          model: 'm',
          tools: [tool],
          log,
          contextProjector: projector,
          contextBudget: budget,
          ...(compactKeep !== undefined ? { compactPolicy: new StructuredSummaryCompactPolicy({ maxItems: compactKeep }, projector, { compactAbove: compactKeep * 2 }) } : {}),
          maxSteps: 20,
        });
        const s = await agent.newSession();
        for (const [i, run] of runs.entries()) {
          await s.run(`task ${i}`);
          await changeMemory(s, run.then, i);
        }
        await expectSameAudit(log, s.id, {});
        if (range) await expectSameAudit(log, s.id, { fromStep: Math.min(...range), toStep: Math.max(...range) });
        // One item's life, for an item still in memory and for the first item that ever entered.
        const reference = await collect(referenceStreamAudit(log, s.id));
        for (const record of [reference.find((r) => r.kind === 'item'), reference.findLast((r) => r.kind === 'item')]) {
          if (record?.kind === 'item') expect(await auditItem(log, s.id, record.item.id)).toEqual(record.item);
        }
        await log.close();
      }),
      { numRuns: 40 },
    );
  });

  it("counts memory's tokens, the summary included, when the step's report leaves them out", async () => {
    const log = await openMemoryLog();
    const agent = Agents.react({
      modelClient: new ScriptedModelClient([{ outputText: 'done', items: [assistantMessage('done')] }]),
      model: 'm',
      log,
      contextProjector: new DefaultContextProjector({ tokenizer: openAiTokenizer() }),
      contextBudget: { maxTokens: 300 },
    });
    const s = await agent.newSession();
    await s.memory.setSummary('what happened so far');
    for (let i = 0; i < 40; i++) await s.memory.addUserInput(userMessage(`note ${i} ${'word '.repeat(200)}`));
    await s.run('the task');
    const records = await collect(streamAudit(log, s.id));
    const step = records.find((r) => r.kind === 'step');
    // The lazy projection did not count all of memory, so the audit did (42 items: the summary, 40 notes, the task).
    expect(step?.kind === 'step' && step.step.memory).toEqual({ items: 42, tokens: expect.any(Number) });
    expect(withoutAccounts(records)).toEqual(await collect(referenceStreamAudit(log, s.id)));
    await log.close();
  });
});
