// Model-based check of any SessionEventLog: fc.commands run against the real store and an array-per-session model.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { NewSessionEvent, SessionEvent } from '../events/index.js';
import { ExpectedSeqConflictError, type SessionEventLog } from '../log/index.js';
import { collect, type SessionEventLogHarness } from './log-contract.js';

/** What the model keeps of an event: enough to tell any two appended events apart. */
interface ModelEvent {
  readonly type: 'tool.result' | 'memory.cleared';
  readonly output?: string;
}

interface Model {
  readonly sessions: Map<string, ModelEvent[]>;
  /** Makes every appended tool.result's output unique within a run. */
  counter: number;
}

interface Real {
  log: SessionEventLog;
  /** Closes and reopens the same store (persistent stores only). */
  readonly reopen?: () => Promise<void>;
}

type LogCommand = fc.AsyncCommand<Model, Real>;

const MAIN_IDS = ['a', 'b'];
const ODD_IDS = ['a/b', '..', 'x\u0000y', '\ud800', '\u{1F600}', 'a\u0000'];
const show = (id: string): string => JSON.stringify(id);

const eventsOf = (model: Model, id: string): ModelEvent[] => model.sessions.get(id) ?? [];

const toModel = (event: SessionEvent): ModelEvent =>
  event.type === 'tool.result' ? { type: 'tool.result', output: event.output } : { type: event.type as 'memory.cleared' };

const toNew = (event: ModelEvent): NewSessionEvent =>
  event.type === 'tool.result' ? { type: 'tool.result', callId: 'c', output: event.output ?? '' } : { type: 'memory.cleared' };


const expectStored = (id: string, stored: readonly SessionEvent[], expected: readonly ModelEvent[], firstSeq: number): void => {
  assert.deepStrictEqual(
    stored.map((e) => e.seq),
    expected.map((_, i) => firstSeq + i),
  );
  assert.deepStrictEqual(stored.map(toModel), expected);
  for (const event of stored) assert.strictEqual(event.sessionId, id);
};

type ExpectedSeqMode = 'none' | 'right' | { readonly wrongBy: number };

/** Appends `shape` (true = tool.result, false = memory.cleared) with the chosen expectedSeq. */
class AppendCommand implements LogCommand {
  constructor(
    readonly id: string,
    readonly shape: readonly boolean[],
    readonly mode: ExpectedSeqMode,
  ) {}
  check(): boolean {
    return true;
  }
  async run(model: Model, real: Real): Promise<void> {
    const current = eventsOf(model, this.id);
    const head = current.length;
    const batch: ModelEvent[] = this.shape.map((isTool) =>
      isTool ? { type: 'tool.result', output: `${model.counter++}` } : { type: 'memory.cleared' },
    );
    const expectedSeq =
      this.mode === 'none' ? undefined : this.mode === 'right' ? head : head - this.mode.wrongBy >= 0 ? head - this.mode.wrongBy : head + this.mode.wrongBy;
    const appending = real.log.append(this.id, batch.map(toNew), expectedSeq === undefined ? {} : { expectedSeq });
    if (expectedSeq !== undefined && expectedSeq !== head) {
      const error = await appending.then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(ExpectedSeqConflictError.isInstance(error), `expected an ExpectedSeqConflictError, got ${String(error)}`);
      assert.strictEqual(error.expectedSeq, expectedSeq);
      assert.strictEqual(error.actualSeq, head);
      return;
    }
    const stored = await appending;
    expectStored(this.id, stored, batch, head + 1);
    model.sessions.set(this.id, [...current, ...batch]);
  }
  toString(): string {
    return `append(${show(this.id)}, ${this.shape.length}, ${typeof this.mode === 'string' ? this.mode : `wrongBy ${this.mode.wrongBy}`})`;
  }
}

/** Two appends of one event each, issued together with the same (right) expectedSeq: the first wins. */
class RaceCommand implements LogCommand {
  constructor(readonly id: string) {}
  check(): boolean {
    return true;
  }
  async run(model: Model, real: Real): Promise<void> {
    const current = eventsOf(model, this.id);
    const head = current.length;
    const first: ModelEvent = { type: 'tool.result', output: `${model.counter++}` };
    const second: ModelEvent = { type: 'tool.result', output: `${model.counter++}` };
    const [won, lost] = await Promise.allSettled([
      real.log.append(this.id, [toNew(first)], { expectedSeq: head }),
      real.log.append(this.id, [toNew(second)], { expectedSeq: head }),
    ]);
    assert.strictEqual(won?.status, 'fulfilled');
    assert.strictEqual(lost?.status, 'rejected');
    if (lost?.status === 'rejected') assert.ok(ExpectedSeqConflictError.isInstance(lost.reason), `expected a conflict, got ${String(lost.reason)}`);
    if (won?.status === 'fulfilled') expectStored(this.id, won.value, [first], head + 1);
    model.sessions.set(this.id, [...current, first]);
  }
  toString(): string {
    return `race(${show(this.id)})`;
  }
}

class ReadCommand implements LogCommand {
  constructor(
    readonly id: string,
    readonly fromSeq: number | undefined,
    readonly toSeq: number | undefined,
  ) {}
  check(): boolean {
    return true;
  }
  async run(model: Model, real: Real): Promise<void> {
    const all = eventsOf(model, this.id);
    const from = Math.max(1, this.fromSeq ?? 1);
    const to = Math.min(all.length, this.toSeq ?? all.length);
    const expected = to >= from ? all.slice(from - 1, to) : [];
    const options = { ...(this.fromSeq === undefined ? {} : { fromSeq: this.fromSeq }), ...(this.toSeq === undefined ? {} : { toSeq: this.toSeq }) };
    const stored = await collect(real.log.read(this.id, options));
    expectStored(this.id, stored, expected, expected.length > 0 ? from : 1);
  }
  toString(): string {
    return `read(${show(this.id)}, ${this.fromSeq ?? '-'}..${this.toSeq ?? '-'})`;
  }
}

class HeadCommand implements LogCommand {
  constructor(readonly id: string) {}
  check(): boolean {
    return true;
  }
  async run(model: Model, real: Real): Promise<void> {
    assert.strictEqual(await real.log.head(this.id), eventsOf(model, this.id).length);
  }
  toString(): string {
    return `head(${show(this.id)})`;
  }
}

class SessionsAndVerifyCommand implements LogCommand {
  check(): boolean {
    return true;
  }
  async run(model: Model, real: Real): Promise<void> {
    const withEvents = [...model.sessions].filter(([, events]) => events.length > 0).map(([id]) => id);
    assert.deepStrictEqual((await collect(real.log.sessions())).sort(), withEvents.sort());
    for (const id of withEvents) {
      assert.deepStrictEqual(await real.log.verify(id), { valid: true, eventCount: eventsOf(model, id).length, firstBrokenSeq: null });
    }
  }
  toString(): string {
    return 'sessionsAndVerify';
  }
}

class ReopenCommand implements LogCommand {
  check(): boolean {
    return true;
  }
  async run(_model: Model, real: Real): Promise<void> {
    if (!real.reopen) throw new Error('reopen on a log without a store to reopen');
    await real.reopen();
  }
  toString(): string {
    return 'closeAndReopen';
  }
}

// Mostly two sessions, so that they grow long enough for ranges to matter; odd ids now and then.
const sessionId = fc.oneof({ arbitrary: fc.constantFrom(...MAIN_IDS), weight: 4 }, { arbitrary: fc.constantFrom(...ODD_IDS), weight: 1 });
const seqBound = fc.option(fc.integer({ min: 0, max: 14 }), { nil: undefined });
const mode: fc.Arbitrary<ExpectedSeqMode> = fc.oneof(
  fc.constant<ExpectedSeqMode>('none'),
  fc.constant<ExpectedSeqMode>('right'),
  fc.integer({ min: 1, max: 3 }).map((wrongBy): ExpectedSeqMode => ({ wrongBy })),
);

const commandArbitraries = (withReopen: boolean): fc.Arbitrary<LogCommand>[] => [
  fc.tuple(sessionId, fc.array(fc.boolean(), { maxLength: 5 }), mode).map(([id, shape, m]) => new AppendCommand(id, shape, m)),
  sessionId.map((id) => new RaceCommand(id)),
  fc.tuple(sessionId, seqBound, seqBound).map(([id, from, to]) => new ReadCommand(id, from, to)),
  sessionId.map((id) => new HeadCommand(id)),
  fc.constant(new SessionsAndVerifyCommand()),
  ...(withReopen ? [fc.constant(new ReopenCommand())] : []),
];

const emptyModel = (): Model => ({ sessions: new Map(), counter: 0 });

export interface LogModelCheckOptions {
  /** Runs (default: fast-check's global numRuns). */
  readonly numRuns?: number;
  /** Most commands per run (default 40; 25 when the store is reopened). */
  readonly maxCommands?: number;
  /** Passed on to fc.assert (seed, path, verbose, ...). */
  readonly parameters?: fc.Parameters<[Iterable<LogCommand>]>;
}

/**
 * Runs random sequences of appends (with right, wrong and no expectedSeq), same-seq races, range
 * reads, heads, session listings with verify, and (for a `persistent` harness) close-and-reopen
 * against a store from `harness.create()`, checking each step against an array model. Throws with
 * fast-check's seed and path on the first disagreement.
 * @example it('my store against the model', () => checkSessionEventLogModel({ create: () => myHarness() }))
 */
export const checkSessionEventLogModel = async (harness: SessionEventLogHarness, options: LogModelCheckOptions = {}): Promise<void> => {
  const withReopen = harness.persistent === true;
  const maxCommands = options.maxCommands ?? (withReopen ? 25 : 40);
  await fc.assert(
    fc.asyncProperty(fc.commands(commandArbitraries(withReopen), { maxCommands, size: 'medium' }), async (commands) => {
      const store = await harness.create();
      try {
        const real: Real = {
          log: await store.open(),
          ...(withReopen
            ? {
                reopen: async () => {
                  if (!store.reopen) throw new Error('a persistent harness needs reopen()');
                  real.log = await store.reopen();
                },
              }
            : {}),
        };
        await fc.asyncModelRun(() => ({ model: emptyModel(), real }), commands);
      } finally {
        await store.cleanup();
      }
    }),
    { ...options.parameters, ...(options.numRuns === undefined ? {} : { numRuns: options.numRuns }) },
  );
};
