// Erasure, for random agent sessions and random erasures: verify is valid and reports exactly the erased seqs, the fold
// equals the fold of the original events with those payloads replaced by placeholders, and the fate law still holds.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agents, ScriptedModelClient, StructuredSummaryCompactPolicy, assistantMessage, defineTool, functionCall, openMemoryLog, openSession, userMessage, type ModelResult, type SessionEvent } from '../src/index.js';
import { placeholderPayload } from '../src/log/index.js';
import { payloadOf } from '../src/log/hash-chain.js';
import { foldSession } from '../src/session/index.js';
import { auditSession } from '../src/replay/index.js';
import { arbitraryBudget, checkFateLaw, checkSessionLaws, collect } from '../src/testing/index.js';

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

type Op =
  | { readonly kind: 'result' }
  | { readonly kind: 'input' }
  | { readonly kind: 'rewind'; readonly back: number }
  | { readonly kind: 'restore' }
  | { readonly kind: 'compact' }
  | { readonly kind: 'note' };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.constant<Op>({ kind: 'result' }) },
  { weight: 2, arbitrary: fc.constant<Op>({ kind: 'input' }) },
  { weight: 1, arbitrary: fc.nat({ max: 30 }).map((back): Op => ({ kind: 'rewind', back })) },
  { weight: 1, arbitrary: fc.constant<Op>({ kind: 'restore' }) },
  { weight: 1, arbitrary: fc.constant<Op>({ kind: 'compact' }) },
  { weight: 1, arbitrary: fc.constant<Op>({ kind: 'note' }) },
);

describe('erasure with copies', () => {
  it('random sessions with rewinds, restores, compactions and notes: no erased content is left in any stored event or in memory at any seq; verify and the laws hold', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 3, maxLength: 14 }), fc.array(fc.array(fc.nat(), { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 3 }), async (ops, picks) => {
        const log = await openMemoryLog();
        const s = await openSession(log, { id: 'p', checkpointEvery: 0 });
        let n = 0;
        /** The token each item-bearing event's content holds, by item id. */
        const tokens = new Map<string, string>();
        for (const o of ops) {
          n += 1;
          if (o.kind === 'result') {
            const callId = `c${n}`;
            await s.record([{ type: 'model.output', items: [functionCall(callId, 'read', { n })] }]);
            const [result] = await s.record([{ type: 'tool.result', callId, output: `output TOK-${n}-result` }]);
            tokens.set(`${result!.seq}:0`, `TOK-${n}-result`);
          } else if (o.kind === 'input') {
            const [input] = await s.record([{ type: 'user.input', items: [userMessage(`please TOK-${n}-input`)] }]);
            tokens.set(`${input!.seq}:0`, `TOK-${n}-input`);
          } else if (o.kind === 'rewind') {
            const head = await log.head('p');
            await s.rewind({ toSeq: Math.max(1, head - o.back) });
          } else if (o.kind === 'restore') {
            await s.memory.restore(s.memory.snapshot());
          } else if (o.kind === 'compact') {
            await s.compact(new StructuredSummaryCompactPolicy({ maxItems: 2 })).catch(() => undefined);
          } else {
            const [note] = await s.record([{ type: 'memory.noted', block: n % 2 === 0 ? 'notes' : 'plan', text: `note TOK-${n}-note` }]);
            tokens.set(`seq ${note!.seq}`, `TOK-${n}-note`);
          }
        }
        const ids = [...tokens.keys()];
        if (ids.length === 0) return;
        const erasedIds = new Set<string>();
        const erased = new Set<number>();
        const copies = new Set<number>();
        for (const pick of picks) {
          const chosen = [...new Set(pick.map((p) => ids[p % ids.length]!))];
          // item ids by itemIds; working-memory notes (no item id) by their seqs
          const notes = chosen.filter((id) => id.startsWith('seq ')).map((id) => Number(id.slice(4)));
          const items = chosen.filter((id) => !id.startsWith('seq '));
          const results = [
            ...(items.length > 0 ? [await log.erase('p', { itemIds: items }, { reason: 'property' })] : []),
            ...(notes.length > 0 ? [await log.erase('p', { seqs: notes }, { reason: 'property notes' })] : []),
          ];
          const result = { erased: results.flatMap((r) => r.erased), copies: results.flatMap((r) => r.copies ?? []) };
          for (const id of chosen) erasedIds.add(id);
          for (const seq of result.erased) erased.add(seq);
          for (const seq of result.copies) copies.add(seq);
        }
        const verified = await log.verify('p');
        expect(verified.valid, verified.problem).toBe(true);
        expect(verified.erased ?? []).toEqual([...erased].sort((a, b) => a - b));
        expect(verified.copies ?? []).toEqual([...copies].filter((seq) => !erased.has(seq)).sort((a, b) => a - b));
        const gone = [...erasedIds].map((id) => tokens.get(id)!);
        const stored = (await collect(log.readStored('p'))).join('\n');
        for (const token of gone) expect(stored.includes(token), `${token} is still stored`).toBe(false);
        const events: SessionEvent[] = [];
        for await (const e of log.read('p', { verify: true })) events.push(e);
        expect(checkSessionLaws(events)).toEqual([]);
        expect(checkFateLaw(events, await auditSession(log, 'p'))).toEqual([]);
        for (let seq = 1; seq <= events.length; seq += 3) {
          const text = JSON.stringify(foldSession(events.slice(0, seq)).memory);
          for (const token of gone) expect(text.includes(token)).toBe(false);
        }
        await log.close();
      }),
      { numRuns: 20 },
    );
  });
});
