// Fold laws: determinism, chunked = whole, no mutation of input, stable ids, frozen results.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../src/events/index.js';
import { openMemoryLog } from '../src/log/index.js';
import { changesMemory, foldMemory, initialMemoryState, memoryReducer } from '../src/memory/index.js';
import { SessionStateSchema, foldSession } from '../src/session/index.js';
import { arbitraryEventBatches } from '../src/testing/events.js';

const storedEvents = async (batches: readonly (readonly Parameters<typeof Array.prototype.push>[0][])[]): Promise<SessionEvent[]> => {
  let tick = 0;
  const log = await openMemoryLog({ clock: () => new Date(Date.UTC(2026, 0, 1, 0, 0, tick++)) });
  for (const batch of batches) await log.append('s', batch);
  const events: SessionEvent[] = [];
  for await (const event of log.read('s')) events.push(event);
  await log.close();
  return events;
};

const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

describe('memory fold laws', () => {
  it('is deterministic and equals events.reduce(memoryReducer)', async () => {
    await fc.assert(
      fc.asyncProperty(arbitraryEventBatches(), async (batches) => {
        const events = await storedEvents(batches);
        const a = foldMemory(events);
        const b = foldMemory(events);
        const reduced = events.reduce(memoryReducer, initialMemoryState);
        expect(plain(a)).toEqual(plain(b));
        expect(plain(reduced)).toEqual(plain(a));
      }),
    );
  });

  it('a folded session state parses back unchanged with SessionStateSchema (what a checkpoint stores and trusts)', async () => {
    await fc.assert(
      fc.asyncProperty(arbitraryEventBatches(), async (batches) => {
        const state = plain(foldSession(await storedEvents(batches)));
        expect(SessionStateSchema.parse(state)).toEqual(state);
      }),
    );
  });

  it('folding in two chunks equals folding at once', async () => {
    await fc.assert(
      fc.asyncProperty(arbitraryEventBatches(), fc.nat(), async (batches, at) => {
        const events = await storedEvents(batches);
        const cut = events.length === 0 ? 0 : at % (events.length + 1);
        const chunked = foldMemory(events.slice(cut), foldMemory(events.slice(0, cut)));
        expect(plain(chunked)).toEqual(plain(foldMemory(events)));
      }),
    );
  });

  it('never mutates its input (values) and returns frozen state', async () => {
    await fc.assert(
      fc.asyncProperty(arbitraryEventBatches(), async (batches) => {
        const events = await storedEvents(batches);
        const before = plain(events);
        const state = foldMemory(events);
        expect(plain(events)).toEqual(before);
        expect(Object.isFrozen(state)).toBe(true);
        expect(Object.isFrozen(state.entries)).toBe(true);
        for (const entry of state.entries) expect(Object.isFrozen(entry.item)).toBe(true);
      }),
    );
  });

  it('gives each item the id "<seq>:<index>" of its event and keeps it as memory grows', async () => {
    await fc.assert(
      fc.asyncProperty(arbitraryEventBatches(), async (batches) => {
        const events = await storedEvents(batches);
        const bySeq = new Map(events.map((e) => [e.seq, e]));
        let state = initialMemoryState;
        for (const event of events) {
          const previous = new Map(state.entries.map((e) => [e.id, e.item]));
          state = memoryReducer(state, event);
          const ids = state.entries.map((e) => e.id);
          expect(new Set(ids).size).toBe(ids.length);
          for (const entry of state.entries) {
            const old = previous.get(entry.id);
            if (old !== undefined) expect(entry.item).toBe(old);
            const [seq, index] = entry.id.split(':').map(Number) as [number, number];
            const source = bySeq.get(seq)!;
            if (source.type === 'tool.result') {
              expect(entry.item).toEqual({ type: 'function_call_output', call_id: source.callId, output: source.output });
            } else if ('items' in source) {
              expect(entry.item).toEqual(source.items[index]);
            } else {
              throw new Error(`item ${entry.id} comes from a ${source.type} event`);
            }
          }
        }
      }),
    );
  });

  it('returns the same reference for an event that does not change memory', async () => {
    await fc.assert(
      fc.asyncProperty(arbitraryEventBatches(), async (batches) => {
        const events = await storedEvents(batches);
        let state = initialMemoryState;
        for (const event of events) {
          const next = memoryReducer(state, event);
          if (!changesMemory(event)) expect(next).toBe(state);
          state = next;
        }
      }),
    );
  });
});
