// Key isolation: no session id, however odd, can read or write another session's range.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../src/events/index.js';
import { isInvalidSessionIdError, openLevelLog, openMemoryLog, type SessionEventLog } from '../src/log/index.js';

const TRICKY = ['\u0000', '/', '..', '\x01', '../..', 'a', 'a\u0000', 'a\u0000b', 'a/', 'ab', '\uffff', '\ud800', '\udc00', '\u{10FFFF}', 'e', 'h', 'c', '00'];

/** Any non-empty JS string: full Unicode, lone surrogates included, or one of the tricky ids. */
const anyId: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary', minLength: 1, maxLength: 8 }),
  fc.string({ unit: fc.constantFrom('\u0000', '\x01', '/', '.', 'a', '0', '\ud800', '\udc00'), minLength: 1, maxLength: 5 }),
  fc.constantFrom(...TRICKY),
);

/** A set of distinct ids where, often, one is a prefix of another. */
const idSets: fc.Arbitrary<string[]> = fc
  .tuple(
    fc.uniqueArray(anyId, { minLength: 1, maxLength: 5 }),
    fc.option(fc.tuple(anyId, fc.string({ unit: 'binary', minLength: 1, maxLength: 3 })), { nil: undefined }),
  )
  .map(([ids, prefixed]) => (prefixed ? [...new Set([...ids, prefixed[0], prefixed[0] + prefixed[1]])] : ids));

const collect = async <T>(iterable: AsyncIterable<T>): Promise<T[]> => {
  const out: T[] = [];
  for await (const value of iterable) out.push(value);
  return out;
};

/** Session number `i` gets `i + 1` events whose outputs say `${i}:${k}`, appended concurrently across sessions. */
const writeAll = async (log: SessionEventLog, ids: readonly string[]): Promise<void> => {
  await Promise.all(
    ids.map(async (id, i) => {
      for (let k = 0; k <= i; k += 2) {
        const n = Math.min(2, i + 1 - k);
        await log.append(id, Array.from({ length: n }, (_, j) => ({ type: 'tool.result', callId: 'c', output: `${i}:${k + j}` })), {
          expectedSeq: k,
        });
      }
      await log.putCheckpoint(id, { seq: i + 1, hash: `h${i}`, data: i });
    }),
  );
};

const outputOf = (event: SessionEvent): string => (event.type === 'tool.result' ? event.output : `<${event.type}>`);

const checkIsolation = async (log: SessionEventLog, ids: readonly string[]): Promise<void> => {
  for (const [i, id] of ids.entries()) {
    const count = i + 1;
    expect(await log.head(id)).toBe(count);
    const events = await collect(log.read(id));
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: count }, (_, k) => k + 1));
    expect(events.every((e) => e.sessionId === id)).toBe(true);
    expect(events.map(outputOf)).toEqual(Array.from({ length: count }, (_, k) => `${i}:${k}`));
    expect(await collect(log.read(id, { fromSeq: count, toSeq: count + 5 }))).toHaveLength(1);
    expect(await log.verify(id)).toEqual({ valid: true, eventCount: count, firstBrokenSeq: null });
    expect(await log.latestCheckpoint(id)).toEqual({ seq: count, hash: `h${i}`, data: i });
  }
  expect((await collect(log.sessions())).sort()).toEqual([...ids].sort());
};

/** Ids one code unit off a written id (extended or cut), not written themselves, see nothing. */
const checkNeighboursEmpty = async (log: SessionEventLog, ids: readonly string[]): Promise<void> => {
  const written = new Set(ids);
  const neighbours = ids.flatMap((id) => [`${id}\u0000`, `${id}\x01`, id.slice(0, -1), `\u0000${id}`]).filter((n) => n !== '' && !written.has(n));
  for (const id of neighbours) {
    expect(await log.head(id)).toBe(0);
    expect(await collect(log.read(id))).toEqual([]);
    expect(await log.latestCheckpoint(id)).toBeUndefined();
  }
};

describe('session key isolation', () => {
  it('memory log: appends to one id never show up under another; sessions() is exactly the ids written', async () => {
    await fc.assert(
      fc.asyncProperty(idSets, async (ids) => {
        const log = await openMemoryLog();
        try {
          await writeAll(log, ids);
          await checkIsolation(log, ids);
          await checkNeighboursEmpty(log, ids);
        } finally {
          await log.close();
        }
      }),
    );
  });

  // One LevelDB directory per run: capped at 30 runs (the global numRuns still applies when lower).
  it('LevelDB log: the same, across close and reopen', async () => {
    const numRuns = Math.min(fc.readConfigureGlobal().numRuns ?? 100, 30);
    await fc.assert(
      fc.asyncProperty(idSets, async (ids) => {
        const dir = await mkdtemp(join(tmpdir(), 'context-ledger-keys-'));
        try {
          const log = await openLevelLog(dir);
          await writeAll(log, ids);
          await log.close();
          const again = await openLevelLog(dir);
          try {
            await checkIsolation(again, ids);
            await checkNeighboursEmpty(again, ids);
          } finally {
            await again.close();
          }
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      }),
      { numRuns },
    );
  });

  it('rejects the empty string as a session id', async () => {
    const log = await openMemoryLog();
    await expect(log.append('', [{ type: 'memory.cleared' }])).rejects.toSatisfy(isInvalidSessionIdError);
    await expect(log.head('')).rejects.toSatisfy(isInvalidSessionIdError);
    await expect(collect(log.read(''))).rejects.toSatisfy(isInvalidSessionIdError);
    await expect(log.verify('')).rejects.toSatisfy(isInvalidSessionIdError);
    expect(await collect(log.sessions())).toEqual([]);
    await log.close();
  });
});
