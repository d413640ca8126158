// Memory tools as laws: random sessions with working-memory edits, compactions, clears and rewinds at random points.
// After every rewind memory equals memoryAt(toSeq); the session laws and the fate law hold; recall by id returns
// exactly the original text of every item that ever entered memory; both replay modes are identical.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  Agents,
  ScriptedModelClient,
  StructuredSummaryCompactPolicy,
  TypeAwareContextProjector,
  assistantMessage,
  auditSession,
  defineTool,
  functionCall,
  memoryAt,
  openMemoryLog,
  recallTool,
  replaySession,
  type MemoryItem,
  type ModelResult,
  type SessionEvent,
  type SessionEventLog,
} from '../src/index.js';
import { checkSessionLaws } from '../src/testing/runtime-laws.js';
import { checkFateLaw } from '../src/replay/fate-law.js';
import { MEMORY_ACCESS } from '../src/runtime/memory-tools/access.js';
import { recallTextOf } from '../src/runtime/memory-tools/item-text.js';

type Op =
  | { readonly kind: 'run'; readonly text: string; readonly calls: number }
  | { readonly kind: 'note'; readonly text: string }
  | { readonly kind: 'compact'; readonly keep: number }
  | { readonly kind: 'clear' }
  | { readonly kind: 'rewind'; readonly at: number };

const arbitraryOp: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('run' as const), text: fc.string({ maxLength: 40 }), calls: fc.integer({ min: 0, max: 2 }) }) },
  fc.record({ kind: fc.constant('note' as const), text: fc.string({ maxLength: 30 }) }),
  fc.record({ kind: fc.constant('compact' as const), keep: fc.integer({ min: 1, max: 4 }) }),
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('clear' as const) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('rewind' as const), at: fc.double({ min: 0, max: 1, noNaN: true }) }) },
);

const readAll = async (log: SessionEventLog, id: string): Promise<SessionEvent[]> => {
  const out: SessionEvent[] = [];
  for await (const e of log.read(id)) out.push(e);
  return out;
};

const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

describe('memory tools over random sessions', () => {
  it('rewinds equal memoryAt(toSeq), the laws hold, recall by id gives every item back exactly, replay is identical', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(arbitraryOp, { minLength: 1, maxLength: 10 }), async (ops) => {
        const log = await openMemoryLog();
        let n = 0;
        const answers: ModelResult[] = [];
        const lookup = defineTool({ name: 'lookup', description: 'Look up', parameters: z.object({ q: z.string() }), execute: ({ q }) => `found ${q}` });
        const agent = Agents.react({
          modelClient: new ScriptedModelClient(answers),
          model: 'm',
          log,
          tools: [lookup, recallTool({ maxChars: 100_000 })],
          contextProjector: new TypeAwareContextProjector(),
          contextBudget: { maxRecentToolResults: 1, maxItems: 6 },
          workingMemory: { blocks: [{ name: 'notes', maxChars: 1000 }] },
        });
        const session = await agent.newSession();
        const everEntered = new Map<string, MemoryItem>();
        const remember = (): void => {
          const state = session.memory.state();
          for (const entry of session.memory.getEntries()) if (entry.id !== state.blocksId && !everEntered.has(entry.id)) everEntered.set(entry.id, entry.item);
        };
        for (const op of ops) {
          if (op.kind === 'run') {
            for (let c = 0; c < op.calls; c++) answers.push({ items: [functionCall(`c${++n}`, 'lookup', { q: `${op.text} ${c}` })] });
            answers.push({ outputText: op.text, items: [assistantMessage(op.text)] });
            await session.run(`ask ${op.text}`);
          } else if (op.kind === 'note') {
            await session.session.record([{ type: 'memory.noted', block: 'notes', text: op.text, maxChars: 1000 }]);
          } else if (op.kind === 'compact') {
            await session.session.compact(new StructuredSummaryCompactPolicy({ maxItems: op.keep }));
          } else if (op.kind === 'clear') {
            await session.memory.clear();
          } else {
            const head = await log.head(session.id);
            const toSeq = 1 + Math.floor(op.at * (head - 1));
            await session.rewind({ toSeq });
            const at = await memoryAt(log, session.id, { seq: toSeq });
            expect(plain(session.memory.state())).toEqual(plain(at.memory));
          }
          remember();
        }
        const events = await readAll(log, session.id);
        expect(checkSessionLaws(events)).toEqual([]);
        expect(checkFateLaw(events, await auditSession(log, session.id))).toEqual([]);

        // Recall by id, outside a step: the tool with the session's access.
        const tool = recallTool({ maxChars: 100_000 });
        const context = {
          sessionId: session.id, runId: 'x', step: 0, callId: 'probe', signal: new AbortController().signal, record: async () => undefined,
          [MEMORY_ACCESS]: { session: session.session, record: async () => undefined },
        };
        for (const [id, item] of everEntered) {
          const output = String(await tool.execute({ id }, context as never));
          expect(output.split('\n').slice(1).join('\n')).toBe(recallTextOf(item));
        }
        for (const mode of ['project', 'rerun'] as const) {
          const replay = await replaySession(log, session.id, { mode });
          expect(replay.firstDivergence).toBeUndefined();
          expect(replay.identical).toBe(true);
        }
      }),
      { numRuns: 20 },
    );
  }, 120_000);
});
