// Erasure, for random agent sessions and random erasures: verify is valid and reports exactly the erased seqs, the fold
// equals the fold of the original events with those payloads replaced by placeholders, and the fate law still holds.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agents, ScriptedModelClient, assistantMessage, defineTool, functionCall, openMemoryLog, type ModelResult, type SessionEvent } from '../src/index.js';
import { placeholderPayload } from '../src/log/index.js';
import { payloadOf } from '../src/log/hash-chain.js';
import { foldSession } from '../src/memory/index.js';
import { auditSession } from '../src/replay/index.js';
import { arbitraryBudget, checkFateLaw } from '../src/testing/index.js';

const tool = defineTool({ name: 'run', description: 'Run', parameters: z.object({ text: z.string() }), execute: ({ text }) => `ran ${text}` });

let callNo = 0;
const answer = fc.oneof(
  fc.string({ maxLength: 40 }).map((text): ModelResult => ({ items: [functionCall(`c-${++callNo}`, 'run', { text })] })),
  fc.constant<ModelResult>({ outputText: 'done', items: [assistantMessage('done')] }),
);

const withPlaceholders = (event: SessionEvent, erased: ReadonlySet<number>): SessionEvent => {
  if (!erased.has(event.seq)) return event;
  const record = event as unknown as Record<string, unknown>;
  const envelope = Object.fromEntries(Object.entries(record).filter(([key]) => !(key in payloadOf(record))));
  return { ...envelope, ...placeholderPayload(event.type, payloadOf(record)) } as unknown as SessionEvent;
};

const stripMarks = (events: readonly SessionEvent[]): SessionEvent[] =>
  events.map((e) => {
    const { erased: _erased, ...rest } = e as SessionEvent & { erased?: unknown };
    return rest as SessionEvent;
  });

describe('erasure', () => {
  it('keeps verify valid with exactly the erased seqs; the fold is the fold with placeholders; the fate law holds', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(answer, { minLength: 1, maxLength: 8 }),
        arbitraryBudget({ maxItems: 12, maxTokens: 800, maxApproxChars: 3000 }),
        fc.array(fc.array(fc.nat(), { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 3 }),
        async (answers, budget, picks) => {
          const log = await openMemoryLog();
          let n = 0;
          const agent = Agents.react({
            modelClient: new ScriptedModelClient([...answers.filter((a) => a.outputText === undefined), { outputText: 'done', items: [assistantMessage('done')] }]),
            model: 'm',
            tools: [tool],
            log,
            contextBudget: budget,
            maxSteps: 20,
            ids: () => `e${++n}`,
          });
          const s = await agent.newSession();
          await s.run('go');
          const original: SessionEvent[] = [];
          for await (const e of log.read(s.id)) original.push(e);
          const erased = new Set<number>();
          for (const pick of picks) {
            const head = await log.head(s.id);
            const seqs = [...new Set(pick.map((p) => (p % head) + 1))].filter((seq) => seq <= original.length);
            if (seqs.length === 0) continue;
            const result = await log.erase(s.id, { seqs }, { reason: 'property' });
            for (const seq of result.erased) erased.add(seq);
          }
          const verified = await log.verify(s.id);
          expect(verified.valid, verified.problem).toBe(true);
          expect(verified.erased ?? []).toEqual([...erased].sort((a, b) => a - b));
          const after: SessionEvent[] = [];
          for await (const e of log.read(s.id, { verify: true })) after.push(e);
          const expected = original.map((e) => withPlaceholders(e, erased));
          expect(foldSession(stripMarks(after.slice(0, original.length)))).toEqual(foldSession(expected));
          expect(checkFateLaw(after, await auditSession(log, s.id))).toEqual([]);
          await log.close();
        },
      ),
      { numRuns: 15 },
    );
  });
});
