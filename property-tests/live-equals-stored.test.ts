// Law 10, live equals stored: what `append` returns is deep-equal, key order included, to what `read` returns.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { NewSessionEvent } from '../src/events/index.js';
import { openMemoryLog } from '../src/log/index.js';
import { arbitraryNewEvent } from '../src/testing/events.js';

/** The same value with the keys of every object in a shuffled order. */
const shuffledKeys = (value: unknown, seed: number): unknown => {
  if (Array.isArray(value)) return value.map((v, i) => shuffledKeys(v, seed + i));
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>);
  entries.sort((a, b) => ((a[0].charCodeAt(0) * 31 + seed) % 7) - ((b[0].charCodeAt(0) * 31 + seed) % 7) || (seed % 2 === 0 ? 1 : -1));
  return Object.fromEntries(entries.map(([k, v]) => [k, shuffledKeys(v, seed + k.length)]));
};

const extraItem = fc.record({
  type: fc.constantFrom('web_search_call', 'computer_call', 'message'),
  zeta: fc.string({ maxLength: 8 }),
  alpha: fc.record({ query: fc.string({ maxLength: 8 }), type: fc.constant('search'), b: fc.integer() }),
  id: fc.string({ minLength: 1, maxLength: 5 }),
  role: fc.constant('assistant'),
  content: fc.array(fc.record({ type: fc.constant('input_json'), z: fc.integer(), a: fc.string({ maxLength: 5 }) }), { maxLength: 2 }),
});

describe('live equals stored (law 10)', () => {
  it('append returns events deep-equal to read, key order included, for events with unsorted keys', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(arbitraryNewEvent(), extraItem.map((item): NewSessionEvent => ({ type: 'model.output', items: [item] }))), { minLength: 1, maxLength: 8 }),
        fc.nat(),
        async (events, seed) => {
          const log = await openMemoryLog({ clock: () => '2026-01-01T00:00:00.000Z' });
          const stored = await log.append('s', events.map((e, i) => shuffledKeys(e, seed + i)) as NewSessionEvent[]);
          const read = [];
          for await (const event of log.read('s')) read.push(event);
          expect(JSON.stringify(stored)).toBe(JSON.stringify(read));
          await log.close();
        },
      ),
    );
  });
});
