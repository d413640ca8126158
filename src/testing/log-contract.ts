// The SessionEventLog contract suite, published for every store (ours and users'): abstract-level's `suite` style.
import {
  EVENT_VERSIONS,
  InvalidEventError,
  type NewSessionEvent,
  type SessionEvent,
} from '../events/index.js';
import { InvalidOptionsError } from '../base/errors.js';
import {
  GENESIS_HASH,
  InvalidCheckpointError,
  chainHash,
  ChainBrokenError,
  ExpectedSeqConflictError,
  InvalidSessionIdError,
  LogClosedError,
  StoredChainError,
  openMemoryLog,
  type Anchor,
  type Clock,
  type SessionEventLog,
  type Redactor,
} from '../log/index.js';
import { describePrivacyContract } from './log-contract-privacy.js';
import type { ContractTestApi } from './contract-api.js';

/** Options the suite passes to `open`. */
export interface LogHarnessOpenOptions {
  readonly clock?: Clock;
  /** Largest stored event in UTF-8 bytes; every store takes this option (the suite checks the limit with a small one). */
  readonly maxEventBytes?: number;
  /** The log's `redact` option (the privacy tests pass it; a harness hands its options to the store). */
  readonly redact?: Redactor;
}

/** One fresh, empty store, made by `SessionEventLogHarness.create` for one test. */
export interface LogHarnessStore {
  /** Opens the log (the first call creates it); the options apply to later `reopen` calls too. */
  open(options?: LogHarnessOpenOptions): Promise<SessionEventLog>;
  /** Closes the log last opened (if still open) and opens the same store again. Needed when `persistent`. */
  reopen?(): Promise<SessionEventLog>;
  /**
   * Opens a second, independent handle on the same store, as another process or machine would
   * (its own connections, no shared in-process state). Needed when `multiProcess`; `cleanup` closes it.
   */
  openAnother?(options?: LogHarnessOpenOptions): Promise<SessionEventLog>;
  /**
   * Edits the stored text of one event in place, as a disk fault or someone with write access to the
   * store would (the head and every other record stay as they are), and gives the log to use from then
   * on (a store may close and reopen to do it). Needed when `tamperable`.
   */
  tamper?(sessionId: string, seq: number, edit: (stored: string) => string): Promise<SessionEventLog>;
  /** Closes whatever is open and removes what the harness created. */
  cleanup(): Promise<void>;
}

/** How the contract suite (and the model test) gets stores, and what they can do. */
export interface SessionEventLogHarness {
  /** Makes a fresh, empty store for one test. */
  create(): LogHarnessStore | Promise<LogHarnessStore>;
  /** The store keeps its data across `reopen`: run the persistence tests. */
  readonly persistent?: boolean;
  /** Several handles (processes, machines) may use the store at once (`openAnother`): run the cross-handle tests. */
  readonly multiProcess?: boolean;
  /** The store's `tamper` edits stored events: run the tests of damage detection (verify, read with verify, anchors). */
  readonly tamperable?: boolean;
  /**
   * How many per-session writer states (queues, cached heads) the store holds for `log` now. Given, the suite
   * checks that idle ones are released: after appends to 300 sessions, one after another, fewer than 300 are held,
   * and 300 more sessions do not make it more. This library's stores: `writerStateCount` (from `context-ledger`).
   */
  readonly writerStates?: (log: SessionEventLog) => number;
}

/** The part of an assertion the suite uses (vitest's and jest's `expect` fit). */
export interface ContractAssertion {
  toBe(expected: unknown): void;
  toEqual(expected: unknown): void;
  toMatchObject(expected: object): void;
  toHaveLength(length: number): void;
  toContain(item: unknown): void;
  toMatch(expected: string | RegExp): void;
  toBeUndefined(): void;
  toBeGreaterThanOrEqual(expected: number): void;
  readonly not: ContractAssertion;
  readonly rejects: { toThrow(expected?: unknown): Promise<unknown> };
}

/** `describe`, `it` and `expect` of the runner that hosts the suite (vitest's and jest's fit). */
export interface LogContractTestApi extends ContractTestApi {
  expect(actual: unknown): ContractAssertion;
}

// ---- helpers shared by the log tests ----

export const collect = async <T>(iterable: AsyncIterable<T>): Promise<T[]> => {
  const out: T[] = [];
  for await (const value of iterable) out.push(value);
  return out;
};

/** The rejection of a promise (fails when it resolves). */
export const rejectionOf = async (promise: Promise<unknown> | (() => Promise<unknown>)): Promise<unknown> => {
  try {
    await (typeof promise === 'function' ? promise() : promise);
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection, but it resolved');
};

export const userInput = (text: string): NewSessionEvent => ({
  type: 'user.input',
  items: [{ type: 'message', role: 'user', content: text }],
});

export const toolResult = (callId: string, output: string): NewSessionEvent => ({ type: 'tool.result', callId, output });

/** `n` user inputs whose texts are `${tag}.0`, `${tag}.1`, ... */
export const inputs = (tag: string, n: number): NewSessionEvent[] => Array.from({ length: n }, (_, i) => userInput(`${tag}.${i}`));

/** The text of a user.input event written by `userInput`. */
export const textOfInput = (event: SessionEvent): string => {
  if (event.type !== 'user.input') return `<${event.type}>`;
  const item = event.items[0] as { content?: unknown } | undefined;
  return typeof item?.content === 'string' ? item.content : '<?>';
};

/** A clock that ticks one second per call from 2026-01-01T00:00:00Z; `calls` lists what it returned. */
export const tickingClock = (): { clock: Clock; calls: string[] } => {
  const calls: string[] = [];
  let n = 0;
  return {
    calls,
    clock: () => {
      const at = new Date(Date.UTC(2026, 0, 1, 0, 0, n++));
      calls.push(at.toISOString());
      return at;
    },
  };
};

const seqsOf = (events: readonly SessionEvent[]): number[] => events.map((e) => e.seq);
const range = (from: number, to: number): number[] => Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);

/** Checks the whole envelope of a session's stored events: seqs 1..n, the hash chain, sessionId and v. */
export const expectWellFormedChain = (expect: LogContractTestApi['expect'], sessionId: string, events: readonly SessionEvent[]): void => {
  expect(seqsOf(events)).toEqual(range(1, events.length));
  let prevHash = GENESIS_HASH;
  for (const event of events) {
    expect(event.sessionId).toBe(sessionId);
    expect(event.v).toBe(EVENT_VERSIONS[event.type]);
    expect(event.prevHash).toBe(prevHash);
    expect(event.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(chainHash(prevHash, event as unknown as Record<string, unknown>)).toBe(event.hash);
    prevHash = event.hash;
  }
};

const ODD_IDS = ['a', 'ab', 'a/b', '..', '../a', 'x\u0000y', 'a\u0000', '\u0001', ' ', 'é', '\u{1F600}', '\ud800', 'h\u0000', 'e'];

/** Every contract test takes well under a second on a local store; a hung one fails at this bound. */
const TEST_TIMEOUT_MS = 30_000;

/**
 * Registers the SessionEventLog contract for one store with the host runner's `describe`, `it` and
 * `expect`. Each test gets a fresh store from `harness.create()` and cleans it up afterwards.
 * @example
 * import { describe, expect, it } from 'vitest';
 * import { describeSessionEventLogContract } from 'context-ledger/testing';
 * describeSessionEventLogContract({ describe, it, expect }, 'my store', { persistent: true, create: () => myStoreHarness() });
 */
export const describeSessionEventLogContract = (api: LogContractTestApi, name: string, suiteHarness: SessionEventLogHarness): void => {
  const { describe, it } = api;
  const expect = (actual: unknown): ContractAssertion => api.expect(actual);
  const test = (title: string, body: (harness: LogHarnessStore) => Promise<void>): void => {
    it(
      title,
      async () => {
        const harness = await suiteHarness.create();
        try {
          await body(harness);
        } finally {
          await harness.cleanup();
        }
      },
      TEST_TIMEOUT_MS,
    );
  };
  describe(`SessionEventLog contract: ${name}`, () => {

    describe('append', () => {
      test('maxEventBytes: a larger event is an InvalidEventError naming the session and index, and nothing of its append is written', async (harness) => {
        const log = await harness.open({ maxEventBytes: 4096 });
        await log.append('big', inputs('before', 2));
        const error = (await rejectionOf(log.append('big', [userInput('fine'), userInput('x'.repeat(5000))]))) as { code?: unknown; sessionId?: unknown; index?: unknown; message?: unknown };
        expect(error).toMatchObject({ code: 'INVALID_EVENT', sessionId: 'big', index: 1 });
        expect(String(error.message)).toMatch(/more than maxEventBytes \(4096\)/);
        expect(await log.head('big')).toBe(2);
        expect(seqsOf(await log.append('big', inputs('after', 1)))).toEqual([3]);
        expect(await log.verify('big')).toMatchObject({ valid: true, eventCount: 3 });
      });

      test('appends to more sessions than a store keeps writers for stay correct when it goes back to the first ones', async (harness) => {
        const log = await harness.open();
        const ids = Array.from({ length: 300 }, (_, i) => `many-${i}`);
        for (const id of ids) await log.append(id, inputs(id, 1));
        for (const id of ids.slice(0, 5)) expect(seqsOf(await log.append(id, inputs(`${id}.again`, 1), { expectedSeq: 1 }))).toEqual([2]);
        expect(await log.head('many-299')).toBe(1);
        expect(await log.verify('many-0')).toMatchObject({ valid: true, eventCount: 2 });
      });

      if (suiteHarness.writerStates) {
        const writerStates = suiteHarness.writerStates;
        test('idle per-session writer states are released: 300 sessions leave fewer than 300, and 300 more do not add to them', async (harness) => {
          const log = await harness.open();
          for (let i = 0; i < 300; i++) await log.append(`idle-${i}`, inputs('x', 1));
          const afterFirst = writerStates(log);
          expect(afterFirst < 300 ? 'fewer than 300' : `${afterFirst} writer states for 300 sessions`).toBe('fewer than 300');
          for (let i = 300; i < 600; i++) await log.append(`idle-${i}`, inputs('x', 1));
          const afterSecond = writerStates(log);
          expect(afterSecond <= afterFirst ? 'no more' : `${afterSecond} after 600 sessions, ${afterFirst} after 300`).toBe('no more');
          // a released session goes on where it was
          expect(seqsOf(await log.append('idle-0', inputs('again', 1), { expectedSeq: 1 }))).toEqual([2]);
          expect(await log.verify('idle-0')).toMatchObject({ valid: true, eventCount: 2 });
        });
      }

      test('assigns seqs 1.. without gaps and fills the envelope (at from the injected clock, v, hash chain)', async (harness) => {
        const { clock, calls } = tickingClock();
        const log = await harness.open({ clock });
        const first = await log.append('s1', [userInput('hi'), { type: 'memory.cleared' }]);
        const second = await log.append('s1', [toolResult('c1', 'ok')]);
        const third = await log.append('s1', inputs('t', 3));

        expect(seqsOf(first)).toEqual([1, 2]);
        expect(seqsOf(second)).toEqual([3]);
        expect(seqsOf(third)).toEqual([4, 5, 6]);
        const all = [...first, ...second, ...third];
        expectWellFormedChain(expect, 's1', all);

        // one clock reading per append, shared by the batch
        expect(calls).toHaveLength(3);
        expect(first.map((e) => e.at)).toEqual([calls[0], calls[0]]);
        expect(second[0]?.at).toBe(calls[1]);
        expect(third.map((e) => e.at)).toEqual([calls[2], calls[2], calls[2]]);

        // payloads kept, defaults filled, current versions
        expect(first[0]).toMatchObject({ type: 'user.input', items: [{ type: 'message', role: 'user', content: 'hi' }], v: 1 });
        expect(first[1]).toMatchObject({ type: 'memory.cleared', v: 1 });
        expect(second[0]).toMatchObject({ type: 'tool.result', callId: 'c1', output: 'ok', isError: false, v: 2 });

        // what append returned is what read gives back
        expect(await collect(log.read('s1'))).toEqual(all);
        expect(await log.head('s1')).toBe(6);
      });

      test('returns what read gives back, key order included (law 10), whatever order the caller wrote keys in', async (harness) => {
        const log = await harness.open({ clock: () => '2026-01-01T00:00:00.000Z' });
        const unsorted = [
          { output: 'o', isError: true, callId: 'c1', type: 'tool.result' },
          { items: [{ content: 'hi', role: 'user', type: 'message' }], type: 'user.input' },
          { type: 'session.started', metadata: { z: 1, a: { y: [{ b: 2, a: 1 }], x: null } } },
        ] as unknown as NewSessionEvent[];
        const appended = await log.append('s', unsorted);
        const appendedAlone = await log.append('s', [unsorted[0] as NewSessionEvent]);
        const read = await collect(log.read('s'));
        expect(JSON.stringify(read)).toBe(JSON.stringify([...appended, ...appendedAlone]));
      });

      test('writes an append made the moment the previous one resolved (no lost wake-up)', async (harness) => {
        const log = await harness.open();
        // each append is awaited directly (no wrapper that adds microtask hops); a timer bounds the whole row
        const inARow = async (): Promise<void> => {
          for (let i = 1; i <= 5; i++) {
            const [stored] = await log.append('s', inputs(`n${i}`, 1));
            expect(stored?.seq).toBe(i);
          }
          await log.append('s', inputs('bad', 1), { expectedSeq: 0 }).catch(() => undefined);
          const [after] = await log.append('s', inputs('after', 1));
          expect(after?.seq).toBe(6);
        };
        let timer: NodeJS.Timeout | undefined;
        const deadline = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('an append is still pending after 5 s: it was queued but never written')), 5_000);
        });
        try {
          await Promise.race([inARow(), deadline]);
        } finally {
          clearTimeout(timer);
        }
      });

      test('turns a clock reading given as a string or epoch millis into the `at` field', async (harness) => {
        const readings: (string | number)[] = ['2026-03-04T05:06:07.089Z', Date.UTC(2026, 1, 2, 3, 4, 5, 6)];
        let i = 0;
        const log = await harness.open({ clock: () => readings[i++] ?? 0 });
        const [a] = await log.append('s', [{ type: 'memory.cleared' }]);
        const [b] = await log.append('s', [{ type: 'memory.cleared' }]);
        expect(a?.at).toBe('2026-03-04T05:06:07.089Z');
        expect(b?.at).toBe('2026-02-02T03:04:05.006Z');
      });

      test('resolves an empty batch with [] and writes nothing', async (harness) => {
        const log = await harness.open();
        expect(await log.append('s', [])).toEqual([]);
        expect(await log.head('s')).toBe(0);
        expect(await collect(log.sessions())).toEqual([]);
        await log.append('s', inputs('x', 2));
        expect(await log.append('s', [], { expectedSeq: 2 })).toEqual([]);
        expect(await log.head('s')).toBe(2);
      });

      test('accepts expectedSeq equal to the head before the append (0 for a new session)', async (harness) => {
        const log = await harness.open();
        expect(seqsOf(await log.append('s', inputs('a', 2), { expectedSeq: 0 }))).toEqual([1, 2]);
        expect(seqsOf(await log.append('s', inputs('b', 1), { expectedSeq: 2 }))).toEqual([3]);
        expect(seqsOf(await log.append('s', inputs('c', 1)))).toEqual([4]);
        expect(seqsOf(await log.append('s', inputs('d', 2), { expectedSeq: 4 }))).toEqual([5, 6]);
        expect(await log.head('s')).toBe(6);
      });

      test('rejects a wrong expectedSeq with ExpectedSeqConflictError and writes nothing', async (harness) => {
        const log = await harness.open();
        const onEmpty = await rejectionOf(log.append('s', inputs('x', 1), { expectedSeq: 1 }));
        expect(ExpectedSeqConflictError.isInstance(onEmpty)).toBe(true);
        expect(onEmpty).toMatchObject({ name: 'ExpectedSeqConflictError', sessionId: 's', expectedSeq: 1, actualSeq: 0 });
        expect(await log.head('s')).toBe(0);
        expect(await collect(log.sessions())).toEqual([]);

        const written = await log.append('s', inputs('ok', 2), { expectedSeq: 0 });
        for (const wrong of [0, 1, 3, 10]) {
          const error = await rejectionOf(log.append('s', inputs(`bad${wrong}`, 2), { expectedSeq: wrong }));
          expect(ExpectedSeqConflictError.isInstance(error)).toBe(true);
          const conflict = error as ExpectedSeqConflictError;
          expect(conflict.expectedSeq).toBe(wrong);
          expect(conflict.actualSeq).toBe(2);
          expect(conflict.message).toContain('nothing was written');
        }
        expect(ExpectedSeqConflictError.isInstance(new Error('x'))).toBe(false);
        expect(await log.head('s')).toBe(2);
        expect(await collect(log.read('s'))).toEqual(written);
        expect(await log.verify('s')).toEqual({ valid: true, eventCount: 2, firstBrokenSeq: null });
        // the log still takes the right expectedSeq afterwards
        expect(seqsOf(await log.append('s', inputs('next', 1), { expectedSeq: 2 }))).toEqual([3]);
      });

      test('rejects an expectedSeq that is not a non-negative integer', async (harness) => {
        const log = await harness.open();
        for (const bad of [-1, 1.5, Number.NaN]) {
          await expect(log.append('s', inputs('x', 1), { expectedSeq: bad })).rejects.toThrow();
        }
        expect(await log.head('s')).toBe(0);
      });

      test('writes nothing of a batch with an invalid event; the error names the index and the zod path', async (harness) => {
        const log = await harness.open();
        const before = await log.append('s', inputs('before', 2));
        const badItem = { type: 'user.input', items: [{ role: 'user', content: 'no type' }] } as unknown as NewSessionEvent;
        const error = await rejectionOf(log.append('s', [userInput('ok.0'), toolResult('c1', 'ok'), badItem, userInput('ok.3')]));
        expect(InvalidEventError.isInstance(error)).toBe(true);
        const invalid = error as InvalidEventError;
        expect(invalid.index).toBe(2);
        expect(invalid.sessionId).toBe('s');
        expect(invalid.issues.map((i) => i.path)).toContain('items.0.type');
        expect(invalid.message).toContain('#2');
        expect(invalid.message).toContain('items.0.type');

        expect(await log.head('s')).toBe(2);
        expect(await collect(log.read('s'))).toEqual(before);
        expect(await log.verify('s')).toEqual({ valid: true, eventCount: 2, firstBrokenSeq: null });
      });

      for (const [label, bad, path] of [
        ['an unknown type', { type: 'no.such.event' }, 'type'],
        ['a missing type', { items: [] }, 'type'],
        ['a payload field of the wrong type', { type: 'tool.result', callId: 'c1', output: 42 }, 'output'],
        ['an empty required string', { type: 'tool.result', callId: '', output: 'x' }, 'callId'],
        ['an envelope field set by the caller', { type: 'memory.cleared', seq: 7 }, 'seq'],
        ['an event that is not an object', 'memory.cleared', ''],
      ] as const) test(`rejects ${label} with its path and writes nothing`, async (harness) => {
        const log = await harness.open();
        const error = await rejectionOf(log.append('s', [userInput('fine'), bad as unknown as NewSessionEvent]));
        expect(InvalidEventError.isInstance(error)).toBe(true);
        expect((error as InvalidEventError).index).toBe(1);
        expect((error as InvalidEventError).issues.map((i) => i.path)).toContain(path);
        expect(await log.head('s')).toBe(0);
        expect(await collect(log.sessions())).toEqual([]);
      });

      test('rejects values that cannot be JSON (BigInt, cycles) and writes nothing', async (harness) => {
        const log = await harness.open();
        const cyclic: Record<string, unknown> = { name: 'loop' };
        cyclic['self'] = cyclic;
        for (const metadata of [{ big: 10n }, cyclic]) {
          const event = { type: 'session.started', metadata } as unknown as NewSessionEvent;
          const error = await rejectionOf(log.append('s', [userInput('first'), event]));
          expect(InvalidEventError.isInstance(error)).toBe(true);
          expect((error as InvalidEventError).index).toBe(1);
          expect((error as InvalidEventError).message).toMatch(/JSON/);
        }
        expect(await log.head('s')).toBe(0);
      });

      test('stores the JSON form of a value (an undefined property left out) and returns exactly what read gives back', async (harness) => {
        const log = await harness.open();
        const metadata = { when: '2026-01-01T00:00:00.000Z', gone: undefined, nested: [1, -0, 'x'] };
        const [stored] = await log.append('s', [{ type: 'session.started', metadata } as unknown as NewSessionEvent]);
        expect(stored).toMatchObject({ metadata: { when: '2026-01-01T00:00:00.000Z', nested: [1, 0, 'x'] } });
        expect(Object.keys((stored as { metadata: object } | undefined)?.metadata ?? {})).not.toContain('gone');
        expect(await collect(log.read('s'))).toEqual([stored]);
        expect((await log.verify('s')).valid).toBe(true);
      });

      test('rejects an empty session id with InvalidSessionIdError everywhere', async (harness) => {
        const log = await harness.open();
        const errors = [
          await rejectionOf(log.append('', inputs('x', 1))),
          await rejectionOf(log.append(42 as unknown as string, inputs('x', 1))),
          await rejectionOf(log.head('')),
          await rejectionOf(collect(log.read(''))),
          await rejectionOf(log.verify('')),
          await rejectionOf(log.putCheckpoint('', { seq: 1, hash: 'h', data: null })),
          await rejectionOf(log.latestCheckpoint('')),
          await rejectionOf(log.checkpointAtOrBefore('', 1)),
          await rejectionOf(collect(log.readStored(''))),
          await rejectionOf(log.importStored('', [])),
          await rejectionOf(log.anchor('')),
          await rejectionOf(collect(log.read('', { verify: true }))),
        ];
        for (const error of errors) {
          expect(InvalidSessionIdError.isInstance(error)).toBe(true);
          expect((error as Error).name).toBe('InvalidSessionIdError');
        }
        expect(await collect(log.sessions())).toEqual([]);
      });
    });

    describe('read', () => {
      test('reads seq ranges inclusively, with empty ranges and ranges past the head', async (harness) => {
        const log = await harness.open();
        await log.append('s', inputs('a', 3));
        await log.append('s', inputs('b', 4));
        await log.append('s', inputs('c', 3));
        await log.append('other', inputs('o', 5));
        const read = async (options: { fromSeq?: number; toSeq?: number }): Promise<number[]> =>
          seqsOf(await collect(log.read('s', options)));

        expect(await read({})).toEqual(range(1, 10));
        expect(await read({ fromSeq: 3 })).toEqual(range(3, 10));
        expect(await read({ toSeq: 4 })).toEqual(range(1, 4));
        expect(await read({ fromSeq: 3, toSeq: 5 })).toEqual([3, 4, 5]);
        expect(await read({ fromSeq: 5, toSeq: 5 })).toEqual([5]);
        expect(await read({ fromSeq: 6, toSeq: 5 })).toEqual([]);
        expect(await read({ fromSeq: 10 })).toEqual([10]);
        expect(await read({ fromSeq: 11 })).toEqual([]);
        expect(await read({ fromSeq: 100, toSeq: 200 })).toEqual([]);
        expect(await read({ fromSeq: 8, toSeq: 100 })).toEqual([8, 9, 10]);
        expect(await read({ fromSeq: 0, toSeq: 2 })).toEqual([1, 2]);
        expect(await read({ toSeq: 0 })).toEqual([]);

        const texts = (await collect(log.read('s', { fromSeq: 3, toSeq: 5 }))).map(textOfInput);
        expect(texts).toEqual(['a.2', 'b.0', 'b.1']);
        expect(await collect(log.read('unknown'))).toEqual([]);
      });

      test('streams more events than one read chunk, in seq order', async (harness) => {
        const log = await harness.open();
        const written: SessionEvent[] = [];
        for (const n of [500, 400, 300]) written.push(...(await log.append('big', inputs(`b${n}`, n))));
        const read = await collect(log.read('big'));
        expect(read).toHaveLength(1200);
        expect(read).toEqual(written);
        expectWellFormedChain(expect, 'big', read);
        expect(seqsOf(await collect(log.read('big', { fromSeq: 510, toSeq: 1030 })))).toEqual(range(510, 1030));
      });

      test('gives an iterable that can be iterated again, and stopping early leaves the log usable', async (harness) => {
        const log = await harness.open();
        await log.append('s', inputs('x', 5));
        const iterable = log.read('s');
        expect(await collect(iterable)).toHaveLength(5);
        for await (const event of iterable) {
          expect(event.seq).toBe(1);
          break;
        }
        await log.append('s', inputs('y', 1));
        expect(await collect(iterable)).toHaveLength(6);
      });
    });

    describe('head, sessions, verify', () => {
      test('head is 0 for an unknown session and the last seq otherwise', async (harness) => {
        const log = await harness.open();
        expect(await log.head('nobody')).toBe(0);
        await log.append('s', inputs('x', 3));
        expect(await log.head('s')).toBe(3);
        expect(await log.head('nobody')).toBe(0);
        expect(await log.head('s\u0000')).toBe(0);
        expect(await log.head('S')).toBe(0);
      });

      test('sessions() lists exactly the ids with events, odd ids included', async (harness) => {
        const log = await harness.open();
        expect(await collect(log.sessions())).toEqual([]);
        for (const [i, id] of ODD_IDS.entries()) await log.append(id, inputs(id, (i % 3) + 1));
        await log.append('empty-batch-only', []);
        await rejectionOf(log.append('conflict-only', inputs('x', 1), { expectedSeq: 4 }));
        await rejectionOf(log.append('invalid-only', [{ type: 'nope' } as unknown as NewSessionEvent]));
        const listed = await collect(log.sessions());
        expect([...listed].sort()).toEqual([...ODD_IDS].sort());
        expect(new Set(listed).size).toBe(listed.length);
        for (const [i, id] of ODD_IDS.entries()) expect(await log.head(id)).toBe((i % 3) + 1);
      });

      test('verify is valid with the event count on good logs, and on unknown sessions', async (harness) => {
        const log = await harness.open();
        expect(await log.verify('nobody')).toEqual({ valid: true, eventCount: 0, firstBrokenSeq: null });
        await log.append('s', inputs('a', 1));
        expect(await log.verify('s')).toEqual({ valid: true, eventCount: 1, firstBrokenSeq: null });
        await log.append('s', [toolResult('c', 'out'), { type: 'memory.cleared' }, userInput('z')]);
        await log.append('t', inputs('t', 2));
        expect(await log.verify('s')).toEqual({ valid: true, eventCount: 4, firstBrokenSeq: null });
        expect(await log.verify('t')).toEqual({ valid: true, eventCount: 2, firstBrokenSeq: null });
      });
    });

    describe('anchors, rollback and read with verify', () => {
      const hashAt = (events: readonly SessionEvent[], seq: number): string => events[seq - 1]?.hash ?? '';
      /** The seqs a read gives before it fails, and its error (undefined when it does not fail). */
      const readUntilError = async (iterable: AsyncIterable<SessionEvent>): Promise<{ seqs: number[]; error: unknown }> => {
        const seqs: number[] = [];
        try {
          for await (const event of iterable) seqs.push(event.seq);
        } catch (error) {
          return { seqs, error };
        }
        return { seqs, error: undefined };
      };

      test('anchor gives the head as { seq, hash } after pending appends; the genesis hash for an unknown session', async (harness) => {
        const log = await harness.open();
        expect(await log.anchor('s')).toEqual({ seq: 0, hash: GENESIS_HASH });
        const written = await log.append('s', inputs('x', 3));
        expect(await log.anchor('s')).toEqual({ seq: 3, hash: hashAt(written, 3) });
        await log.append('other', inputs('o', 2));
        expect(await log.anchor('s')).toEqual({ seq: 3, hash: hashAt(written, 3) });
        // an append not yet awaited is part of the anchor
        const pending = log.append('s', inputs('y', 2));
        const anchor = await log.anchor('s');
        const after = await pending;
        expect(anchor).toEqual({ seq: 5, hash: hashAt(after, 2) });
        expect(await log.anchor('s\u0000')).toEqual({ seq: 0, hash: GENESIS_HASH });
      });

      test('verify with anchors taken along the way is valid; malformed or contradictory anchors are refused', async (harness) => {
        const log = await harness.open();
        const anchors: Anchor[] = [await log.anchor('s')];
        let total = 0;
        for (const n of [1, 3, 2]) {
          total += (await log.append('s', inputs(`a${n}`, n))).length;
          anchors.push(await log.anchor('s'));
        }
        expect(await log.verify('s', { anchors })).toEqual({ valid: true, eventCount: total, firstBrokenSeq: null });
        expect(await log.verify('s', { anchors: [...anchors].reverse() })).toEqual({ valid: true, eventCount: total, firstBrokenSeq: null });
        expect(await log.verify('s', { anchors: [] })).toEqual({ valid: true, eventCount: total, firstBrokenSeq: null });
        const last = anchors[anchors.length - 1] as Anchor;
        const malformed: unknown[] = [
          'not an array',
          [null],
          [{ seq: -1, hash: last.hash }],
          [{ seq: 1.5, hash: last.hash }],
          [{ seq: 1, hash: 'not a hash' }],
          [{ seq: 1, hash: last.hash.toUpperCase() }],
          [last, { seq: last.seq, hash: GENESIS_HASH }],
        ];
        for (const bad of malformed) {
          await expect(log.verify('s', { anchors: bad as Anchor[] })).rejects.toThrow(InvalidOptionsError);
        }
        // an anchor at seq 0 must be the genesis hash
        const genesis = await log.verify('s', { anchors: [{ seq: 0, hash: last.hash }] });
        expect(genesis.valid).toBe(false);
        expect(genesis.firstBrokenSeq).toBe(1);
      });

      test('an anchor past the end reports rollback; an anchor on a rewritten chain names the seq', async (harness) => {
        const { clock } = tickingClock();
        const log = await harness.open({ clock });
        const written = [...(await log.append('s', inputs('a', 3))), ...(await log.append('s', inputs('b', 2)))];
        const early: Anchor = { seq: 3, hash: hashAt(written, 3) };
        const kept = await log.anchor('s');
        expect(kept).toEqual({ seq: 5, hash: hashAt(written, 5) });
        const texts = await collect(log.readStored('s'));
        // the session as a store restored from an older backup holds it: its first three events
        const restoredStore = await suiteHarness.create();
        try {
          const restored = await restoredStore.open({ clock });
          expect(await restored.importStored('s', texts.slice(0, 3))).toEqual({ imported: 3, head: 3 });
          // without anchors nothing shows: the shorter chain is consistent
          expect(await restored.verify('s')).toEqual({ valid: true, eventCount: 3, firstBrokenSeq: null });
          expect(await restored.verify('s', { anchors: [early] })).toEqual({ valid: true, eventCount: 3, firstBrokenSeq: null });
          const rollback = await restored.verify('s', { anchors: [early, kept] });
          expect(rollback).toMatchObject({ valid: false, rollback: true, eventCount: 3, firstBrokenSeq: 4 });
          expect(rollback.problem ?? '').toMatch(/rollback/);
          // appending past the cut does not hide it: the anchored seq now holds another event
          await restored.append('s', inputs('c', 2));
          const rewritten = await restored.verify('s', { anchors: [early, kept] });
          expect(rewritten).toMatchObject({ valid: false, eventCount: 5, firstBrokenSeq: 5 });
          expect(rewritten.rollback).toBeUndefined();
          expect(rewritten.problem ?? '').toMatch(/anchor/);
          expect(await restored.verify('s', { anchors: [early] })).toEqual({ valid: true, eventCount: 5, firstBrokenSeq: null });
        } finally {
          await restoredStore.cleanup();
        }
        expect(await log.verify('s', { anchors: [early, kept] })).toEqual({ valid: true, eventCount: 5, firstBrokenSeq: null });
      });

      test('read with verify gives what read gives, for any range, across read chunks', async (harness) => {
        const log = await harness.open();
        const written = [...(await log.append('s', inputs('a', 700))), ...(await log.append('s', inputs('b', 600)))];
        await log.append('other', inputs('o', 3));
        expect(await collect(log.read('s', { verify: true }))).toEqual(written);
        for (const [fromSeq, toSeq] of [
          [2, undefined],
          [999, 1101],
          [1300, undefined],
          [1301, undefined],
          [5, 4],
          [0, 3],
        ] as const) {
          const options = toSeq === undefined ? { fromSeq } : { fromSeq, toSeq };
          expect(await collect(log.read('s', { ...options, verify: true }))).toEqual(await collect(log.read('s', options)));
        }
        expect(await collect(log.read('unknown', { verify: true }))).toEqual([]);
        await expect(collect(log.read('s', { fromSeq: 1.5, verify: true }))).rejects.toThrow(InvalidOptionsError);
      });

      const tamper = (harness: LogHarnessStore, sessionId: string, seq: number, edit: (stored: string) => string): Promise<SessionEventLog> => {
        if (!harness.tamper) throw new Error('a tamperable harness needs tamper()');
        return harness.tamper(sessionId, seq, edit);
      };
      const ifTamperable = suiteHarness.tamperable ? test : (_title: string, _body: (harness: LogHarnessStore) => Promise<void>): void => {};

      ifTamperable('verify and read with verify find an event whose stored text was edited, and name its seq', async (harness) => {
        const first = await harness.open();
        const written = await first.append('s', inputs('x', 6));
        await first.append('t', inputs('t', 2));
        const anchor = await first.anchor('s');
        const log = await tamper(harness, 's', 3, (text) => text.replace('"x.2"', '"x.9"'));

        const result = await log.verify('s');
        expect(result).toMatchObject({ valid: false, firstBrokenSeq: 3 });
        expect(result.problem ?? '').toMatch(/hash/);
        expect((await log.verify('s', { anchors: [anchor] })).firstBrokenSeq).toBe(3);
        expect(await log.verify('t')).toEqual({ valid: true, eventCount: 2, firstBrokenSeq: null });

        // read with verify hands out the events before it, then fails at it
        const verified = await readUntilError(log.read('s', { verify: true }));
        expect(verified.seqs).toEqual([1, 2]);
        expect(ChainBrokenError.isInstance(verified.error)).toBe(true);
        expect((verified.error as ChainBrokenError).seq).toBe(3);
        expect((verified.error as ChainBrokenError).sessionId).toBe('s');
        const fromIt = await readUntilError(log.read('s', { fromSeq: 3, verify: true }));
        expect(fromIt.seqs).toEqual([]);
        expect((fromIt.error as ChainBrokenError | undefined)?.seq).toBe(3);
        // events before fromSeq are not checked: from 4 on the chain holds (4 links to the hash 3 states)
        expect(await collect(log.read('s', { fromSeq: 4, verify: true }))).toEqual(written.slice(3));
        // a plain read still gives the edited event as stored
        expect((await collect(log.read('s'))).map(textOfInput)).toEqual(['x.0', 'x.1', 'x.9', 'x.3', 'x.4', 'x.5']);
      });

      ifTamperable('an anchor finds the last event rewritten with a hash that matches its content', async (harness) => {
        const first = await harness.open();
        const written = await first.append('s', inputs('x', 4));
        const anchor = await first.anchor('s');
        // rewrite event 4 and re-seal it (unkeyed), as someone without a chain key could
        const log = await tamper(harness, 's', 4, (text) => {
          const raw = JSON.parse(text.replace('"x.3"', '"forged"')) as Record<string, unknown>;
          delete raw['hash'];
          raw['hash'] = chainHash(hashAt(written, 3), raw);
          return JSON.stringify(raw);
        });
        const result = await log.verify('s', { anchors: [anchor] });
        expect(result).toMatchObject({ valid: false, firstBrokenSeq: 4 });
        expect(result.rollback).toBeUndefined();
        expect(await collect(log.read('s', { toSeq: 3, verify: true }))).toEqual(written.slice(0, 3));
      });
    });

    describe('concurrency', () => {
      test('serialises concurrent appends to one session: all land, gap-free, each batch contiguous, in call order', async (harness) => {
        const log = await harness.open();
        const sizes = [1, 3, 2, 1, 4, 1, 1, 2, 5, 1, 3, 1, 2, 2, 1, 1, 4, 1, 2, 1];
        const results = await Promise.all(sizes.map((n, call) => log.append('s', inputs(`call${call}`, n))));
        let next = 1;
        for (const [call, batch] of results.entries()) {
          expect(seqsOf(batch)).toEqual(range(next, next + (sizes[call] ?? 0) - 1));
          expect(batch.map(textOfInput)).toEqual(range(0, (sizes[call] ?? 0) - 1).map((i) => `call${call}.${i}`));
          next += batch.length;
        }
        const total = sizes.reduce((a, b) => a + b, 0);
        expect(await log.head('s')).toBe(total);
        const read = await collect(log.read('s'));
        expect(read).toEqual(results.flat());
        expectWellFormedChain(expect, 's', read);
        expect(await log.verify('s')).toEqual({ valid: true, eventCount: total, firstBrokenSeq: null });
      });

      test('keeps working when awaited and concurrent appends alternate', async (harness) => {
        const log = await harness.open();
        let expected = 0;
        for (let round = 0; round < 5; round++) {
          await log.append('s', inputs(`awaited${round}`, 1), { expectedSeq: expected });
          expected += 1;
          const burst = await Promise.all([1, 2, 3].map((n) => log.append('s', inputs(`burst${round}.${n}`, n))));
          expected += burst.flat().length;
          expect(await log.head('s')).toBe(expected);
        }
        expectWellFormedChain(expect, 's', await collect(log.read('s')));
      });

      test('lets exactly one of several concurrent appends with the same expectedSeq win', async (harness) => {
        const log = await harness.open();
        // the winner of the first race writes 2 events, so the second race starts at head 2
        for (const base of [0, 2]) {
          const settled = await Promise.allSettled(
            range(0, 5).map((i) => log.append('s', inputs(`racer${base}.${i}`, 2), { expectedSeq: base })),
          );
          const winners = settled.filter((r) => r.status === 'fulfilled');
          const losers = settled.filter((r) => r.status === 'rejected');
          expect(winners).toHaveLength(1);
          expect(losers).toHaveLength(5);
          for (const loser of losers) {
            expect(ExpectedSeqConflictError.isInstance(loser.reason)).toBe(true);
            expect(loser.reason).toMatchObject({ expectedSeq: base, actualSeq: base + 2 });
          }
          const won = (winners[0] as PromiseFulfilledResult<readonly SessionEvent[]>).value;
          expect(seqsOf(won)).toEqual([base + 1, base + 2]);
          expect(await log.head('s')).toBe(base + 2);
          expect(await collect(log.read('s', { fromSeq: base + 1 }))).toEqual(won);
        }
        expect((await log.verify('s')).valid).toBe(true);
      });

      test('applies concurrent appends whose expectedSeqs chain, in call order', async (harness) => {
        const log = await harness.open();
        const [a, b, c] = await Promise.all([
          log.append('s', inputs('a', 1), { expectedSeq: 0 }),
          log.append('s', inputs('b', 2), { expectedSeq: 1 }),
          log.append('s', inputs('c', 1), { expectedSeq: 3 }),
        ]);
        expect([a, b, c].map((batch) => seqsOf(batch ?? []))).toEqual([[1], [2, 3], [4]]);
      });

      test('lets appends to different sessions interleave freely, each session gap-free', async (harness) => {
        const log = await harness.open();
        const ids = ['A', 'B', 'C', 'A/..', 'A\u0000'];
        const calls = range(0, 39).map((i) => ({ id: ids[i % ids.length] ?? 'A', n: (i % 3) + 1, i }));
        const results = await Promise.all(calls.map(({ id, n, i }) => log.append(id, inputs(`${id}#${i}`, n))));
        for (const id of ids) {
          const mine = calls.filter((c) => c.id === id);
          const total = mine.reduce((sum, c) => sum + c.n, 0);
          expect(await log.head(id)).toBe(total);
          const read = await collect(log.read(id));
          expectWellFormedChain(expect, id, read);
          expect(read.map(textOfInput)).toEqual(mine.flatMap(({ i, n }) => range(0, n - 1).map((k) => `${id}#${i}.${k}`)));
          expect(await log.verify(id)).toEqual({ valid: true, eventCount: total, firstBrokenSeq: null });
        }
        for (const [k, batch] of results.entries()) expect(batch.every((e) => e.sessionId === calls[k]?.id)).toBe(true);
      });
    });

    describe('close', () => {
      test('waits for pending appends, then every use throws LogClosedError', async (harness) => {
        const log = await harness.open();
        const pending = log.append('s', inputs('last', 3));
        await log.close();
        expect(seqsOf(await pending)).toEqual([1, 2, 3]);

        const errors = [
          await rejectionOf(log.append('s', inputs('late', 1))),
          await rejectionOf(log.head('s')),
          await rejectionOf(collect(log.read('s'))),
          await rejectionOf(collect(log.sessions())),
          await rejectionOf(log.verify('s')),
          await rejectionOf(log.putCheckpoint('s', { seq: 1, hash: 'h', data: null })),
          await rejectionOf(log.latestCheckpoint('s')),
          await rejectionOf(log.checkpointAtOrBefore('s', 1)),
          await rejectionOf(collect(log.readStored('s'))),
          await rejectionOf(log.importStored('s', [])),
          await rejectionOf(log.anchor('s')),
          await rejectionOf(collect(log.read('s', { verify: true }))),
        ];
        for (const error of errors) {
          expect(LogClosedError.isInstance(error)).toBe(true);
          expect((error as Error).name).toBe('LogClosedError');
        }
        await log.close(); // closing twice is harmless
      });
    });

    describe('checkpoints', () => {
      test('latestCheckpoint gives the one with the highest seq, per session', async (harness) => {
        const log = await harness.open();
        expect(await log.latestCheckpoint('s')).toBeUndefined();
        const events = await log.append('s', inputs('x', 12));
        const at = (seq: number): string => events[seq - 1]?.hash ?? '';
        await log.putCheckpoint('s', { seq: 2, hash: at(2), data: { items: ['two'] } });
        expect(await log.latestCheckpoint('s')).toEqual({ seq: 2, hash: at(2), data: { items: ['two'] } });
        await log.putCheckpoint('s', { seq: 10, hash: at(10), data: { n: 10 } });
        await log.putCheckpoint('s', { seq: 9, hash: at(9), data: { n: 9 } });
        expect(await log.latestCheckpoint('s')).toEqual({ seq: 10, hash: at(10), data: { n: 10 } });
        await log.putCheckpoint('s', { seq: 10, hash: at(10), data: { n: 'ten', nested: [null, true] } });
        expect(await log.latestCheckpoint('s')).toEqual({ seq: 10, hash: at(10), data: { n: 'ten', nested: [null, true] } });

        expect(await log.latestCheckpoint('s\u0000')).toBeUndefined();
        expect(await log.latestCheckpoint('t')).toBeUndefined();
        await log.append('t', inputs('t', 1));
        await log.putCheckpoint('t', { seq: 1, hash: 'th', data: 't' });
        expect(await log.latestCheckpoint('t')).toEqual({ seq: 1, hash: 'th', data: 't' });
        expect((await log.latestCheckpoint('s'))?.seq).toBe(10);
        // checkpoints are not events
        expect(await log.head('s')).toBe(12);
        expect((await log.verify('s')).valid).toBe(true);
      });

      test('refuses a checkpoint past the head; the newest written is the latest', async (harness) => {
        const log = await harness.open();
        const events = await log.append('p', inputs('x', 6));
        await expect(log.putCheckpoint('p', { seq: 7, hash: 'h', data: null })).rejects.toThrow(InvalidCheckpointError);
        for (const seq of [1, 2, 3, 4, 5]) await log.putCheckpoint('p', { seq, hash: events[seq - 1]!.hash, data: seq });
        expect((await log.latestCheckpoint('p'))?.data).toBe(5);
        await log.putCheckpoint('p', { seq: 6, hash: events[5]!.hash, data: 6 });
        expect((await log.latestCheckpoint('p'))?.data).toBe(6);
      });

      test('rejects read ranges that are not non-negative integers', async (harness) => {
        const log = await harness.open();
        await log.append('r', inputs('x', 3));
        for (const bad of [{ fromSeq: 1.5 }, { toSeq: 2.5 }, { fromSeq: Number.NaN }, { toSeq: -1 }]) {
          await expect(collect(log.read('r', bad))).rejects.toThrow(InvalidOptionsError);
        }
        expect((await collect(log.read('r', { fromSeq: 0 }))).map((e) => e.seq)).toEqual([1, 2, 3]);
      });

      test('rejects a checkpoint seq that is not a positive integer', async (harness) => {
        const log = await harness.open();
        await log.append('s', inputs('x', 1));
        for (const seq of [0, -1, 1.5]) await expect(log.putCheckpoint('s', { seq, hash: 'h', data: null })).rejects.toThrow();
        expect(await log.latestCheckpoint('s')).toBeUndefined();
      });
    });

    describe('checkpointAtOrBefore', () => {
      test('gives the newest readable checkpoint at or below a seq, never past the head', async (harness) => {
        const log = await harness.open();
        expect(await log.checkpointAtOrBefore('b', 5)).toBeUndefined();
        const events = await log.append('b', inputs('x', 40));
        const put = (seq: number, band?: number): Promise<void> =>
          log.putCheckpoint('b', { seq, hash: events[seq - 1]?.hash ?? '', data: seq }, band === undefined ? {} : { band });
        for (const seq of [3, 8, 12, 19, 25, 31]) await put(seq, 10);
        // one per band of 10: 8 (0-9), 19 (10-19; 12 was removed), 25 (20-29), 31 (30-39)
        expect(await log.checkpointAtOrBefore('b', 2)).toBeUndefined();
        expect(await log.checkpointAtOrBefore('b', 7)).toBeUndefined();
        expect((await log.checkpointAtOrBefore('b', 8))?.data).toBe(8);
        expect((await log.checkpointAtOrBefore('b', 18))?.data).toBe(8);
        expect((await log.checkpointAtOrBefore('b', 19))?.data).toBe(19);
        expect((await log.checkpointAtOrBefore('b', 30))?.data).toBe(25);
        expect((await log.checkpointAtOrBefore('b', 1000))?.data).toBe(31);
        expect((await log.latestCheckpoint('b'))?.data).toBe(31);
        await expect(log.checkpointAtOrBefore('b', -1)).rejects.toThrow(InvalidOptionsError);
        await expect(log.putCheckpoint('b', { seq: 5, hash: 'h', data: null }, { band: 0 })).rejects.toThrow(InvalidOptionsError);
        expect(await log.checkpointAtOrBefore('other', 40)).toBeUndefined();
        // without a band only the newest older one is kept
        await put(35);
        expect((await log.checkpointAtOrBefore('b', 34))?.data).toBe(31);
        expect(await log.checkpointAtOrBefore('b', 30)).toBeUndefined();
        expect(await log.head('b')).toBe(40);
      });
    });

    describe('readStored and importStored', () => {
      test('readStored gives each event as stored: the canonical text that parses to what read gives', async (harness) => {
        const log = await harness.open();
        const written = await log.append('s', [userInput('a'), toolResult('c', 'out'), { type: 'memory.cleared' }, userInput('z')]);
        const texts = await collect(log.readStored('s'));
        expect(texts).toHaveLength(4);
        expect(texts.map((text) => JSON.parse(text) as unknown)).toEqual(written);
        for (const text of texts) expect(text).toMatch(/,"hash":"[0-9a-f]{64}"\}$/);
        expect(await collect(log.readStored('s', { fromSeq: 2, toSeq: 3 }))).toEqual(texts.slice(1, 3));
        expect(await collect(log.readStored('nobody'))).toEqual([]);
        await expect(collect(log.readStored('s', { fromSeq: 1.5 }))).rejects.toThrow(InvalidOptionsError);
      });

      test('a session copied out and back keeps every field, verifies, and its chain continues', async (harness) => {
        const { clock } = tickingClock();
        const log = await harness.open({ clock });
        for (const id of ['s', 'x\u0000y', '\ud800', 'a/..']) {
          const written = [
            ...(await log.append(id, inputs(id, 3))),
            ...(await log.append(id, [toolResult('c1', 'ok'), { type: 'memory.cleared' }])),
          ];
          const texts = await collect(log.readStored(id));
          const middle = await openMemoryLog();
          try {
            // in two parts: the second continues the first
            expect(await middle.importStored(id, texts.slice(0, 2))).toEqual({ imported: 2, head: 2 });
            expect(await middle.importStored(id, texts.slice(2))).toEqual({ imported: 3, head: 5 });
            expect(await collect(middle.read(id))).toEqual(written);
            expect(await collect(middle.readStored(id))).toEqual(texts);

            const target = await suiteHarness.create();
            try {
              const back = await target.open({ clock: () => '2030-01-01T00:00:00.000Z' });
              expect(await back.importStored(id, await collect(middle.readStored(id)))).toEqual({ imported: 5, head: 5 });
              expect(await collect(back.read(id))).toEqual(written);
              expect(await collect(back.readStored(id))).toEqual(texts);
              expect(await back.verify(id)).toEqual({ valid: true, eventCount: 5, firstBrokenSeq: null });
              expect(await collect(back.sessions())).toEqual([id]);
              const [next] = await back.append(id, inputs('next', 1), { expectedSeq: 5 });
              expect(next).toMatchObject({ seq: 6, prevHash: written[4]?.hash, at: '2030-01-01T00:00:00.000Z' });
              expect(await back.verify(id)).toEqual({ valid: true, eventCount: 6, firstBrokenSeq: null });
            } finally {
              await target.cleanup();
            }
          } finally {
            await middle.close();
          }
        }
      });

      test('importStored rejects a text that does not chain on, names it, and writes nothing', async (harness) => {
        const source = await openMemoryLog();
        const log = await harness.open();
        try {
          await source.append('s', inputs('x', 4));
          await source.append('t', inputs('t', 1));
          const texts = await collect(source.readStored('s'));
          const [t1] = await collect(source.readStored('t'));
          const third = texts[2] ?? '';
          const edited = third.replace('"x.2"', '"x.9"');
          const cases: [string, string[], number, RegExp][] = [
            ['an edited text', [texts[0] ?? '', texts[1] ?? '', edited], 2, /hash/],
            ['a gap', [texts[0] ?? '', texts[2] ?? ''], 1, /seq/],
            ['a reordering', [texts[1] ?? '', texts[0] ?? ''], 0, /conflict|seq|expected/],
            ['another session', [t1 ?? ''], 0, /session/],
            ['a text that is not JSON', [texts[0] ?? '', '{"oops'], 1, /JSON/],
            ['a text that is not canonical', [(texts[0] ?? '').replace('{', '{ ')], 0, /canonical/],
            ['an undecodable event', [texts[0] ?? '', (texts[1] ?? '').replace('"user.input"', '"no.such"')], 1, /hash|decode/],
          ];
          for (const [label, bad, index, message] of cases) {
            const error = await rejectionOf(log.importStored('s', bad));
            if (label === 'a reordering') {
              expect(ExpectedSeqConflictError.isInstance(error)).toBe(true);
            } else {
              expect(StoredChainError.isInstance(error)).toBe(true);
              expect((error as StoredChainError).index).toBe(index);
              expect((error as StoredChainError).sessionId).toBe('s');
            }
            expect((error as Error).message).toMatch(message);
            expect(await log.head('s')).toBe(0);
          }
          expect(await collect(log.sessions())).toEqual([]);
          expect(await log.importStored('s', [])).toEqual({ imported: 0, head: 0 });
          expect(await collect(log.sessions())).toEqual([]);

          // onto a session that has its own events: the texts must start after its head
          await log.append('s', inputs('mine', 1));
          const conflict = await rejectionOf(log.importStored('s', texts));
          expect(ExpectedSeqConflictError.isInstance(conflict)).toBe(true);
          expect(conflict).toMatchObject({ expectedSeq: 0, actualSeq: 1 });
          const chainError = await rejectionOf(log.importStored('s', texts.slice(1)));
          expect(StoredChainError.isInstance(chainError)).toBe(true);
          expect((chainError as Error).message).toMatch(/prevHash/);
          expect(await log.head('s')).toBe(1);
          expect((await log.verify('s')).valid).toBe(true);
          const invalidId = await rejectionOf(log.importStored('', texts));
          expect(InvalidSessionIdError.isInstance(invalidId)).toBe(true);
        } finally {
          await source.close();
        }
      });

      test('importStored and appends to one session are serialised', async (harness) => {
        const source = await openMemoryLog();
        const log = await harness.open();
        try {
          await source.append('s', inputs('x', 3));
          const texts = await collect(source.readStored('s'));
          const [imported, appended] = await Promise.all([log.importStored('s', texts), log.append('s', inputs('after', 2))]);
          expect(imported).toEqual({ imported: 3, head: 3 });
          expect(seqsOf(appended)).toEqual([4, 5]);
          expectWellFormedChain(expect, 's', await collect(log.read('s')));
          expect(await log.verify('s')).toEqual({ valid: true, eventCount: 5, firstBrokenSeq: null });
        } finally {
          await source.close();
        }
      });
    });

    describe('subscribe', () => {
      /** Collects what a subscription yields until it has `count` events (or the timeout). */
      const take = async (iterable: AsyncIterable<SessionEvent>, count: number, timeoutMs = 10_000): Promise<SessionEvent[]> => {
        const out: SessionEvent[] = [];
        let timer: ReturnType<typeof setTimeout> | undefined;
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`subscribe gave ${out.length} of ${count} events in ${timeoutMs} ms`)), timeoutMs);
        });
        const run = async (): Promise<SessionEvent[]> => {
          for await (const event of iterable) {
            out.push(event);
            if (out.length >= count) break;
          }
          return out;
        };
        try {
          return await Promise.race([run(), timeout]);
        } finally {
          clearTimeout(timer);
        }
      };

      test('catches up from fromSeq, then yields new events as they are appended, each once, in order', async (harness) => {
        const log = await harness.open();
        const before = await log.append('s', inputs('old', 4));
        await log.append('other', inputs('o', 2));
        const following = take(log.subscribe('s', { fromSeq: 2 }), 3 + 30);
        const live: SessionEvent[] = [];
        for (let round = 0; round < 10; round++) {
          // bursts of concurrent appends while the subscriber catches up and follows
          const burst = await Promise.all([1, 2].map((n) => log.append('s', inputs(`r${round}.${n}`, n))));
          live.push(...burst.flat());
          await log.append('other', inputs(`o${round}`, 1));
        }
        const seen = await following;
        expect(seqsOf(seen)).toEqual(range(2, 34));
        expect(seen).toEqual([...before.slice(1), ...live]);
      });

      test('from past the head waits for the event it starts at; fromSeq 0 means 1', async (harness) => {
        const log = await harness.open();
        await log.append('s', inputs('x', 2));
        const later = take(log.subscribe('s', { fromSeq: 4 }), 2);
        const all = take(log.subscribe('s', { fromSeq: 0 }), 5);
        await log.append('s', inputs('y', 1));
        await log.append('s', inputs('z', 2));
        expect(seqsOf(await later)).toEqual([4, 5]);
        expect(seqsOf(await all)).toEqual([1, 2, 3, 4, 5]);
        // a session that does not exist yet
        const fresh = take(log.subscribe('new\u0000'), 2);
        await log.append('new\u0000', inputs('n', 2));
        expect((await fresh).map(textOfInput)).toEqual(['n.0', 'n.1']);
      });

      test('ends when its signal aborts, when the consumer stops, and when the log closes', async (harness) => {
        const log = await harness.open();
        await log.append('s', inputs('x', 2));
        const controller = new AbortController();
        const seen: number[] = [];
        const following = (async () => {
          for await (const event of log.subscribe('s', { signal: controller.signal })) {
            seen.push(event.seq);
            if (event.seq === 3) controller.abort();
          }
        })();
        await log.append('s', inputs('y', 1));
        await following;
        expect(seen).toEqual([1, 2, 3]);
        await log.append('s', inputs('after abort', 1));
        expect(seen).toEqual([1, 2, 3]);

        const aborted = new AbortController();
        aborted.abort();
        expect(await collect(log.subscribe('s', { signal: aborted.signal }))).toEqual([]);

        const untilClose = collect(log.subscribe('s', { fromSeq: 4 }));
        await log.append('s', inputs('last', 1));
        await new Promise((resolve) => setTimeout(resolve, 50));
        await log.close();
        expect(seqsOf(await untilClose)).toEqual([4, 5]);
      });

      test('rejects a bad session id or fromSeq', async (harness) => {
        const log = await harness.open();
        expect(InvalidSessionIdError.isInstance(await rejectionOf(collect(log.subscribe(''))))).toBe(true);
        for (const fromSeq of [-1, 1.5, Number.NaN]) await expect(collect(log.subscribe('s', { fromSeq }))).rejects.toThrow(InvalidOptionsError);
      });
    });

    if (suiteHarness.multiProcess) {
      describe('several handles on one store (processes, machines)', () => {
        const another = async (harness: LogHarnessStore, options?: LogHarnessOpenOptions): Promise<SessionEventLog> => {
          if (!harness.openAnother) throw new Error('a multiProcess harness needs openAnother()');
          return harness.openAnother(options);
        };

        test('racing appends with the same expectedSeq on two handles: exactly one wins, the other gets ExpectedSeqConflictError', async (harness) => {
          const a = await harness.open();
          const b = await another(harness);
          let head = 0;
          for (let round = 0; round < 10; round++) {
            const settled = await Promise.allSettled([
              a.append('s', inputs(`a${round}`, 2), { expectedSeq: head }),
              b.append('s', inputs(`b${round}`, 1), { expectedSeq: head }),
              a.append('s', inputs(`a${round}'`, 1), { expectedSeq: head }),
              b.append('s', inputs(`b${round}'`, 3), { expectedSeq: head }),
            ]);
            const winners = settled.filter((r): r is PromiseFulfilledResult<readonly SessionEvent[]> => r.status === 'fulfilled');
            expect(winners).toHaveLength(1);
            for (const loser of settled) if (loser.status === 'rejected') expect(ExpectedSeqConflictError.isInstance(loser.reason)).toBe(true);
            const won = winners[0]?.value ?? [];
            expect(seqsOf(won)).toEqual(range(head + 1, head + won.length));
            head += won.length;
            expect(await a.head('s')).toBe(head);
            expect(await b.head('s')).toBe(head);
          }
          expectWellFormedChain(expect, 's', await collect(b.read('s')));
          expect(await a.verify('s')).toEqual({ valid: true, eventCount: head, firstBrokenSeq: null });
        });

        test('appends without expectedSeq from two handles all land, gap-free, each batch contiguous', async (harness) => {
          const a = await harness.open();
          const b = await another(harness);
          const calls = range(0, 39).map((i) => ({ log: i % 2 === 0 ? a : b, n: (i % 3) + 1, i }));
          const results = await Promise.all(calls.map(({ log, n, i }) => log.append('s', inputs(`c${i}`, n))));
          const total = calls.reduce((sum, c) => sum + c.n, 0);
          const read = await collect(a.read('s'));
          expect(read).toHaveLength(total);
          expectWellFormedChain(expect, 's', read);
          for (const [k, batch] of results.entries()) {
            expect(batch.map(textOfInput)).toEqual(range(0, (calls[k]?.n ?? 0) - 1).map((j) => `c${k}.${j}`));
            expect(seqsOf(batch)).toEqual(range(batch[0]?.seq ?? 0, (batch[0]?.seq ?? 0) + batch.length - 1));
            expect(read.slice((batch[0]?.seq ?? 1) - 1, (batch[0]?.seq ?? 1) - 1 + batch.length)).toEqual(batch);
          }
          expect(await b.verify('s')).toEqual({ valid: true, eventCount: total, firstBrokenSeq: null });
          expect(await collect(b.sessions())).toEqual(['s']);
        });

        test("a subscriber on one handle sees the other handle's appends, each once, in order", async (harness) => {
          const a = await harness.open();
          const b = await another(harness);
          await b.append('s', inputs('before', 2));
          const seen: SessionEvent[] = [];
          const controller = new AbortController();
          const following = (async () => {
            for await (const event of a.subscribe('s', { signal: controller.signal })) {
              seen.push(event);
              if (seen.length === 12) controller.abort();
            }
          })();
          const written: SessionEvent[] = [];
          for (let i = 0; i < 5; i++) written.push(...(await b.append('s', inputs(`live${i}`, 2))));
          let timer: ReturnType<typeof setTimeout> | undefined;
          await Promise.race([
            following,
            new Promise((_, reject) => {
              timer = setTimeout(() => reject(new Error(`the subscriber saw ${seen.length} of 12 events within 10 s`)), 10_000);
            }),
          ]).finally(() => clearTimeout(timer));
          expect(seqsOf(seen)).toEqual(range(1, 12));
          expect(seen.slice(2)).toEqual(written);
        });

        test('checkpoints and imports made on one handle are seen on the other', async (harness) => {
          const a = await harness.open();
          const b = await another(harness);
          const events = await a.append('s', inputs('x', 5));
          await b.putCheckpoint('s', { seq: 4, hash: events[3]?.hash ?? '', data: { on: 'b' } });
          expect(await a.latestCheckpoint('s')).toEqual({ seq: 4, hash: events[3]?.hash, data: { on: 'b' } });
          const source = await openMemoryLog();
          try {
            await source.append('t', inputs('t', 3));
            await a.importStored('t', await collect(source.readStored('t')));
            expect(await b.head('t')).toBe(3);
            expect(await collect(b.read('t'))).toEqual(await collect(source.read('t')));
          } finally {
            await source.close();
          }
        });
      });
    }

    if (suiteHarness.persistent) {
      describe('persistence', () => {
        test('keeps events, heads, sessions and checkpoints across close and reopen, and continues the chain', async (harness) => {
          const { clock } = tickingClock();
          const log = await harness.open({ clock });
          const a = await log.append('a', inputs('a', 3));
          const b = await log.append('b/..', inputs('b', 2));
          await log.putCheckpoint('a', { seq: 3, hash: a[2]?.hash ?? '', data: { k: 1 } });
          if (!harness.reopen) throw new Error('a persistent harness needs reopen()');
          const again = await harness.reopen();

          expect(await again.head('a')).toBe(3);
          expect(await again.head('b/..')).toBe(2);
          expect(await collect(again.read('a'))).toEqual(a);
          expect(await collect(again.read('b/..'))).toEqual(b);
          expect([...(await collect(again.sessions()))].sort()).toEqual(['a', 'b/..']);
          expect(await again.latestCheckpoint('a')).toEqual({ seq: 3, hash: a[2]?.hash, data: { k: 1 } });

          const conflict = await rejectionOf(again.append('a', inputs('stale', 1), { expectedSeq: 0 }));
          expect(ExpectedSeqConflictError.isInstance(conflict)).toBe(true);
          const [next] = await again.append('a', inputs('next', 1), { expectedSeq: 3 });
          expect(next?.seq).toBe(4);
          expect(next?.prevHash).toBe(a[2]?.hash);
          expectWellFormedChain(expect, 'a', await collect(again.read('a')));
          expect(await again.verify('a')).toEqual({ valid: true, eventCount: 4, firstBrokenSeq: null });
        });

        test('keeps appends that were pending at close', async (harness) => {
          const log = await harness.open();
          const pending = Promise.all(range(1, 5).map((i) => log.append('s', inputs(`p${i}`, i))));
          await log.close();
          await pending;
          if (!harness.reopen) throw new Error('a persistent harness needs reopen()');
          const again = await harness.reopen();
          expect(await again.head('s')).toBe(15);
          expect(await again.verify('s')).toEqual({ valid: true, eventCount: 15, firstBrokenSeq: null });
        });
      });
    }

    describePrivacyContract(describe, test, expect, suiteHarness);
  });
};
