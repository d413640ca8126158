// The engine contract: what a store under the SessionEventLog protocol (`createSessionEventLog`) must keep, checked on the port alone.
import { GENESIS_HASH, chainHash } from '../log/hash-chain.js';
import type { EngineRow, EngineWrite, SessionLogEngine, StoredRow } from '../log/engine.js';
import type { LogContractTestApi } from './log-contract.js';

/** One fresh, empty store for one test of {@link describeLogEngineContract}. */
export interface LogEngineHarnessStore {
  /** The engine under test (opened on the fresh store). */
  readonly engine: SessionLogEngine;
  /**
   * A second, independent engine on the same store, as another process would open it. Given for engines that are not
   * `singleWriter`: the suite then checks that `write` is conditional across handles and that `hold` keeps them out.
   */
  openAnother?(): Promise<SessionLogEngine>;
  /** Closes the engines and removes what the harness created. */
  cleanup(): Promise<void>;
}

/** How the engine contract gets stores. */
export interface LogEngineHarness {
  create(): LogEngineHarnessStore | Promise<LogEngineHarnessStore>;
}

const TEST_TIMEOUT_MS = 60_000;

/** A session's head: the seq and hash of its last event. */
type Head = EngineWrite['tip'];

/**
 * Rows that chain onto `base`: JSON texts with `sessionId`, `seq`, `prevHash` and `hash` (an engine may read the seq and
 * hash of a stored text; it must not need more).
 */
export const engineRows = (sessionId: string, base: Head, count: number, label = 'row'): { rows: EngineRow[]; tip: Head } => {
  const rows: EngineRow[] = [];
  let prevHash = base.hash;
  for (let seq = base.seq + 1; seq <= base.seq + count; seq++) {
    const at = new Date(Date.UTC(2026, 0, 1, 0, 0, seq % 60)).toISOString();
    const body = { sessionId, seq, at, v: 1, prevHash, type: 'engine.test', label };
    const hash = chainHash(prevHash, body);
    rows.push({ seq, type: 'engine.test', at, prevHash, hash, text: JSON.stringify({ sessionId, seq, at, v: 1, prevHash, hash, type: 'engine.test', label }) });
    prevHash = hash;
  }
  const last = rows[rows.length - 1];
  return { rows, tip: last ? { seq: last.seq, hash: last.hash } : base };
};

const GENESIS: Head = { seq: 0, hash: GENESIS_HASH };

const all = async <T>(iterable: AsyncIterable<T>): Promise<T[]> => {
  const out: T[] = [];
  for await (const value of iterable) out.push(value);
  return out;
};

/** Every page of `rows`, with the generator's return value. */
const pagesOf = async (engine: SessionLogEngine, sessionId: string, fromSeq: number, toSeq: number): Promise<{ pages: StoredRow[][]; last: number | undefined }> => {
  const source = engine.rows(sessionId, fromSeq, toSeq);
  const pages: StoredRow[][] = [];
  for (;;) {
    const next = await source.next();
    if (next.done) return { pages, last: next.value };
    pages.push(next.value.map(([seq, text]) => [seq, text] as StoredRow));
  }
};

const rowsOf = async (engine: SessionLogEngine, sessionId: string, fromSeq = 1, toSeq = Number.MAX_SAFE_INTEGER): Promise<StoredRow[]> =>
  (await pagesOf(engine, sessionId, fromSeq, toSeq)).pages.flat();

/** Writes `count` rows onto the session's head as a log would; gives the new head. */
const append = async (engine: SessionLogEngine, sessionId: string, base: Head, count: number, label?: string, keyId?: string): Promise<Head> => {
  const { rows, tip } = engineRows(sessionId, base, count, label);
  const result = await engine.write(sessionId, { base, tip, rows, keyId });
  if (result === false) throw new Error(`the write onto ${base.seq} of ${JSON.stringify(sessionId)} was refused`);
  return tip;
};

const checkpointText = (sessionId: string, seq: number, note = ''): string => JSON.stringify({ sessionId, seq, hash: `h${seq}`, note });

/**
 * The contract of the engine port (`SessionLogEngine`), for a store's author: run it with your test runner's
 * `describe`, `it` and `expect`, then run `describeSessionEventLogContract` over `createSessionEventLog(yourEngine)`.
 * @example describeLogEngineContract({ describe, it, expect }, 'sqlite', { create: async () => ({ engine: openMyEngine(), cleanup: ... }) })
 */
export const describeLogEngineContract = (api: LogContractTestApi, name: string, harness: LogEngineHarness): void => {
  const { describe, it } = api;
  const expect = api.expect;
  const test = (title: string, body: (store: LogEngineHarnessStore) => Promise<void>): void => {
    it(
      title,
      async () => {
        const store = await harness.create();
        try {
          await body(store);
        } finally {
          await store.cleanup();
        }
      },
      TEST_TIMEOUT_MS,
    );
  };

  describe(`SessionLogEngine contract: ${name}`, () => {
    test('an empty store: no head, no rows, no sessions, no checkpoints', async ({ engine }) => {
      expect(await engine.head('s')).toBe(undefined);
      expect(await engine.head('s', true)).toBe(undefined);
      expect(await rowsOf(engine, 's')).toEqual([]);
      expect(await all(engine.sessions())).toEqual([]);
      expect(await all(engine.checkpoints('s', 100))).toEqual([]);
      if (engine.headRecord) expect(await engine.headRecord('s')).toBe(undefined);
    });

    test('write stores the rows byte for byte and moves the head; head(forWrite) gives the last stored text', async ({ engine }) => {
      const { rows, tip } = engineRows('s', GENESIS, 3);
      expect(await engine.write('s', { base: GENESIS, tip, rows, keyId: undefined })).not.toBe(false);
      expect(await engine.head('s')).toMatchObject({ seq: 3, hash: tip.hash });
      expect(await engine.head('s', true)).toEqual({ seq: 3, hash: tip.hash, text: rows[2]?.text });
      expect(await rowsOf(engine, 's')).toEqual(rows.map((row) => [row.seq, row.text]));
      const more = await append(engine, 's', tip, 1, 'one');
      expect(await engine.head('s')).toMatchObject(more);
      expect((await rowsOf(engine, 's')).map(([seq]) => seq)).toEqual([1, 2, 3, 4]);
    });

    test('the head record names the head (and the chain key id of a session first written with one)', async ({ engine }) => {
      if (!engine.headRecord) return;
      const tip = await append(engine, 'keyed', GENESIS, 2, 'k', 'key-id-1');
      expect(await engine.headRecord('keyed')).toEqual({ seq: 2, hash: tip.hash, keyId: 'key-id-1' });
      const plain = await append(engine, 'plain', GENESIS, 1);
      expect(await engine.headRecord('plain')).toEqual({ seq: 1, hash: plain.hash });
      // later writes keep the key id (a single-writer engine may leave the record where the first write put it)
      const more = await append(engine, 'keyed', tip, 1, 'k', 'key-id-1');
      const record = await engine.headRecord('keyed');
      expect(record).toMatchObject({ keyId: 'key-id-1' });
      expect(record && 'seq' in record && (record.seq === more.seq || (engine.singleWriter && record.seq === tip.seq))).toBe(true);
    });

    test('a conditional write refuses a moved base and writes nothing (an engine that is not the single writer)', async ({ engine }) => {
      if (engine.singleWriter) return;
      const tip = await append(engine, 's', GENESIS, 2, 'first');
      const stale = engineRows('s', GENESIS, 3, 'stale');
      expect(await engine.write('s', { base: GENESIS, tip: stale.tip, rows: stale.rows, keyId: undefined })).toBe(false);
      const behind = engineRows('s', { seq: 1, hash: tip.hash }, 2, 'behind');
      expect(await engine.write('s', { base: { seq: 1, hash: tip.hash }, tip: behind.tip, rows: behind.rows, keyId: undefined })).toBe(false);
      expect(await engine.head('s')).toMatchObject(tip);
      const stored = await rowsOf(engine, 's');
      expect(stored.map(([seq]) => seq)).toEqual([1, 2]);
      expect(stored.every(([, text]) => text.includes('"label":"first"'))).toBe(true);
      // the base it is on is accepted
      expect((await append(engine, 's', tip, 1, 'next')).seq).toBe(3);
    });

    test('across handles: of two writes onto the same base exactly one lands, and the other writes nothing', async ({ engine, openAnother }) => {
      if (engine.singleWriter || !openAnother) return;
      const other = await openAnother();
      const base = await append(engine, 's', GENESIS, 1);
      const a = engineRows('s', base, 5, 'a');
      const b = engineRows('s', base, 3, 'b');
      const results = await Promise.all([
        engine.write('s', { base, tip: a.tip, rows: a.rows, keyId: undefined }),
        other.write('s', { base, tip: b.tip, rows: b.rows, keyId: undefined }),
      ]);
      expect(results.filter((r) => r === false)).toHaveLength(1);
      const winner = results[0] === false ? b : a;
      expect(await other.head('s')).toMatchObject(winner.tip);
      expect(await rowsOf(other, 's')).toEqual([[1, (await rowsOf(engine, 's', 1, 1))[0]?.[1]], ...winner.rows.map((row) => [row.seq, row.text])]);
    });

    test('a write is atomic: a reader sees none or all of a group', async ({ engine }) => {
      const base = await append(engine, 's', GENESIS, 1);
      const group = engineRows('s', base, 200, 'group');
      const seen = new Set<number>();
      let writing = true;
      const reading = (async () => {
        while (writing) seen.add((await rowsOf(engine, 's')).length);
      })();
      await engine.write('s', { base, tip: group.tip, rows: group.rows, keyId: undefined });
      writing = false;
      await reading;
      seen.add((await rowsOf(engine, 's')).length);
      expect([...seen].every((count) => count === 1 || count === 201)).toBe(true);
      expect(seen.has(201)).toBe(true);
    });

    test('rows: pages never empty, in seq order, bounded by fromSeq and toSeq inclusive, over many pages', async ({ engine }) => {
      let head = GENESIS;
      for (let i = 0; i < 5; i++) head = await append(engine, 's', head, 250, `w${i}`);
      const { pages, last } = await pagesOf(engine, 's', 1, Number.MAX_SAFE_INTEGER);
      expect(pages.every((page) => page.length > 0)).toBe(true);
      expect(pages.flat().map(([seq]) => seq)).toEqual(Array.from({ length: 1250 }, (_, i) => i + 1));
      if (last !== undefined) expect(last).toBe(1250);
      const middle = await pagesOf(engine, 's', 600, 1100);
      expect(middle.pages.flat().map(([seq]) => seq)).toEqual(Array.from({ length: 501 }, (_, i) => i + 600));
      if (middle.last !== undefined) expect(middle.last).toBe(1100);
      expect(await rowsOf(engine, 's', 1251, 2000)).toEqual([]);
      expect((await rowsOf(engine, 's', 7, 7)).map(([seq]) => seq)).toEqual([7]);
      // an early exit releases the read, and the store goes on working
      for await (const page of engine.rows('s', 1, 1250)) if (page.length > 0) break;
      expect((await engine.head('s'))?.seq).toBe(1250);
    });

    test('session ids are kept apart losslessly, and sessions lists each once in a stable order', async ({ engine }) => {
      const ids = ['a', 'A', 'a\u0000', 'a\u0000b', '\ud800', '\udc00x', 'a/b', 'é', 'x'.repeat(512)];
      for (const [index, id] of ids.entries()) await append(engine, id, GENESIS, index + 1, `id${index}`);
      for (const [index, id] of ids.entries()) {
        expect((await engine.head(id))?.seq).toBe(index + 1);
        const stored = await rowsOf(engine, id);
        expect(stored.map(([, text]) => (JSON.parse(text) as { sessionId: string }).sessionId)).toEqual(Array.from({ length: index + 1 }, () => id));
      }
      const listed = await all(engine.sessions());
      expect([...listed].sort()).toEqual([...ids].sort());
      expect(await all(engine.sessions())).toEqual(listed);
    });

    test('checkpoints: put replaces at its seq; without a band the newest older one stays; with a band older ones of its band go', async ({ engine }) => {
      await append(engine, 's', GENESIS, 400);
      const texts = async (at = 1000): Promise<number[]> => (await all(engine.checkpoints('s', at))).map((text) => (JSON.parse(text) as { seq: number }).seq);
      for (const seq of [10, 20, 30]) await engine.putCheckpoint('s', { seq, hash: `h${seq}`, text: checkpointText('s', seq) }, undefined);
      expect(await texts()).toEqual([30, 20]);
      expect(await texts(25)).toEqual([20]);
      expect(await texts(19)).toEqual([]);
      await engine.putCheckpoint('s', { seq: 30, hash: 'h30', text: checkpointText('s', 30, 'again') }, undefined);
      expect((await all(engine.checkpoints('s', 30)))[0]).toBe(checkpointText('s', 30, 'again'));
      for (const seq of [150, 210, 250, 260]) await engine.putCheckpoint('s', { seq, hash: `h${seq}`, text: checkpointText('s', seq) }, 100);
      expect(await texts()).toEqual([260, 150, 30, 20]);
      expect(await all(engine.checkpoints('other', 1000))).toEqual([]);
    });

    test('hold: head and rows inside; rewrite replaces texts, appends, drops later checkpoints, all at once', async ({ engine }) => {
      const tip = await append(engine, 's', GENESIS, 5);
      for (const seq of [2, 4]) await engine.putCheckpoint('s', { seq, hash: `h${seq}`, text: checkpointText('s', seq) }, 1);
      const [next] = engineRows('s', tip, 1, 'erased').rows as [EngineRow];
      const result = await engine.hold('s', async (held) => {
        expect(await held.head()).toMatchObject({ seq: 5, hash: tip.hash });
        expect((await all(held.rows(2, 4))).flat().map(([seq]) => seq)).toEqual([2, 3, 4]);
        await held.rewrite({ replace: [{ seq: 3, text: '{"replaced":3}' }], append: next, checkpointsFrom: 3, keyId: undefined });
        return 'done';
      });
      expect(result).toBe('done');
      expect(await engine.head('s')).toMatchObject({ seq: 6, hash: next.hash });
      const stored = await rowsOf(engine, 's');
      expect(stored.map(([seq]) => seq)).toEqual([1, 2, 3, 4, 5, 6]);
      expect(stored[2]?.[1]).toBe('{"replaced":3}');
      expect(stored[5]?.[1]).toBe(next.text);
      expect((await all(engine.checkpoints('s', 100))).map((text) => (JSON.parse(text) as { seq: number }).seq)).toEqual([2]);
    });

    test('hold: work that rejects leaves nothing of what it wrote', async ({ engine }) => {
      if (engine.singleWriter) return; // a single writer's hold commits each change as it is made; the log never rejects after one
      const tip = await append(engine, 's', GENESIS, 3);
      const [next] = engineRows('s', tip, 1, 'erased').rows as [EngineRow];
      const failure = new Error('work failed');
      let caught: unknown;
      try {
        await engine.hold('s', async (held) => {
          await held.rewrite({ replace: [{ seq: 2, text: '{"replaced":2}' }], append: next, checkpointsFrom: 2, keyId: undefined });
          throw failure;
        });
      } catch (error) {
        caught = error;
      }
      expect(caught).toBe(failure);
      expect(await engine.head('s')).toMatchObject(tip);
      expect((await rowsOf(engine, 's')).map(([, text]) => text)).toEqual(engineRows('s', GENESIS, 3).rows.map((row) => row.text));
    });

    test('hold keeps other handles out: a write onto the held head waits, then finds the head moved', async ({ engine, openAnother }) => {
      if (engine.singleWriter || !openAnother) return;
      const other = await openAnother();
      const tip = await append(engine, 's', GENESIS, 2);
      const [next] = engineRows('s', tip, 1, 'held').rows as [EngineRow];
      const racing = engineRows('s', tip, 1, 'racing');
      let raced: Promise<boolean | void> | undefined;
      await engine.hold('s', async (held) => {
        await held.head();
        raced = other.write('s', { base: tip, tip: racing.tip, rows: racing.rows, keyId: undefined });
        await new Promise((resolve) => setTimeout(resolve, 100)); // the racing write reaches the store meanwhile
        await held.rewrite({ replace: [], append: next, checkpointsFrom: 3, keyId: undefined });
      });
      expect(await raced).toBe(false);
      expect(await other.head('s')).toMatchObject({ seq: 3, hash: next.hash });
      expect((await rowsOf(other, 's', 3, 3))[0]?.[1]).toBe(next.text);
    });

    test('hold: remove deletes the events, checkpoints and head record, and tells how many events there were', async ({ engine }) => {
      const tip = await append(engine, 's', GENESIS, 4);
      await append(engine, 'kept', GENESIS, 1);
      await engine.putCheckpoint('s', { seq: 2, hash: 'h2', text: checkpointText('s', 2) }, undefined);
      expect(await engine.hold('s', (held) => held.remove())).toBe(4);
      expect(await engine.head('s')).toBe(undefined);
      expect(await rowsOf(engine, 's')).toEqual([]);
      expect(await all(engine.checkpoints('s', 100))).toEqual([]);
      expect(await all(engine.sessions())).toEqual(['kept']);
      if (engine.headRecord) expect(await engine.headRecord('s')).toBe(undefined);
      expect((await append(engine, 's', GENESIS, 1)).seq).toBe(1);
      expect(tip.seq).toBe(4);
    });

    test('watch (when the engine has it): another handle\'s write wakes the watcher; the stop function stops it', async ({ engine, openAnother }) => {
      if (!engine.watch) return;
      const writer = openAnother ? await openAnother() : engine;
      let woken = 0;
      const stop = await engine.watch('s', () => {
        woken += 1;
      });
      const base = await append(writer, 's', GENESIS, 1);
      for (let waited = 0; woken === 0; waited += 20) {
        if (waited > 20_000) throw new Error('the watcher was not woken within 20 s of a write');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      stop();
      await new Promise((resolve) => setTimeout(resolve, 50));
      const after = woken;
      await append(writer, 's', base, 1);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(woken).toBe(after);
    });
  });
};
