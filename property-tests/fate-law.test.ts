// The fate law, for random agent sessions (random budgets, projectors, compaction, tool outputs): at every step
// every item in memory has exactly one fate, the sent items are the non-dropped fates in order, and the report's
// and the audit's counts agree; a broken fate run is always caught.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  Agents,
  DefaultContextProjector,
  ScriptedModelClient,
  StructuredSummaryCompactPolicy,
  TypeAwareContextProjector,
  assistantMessage,
  defineTool,
  functionCall,
  openMemoryLog,
  reasoning,
  type ModelResult,
  type SessionEvent,
} from '../src/index.js';
import { auditSession } from '../src/replay/index.js';
import { arbitraryBudget, checkFateLaw } from '../src/testing/index.js';

const tool = defineTool({
  name: 'run',
  description: 'Run a command',
  parameters: z.object({ size: z.number().int() }),
  execute: ({ size }) => 'o'.repeat(size),
});

let callNo = 0;
const answer = fc.oneof(
  fc.record({ size: fc.integer({ min: 0, max: 1500 }), think: fc.boolean() }).map(({ size, think }): ModelResult => {
    callNo += 1;
    return { items: [...(think ? [reasoning(`r${callNo}`, 'thinking about it')] : []), functionCall(`c-${callNo}`, 'run', { size })] };
  }),
  fc.constant<ModelResult>({ outputText: 'done', items: [assistantMessage('done')] }),
);

const session = fc.record({
  runs: fc.array(fc.array(answer, { minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 3 }),
  budget: arbitraryBudget({ maxItems: 20, maxTokens: 1200, maxApproxChars: 5000 }),
  typeAware: fc.boolean(),
  compactKeep: fc.option(fc.integer({ min: 2, max: 12 }), { nil: undefined }),
});

describe('the fate law', () => {
  it('holds for random agent sessions, and the audit agrees with the events', async () => {
    await fc.assert(
      fc.asyncProperty(session, async ({ runs, budget, typeAware, compactKeep }) => {
        const log = await openMemoryLog();
        // Each run ends with a final answer, so every run stops on its own.
        const answers = runs.flatMap((run) => [...run.filter((a) => a.outputText === undefined), { outputText: 'done', items: [assistantMessage('done')] }]);
        let n = 0;
        const projector = typeAware ? new TypeAwareContextProjector() : new DefaultContextProjector();
        const agent = Agents.react({
          modelClient: new ScriptedModelClient(answers),
          model: 'm',
          tools: [tool],
          log,
          contextProjector: projector,
          contextBudget: budget,
          ...(compactKeep !== undefined
            ? { compactPolicy: new StructuredSummaryCompactPolicy({ maxItems: compactKeep, ...(typeAware ? { maxRecentToolResults: 1 } : {}) }, projector, { compactAbove: compactKeep * 2 }) }
            : {}),
          maxSteps: 40,
          ids: () => `s${++n}`,
        });
        const s = await agent.newSession();
        for (let i = 0; i < runs.length; i++) await s.run(`task ${i}`);
        const events: SessionEvent[] = [];
        for await (const e of log.read(s.id)) events.push(e);
        const audit = await auditSession(log, s.id);
        expect(checkFateLaw(events, audit)).toEqual([]);
        expect(audit.steps.length).toBe(events.filter((e) => e.type === 'context.projected').length);
        await log.close();
      }),
      { numRuns: 25 },
    );
  });

  it('catches any fate run that no longer fits memory', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5 }), fc.constantFrom('kept:tail', 'dropped:maxItems'), (extra, run) => {
        const projected = {
          type: 'context.projected', sessionId: 's', seq: 1, at: '', v: 2, prevHash: '', hash: '',
          projector: { name: 'DefaultContextProjector', settings: {} }, budget: {},
          report: { sourceItemCount: 0, projectedItemCount: 0, droppedItemCount: 0, sourceApproxChars: 0, projectedApproxChars: 0, itemLimitApplied: false, characterLimitApplied: false, notes: [] },
          fateRuns: `${run}*${extra}`, digest: 'd', step: 1,
        } as unknown as SessionEvent;
        const violations = checkFateLaw([projected]);
        expect(violations.length).toBeGreaterThan(0);
        expect(violations[0]!.message).toContain('one fate per item in memory');
      }),
    );
  });
});
