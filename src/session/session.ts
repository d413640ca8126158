// AgentSession: a session's memory over the log, with manual and automatic compaction, checkpoints and resume.
import { randomUUID } from 'node:crypto';
import * as E from 'fp-ts/lib/Either.js';
import { projectionFactsOf, type AttachedProjectionFacts, type ProjectionFacts, type Tokenizer } from '../context/index.js';
import type { z } from 'zod';
import type { CompactPolicy, CompactResult } from '../compact/index.js';
import type { CompactResultRecord, MemorySnapshot, NewSessionEvent, SessionEvent, SessionEventOf } from '../events/index.js';
import { objectWithMethods, parseOptions } from '../base/options.js';
import type { Clock, SessionEventLog } from '../log/index.js';
import { visibleEntries, type AgentMemory, type MemoryCompressor, type MemoryState } from '../memory/index.js';
import type { SessionState } from './session-state.js';
import { createLiveSession, flushDeferred, type LiveCheckpoints, type LiveSession } from './live.js';
import { createWriteCounter, type WriteCounter } from './count-on-write.js';
import { InvalidOptionsError } from '../base/errors.js';
import { appenderFor } from './log-memory.js';
import { checkpointEventFor, rebuildState, writeCheckpoint, type RebuiltState } from './checkpoint.js';
import { compressAfterWrite, runCompaction, type CompactOptions, type CompactionTarget, type SessionHooks } from './compaction.js';
import { memoryTokenTracker, type MemoryMeasure } from './memory-tokens.js';
import { OpenSessionOptionsSchema } from './options.js';
import { rewindSession, type RewindOptions, type RewindTarget } from './rewind.js';

export interface OpenSessionOptions {
  /** Resume this session when it exists in the log; create it with this id otherwise. Default: a fresh id. */
  readonly id?: string;
  readonly hooks?: SessionHooks;
  /** Makes fresh session ids (default `randomUUID`). */
  readonly ids?: () => string;
  /** Stamps `savedAt` in snapshots (events are stamped by the log's clock). */
  readonly clock?: Clock;
  /**
   * Take a checkpoint every N events (default 10,000; 0 turns it off): a `checkpoint.taken` event carrying
   * the state's digest is appended and the state stored at its seq. A session opened by a long fold
   * (N or more events without a usable checkpoint) takes one with its next append.
   */
  readonly checkpointEvery?: number;
  /** Recorded in `session.started` for a new session. */
  readonly metadata?: Record<string, unknown>;
  readonly compressor?: MemoryCompressor;
  /** Told about every event appended to the session, after it is stored and folded. A throwing listener is ignored. */
  readonly onEvents?: (events: readonly SessionEvent[]) => void;
  /** Called when an automatic checkpoint fails after its append committed (the append still resolves); see `lastCheckpointError`. */
  readonly onCheckpointError?: (error: unknown) => void;
  /**
   * The tokenizer the session's projections count with (the agent passes its projector's). Each checkpoint
   * saves, beside memory, the per-item facts projections derive (characters, tool pairing, token lower bounds)
   * and the counts this tokenizer has already made of memory's items (nothing is counted for it); a resume
   * gives them back to the restored items when the tokenizer has the same name, so the first projection after
   * it costs about what a warm one does. Without it, checkpoints save the facts that need no tokenizer.
   */
  readonly tokenizer?: Tokenizer;
  /**
   * Count each item with `tokenizer` once it is stored in memory, in the background of the step (decision 0038):
   * after each write that changes memory, the new items are counted into the memo projections read, a bounded chunk
   * per turn of the event loop, never during a write. The next projection then finds them counted, and every
   * checkpoint saves the counts made before it, so a resume gets them back. Nothing is written to the log for it: the
   * events are the same with or without it. Needs `tokenizer`. A count that throws leaves its item uncounted: the
   * projection that needs it counts it and throws the same error. `close()` stops it. Default false.
   */
  readonly countTokensOnWrite?: boolean;
}

export interface AgentSessionSnapshot {
  readonly id: string;
  readonly headSeq: number;
  readonly savedAt?: string;
  readonly memory: MemorySnapshot;
  readonly lastCompactResult: CompactResultRecord | null;
}

export interface AgentSession {
  readonly id: string;
  readonly log: SessionEventLog;
  readonly memory: AgentMemory;
  /** Whether openSession found the session in the log. */
  readonly resumed: boolean;
  /** The whole folded session state: memory and run state (last step, open run). */
  state(): SessionState;
  /**
   * How the session was opened: from a checkpoint (and which) or by folding every event, what was rejected, and
   * what was done with the projection facts the checkpoint saved (absent when it saved none).
   */
  readonly opened: {
    readonly from: { readonly checkpointSeq: number } | 'full-fold';
    readonly eventsFolded: number;
    readonly rejectedCheckpoint?: string;
    readonly projectionFacts?: AttachedProjectionFacts;
  };
  /** Manual compaction: no shouldCompact gate; errors are recorded (`compaction.failed`) and thrown. */
  compact(policy: CompactPolicy, options?: CompactOptions): Promise<CompactResult>;
  /** Automatic compaction (the runtime calls it at the top of each step). Never throws; failures are recorded. */
  autoCompactIfNecessary(policy: CompactPolicy | null | undefined, options?: CompactOptions): Promise<CompactResult | null>;
  /** The structured result of the last compaction (from the log, so it survives resume). */
  getLastCompactResult(): CompactResultRecord | null;
  snapshot(): AgentSessionSnapshot;
  /** Takes a checkpoint at the head (a `checkpoint.taken` event and the state), so the next resume folds only what comes after. */
  save(): Promise<AgentSessionSnapshot>;
  /** Appends any events to the session (facts, runtime events). */
  record(events: readonly NewSessionEvent[]): Promise<readonly SessionEvent[]>;
  /**
   * Stores a checkpoint at the head now (a `checkpoint.taken` event and the state), so every later open folds only
   * what follows it; nothing when the head is a stored checkpoint already (`taken: false`). Opening a session never
   * writes one by itself: call this (or `context-ledger checkpoint ID`) for a session that is read often and seldom
   * appended to. A failure to store it rejects.
   * @example const { seq } = await (await openSession(log, { id })).checkpoint()
   */
  checkpoint(): Promise<{ readonly seq: number; readonly taken: boolean }>;
  /**
   * The last failure of an automatic checkpoint (its event or its stored state), undefined when none: such a
   * failure never rejects the append before it, which is committed; the next append tries the checkpoint again.
   */
  readonly lastCheckpointError: unknown;
  /**
   * Rewinds memory to what it was after `toSeq` (or at the start of `toStep`) by appending `session.rewound`; the
   * events in between stay in the log (audit shows them as rewound, recall still reads them).
   * @example await session.rewind({ toStep: 4 }, { reason: 'the refactor went the wrong way' })
   */
  rewind(target: RewindTarget, options?: RewindOptions): Promise<SessionEventOf<'session.rewound'>>;
  /**
   * A compaction the agent asked for (`compaction.requested`): the policy runs without its shouldCompact gate and
   * `memory.compacted.reason` is `requested`. Never throws; failures are recorded.
   */
  compactRequested(policy: CompactPolicy | null | undefined, options?: CompactOptions): Promise<CompactResult | null>;
  /**
   * With `countTokensOnWrite`: resolves once every item memory holds has been counted in the background (or its count
   * has thrown: see `countTokensOnWrite`); take a checkpoint after it (`save()`) and it saves every item's count. At
   * once without the option, and once the session is closed. Never rejects.
   * @example await session.tokensCounted(); await session.save();
   */
  tokensCounted(): Promise<void>;
  /**
   * Stops the session's background work (the counting of `countTokensOnWrite`: nothing is counted after it). The log
   * stays open (it is yours) and the session stays readable and writable; later writes are not counted in the
   * background. Idempotent.
   * @example try { await agentWork(session) } finally { await session.close() }
   */
  close(): Promise<void>;
}

const toIso = (value: Date | string | number): string =>
  typeof value === 'string' ? value : (value instanceof Date ? value : new Date(value)).toISOString();

// Every option has a schema entry: adding an option without one does not compile.
void (OpenSessionOptionsSchema.shape satisfies Record<keyof OpenSessionOptions, z.ZodType>);

/** openSession's options, checked, with the defaults filled in. */
interface SessionSettings {
  readonly id: string;
  readonly hooks: SessionHooks;
  readonly checkpointEvery: number;
  readonly options: OpenSessionOptions;
}

/** Stage 1: the options and the log checked (a typo, NaN or a negative interval is an error), the id chosen. */
const settingsOf = (log: SessionEventLog, options: OpenSessionOptions): SessionSettings => {
  parseOptions(OpenSessionOptionsSchema, options, 'openSession');
  parseOptions(objectWithMethods('a SessionEventLog', 'append', 'read', 'head'), log, 'openSession log');
  const checkpointEvery = options.checkpointEvery ?? 10_000;
  if (!Number.isInteger(checkpointEvery) || checkpointEvery < 0) {
    throw new InvalidOptionsError('openSession', [{ path: 'checkpointEvery', message: `must be a non-negative integer, got ${String(checkpointEvery)}` }]);
  }
  if (options.countTokensOnWrite === true && options.tokenizer === undefined) {
    throw new InvalidOptionsError('openSession', [{ path: 'countTokensOnWrite', message: 'needs the tokenizer option: the tokenizer the session\'s projections count with' }]);
  }
  return { id: options.id ?? (options.ids ?? randomUUID)(), hooks: options.hooks ?? {}, checkpointEvery, options };
};

/**
 * How the session checkpoints: every `checkpointEvery` events, at once after a long fold, each checkpoint with the
 * projection facts of memory's items (decision 0017), stored beside the log once its event is.
 */
const checkpointsOf = (log: SessionEventLog, settings: SessionSettings, rebuilt: RebuiltState): LiveCheckpoints => {
  const { id, checkpointEvery, options } = settings;
  // The projection facts taken with the last checkpoint event, stored with the checkpoint once the event is.
  let pendingFacts: { readonly digest: string; readonly facts: ProjectionFacts } | undefined;
  return {
    every: checkpointEvery,
    // A long fold without a usable checkpoint: the next append takes one (never on open itself).
    dueOnOpen: rebuilt.headSeq > 0 && (rebuilt.eventsFolded >= checkpointEvery || rebuilt.rejectedCheckpoint !== undefined),
    // Opened from a checkpoint at the head: that head is a stored checkpoint already.
    lastTypeOnOpen: rebuilt.from !== 'full-fold' && rebuilt.from.checkpointSeq === rebuilt.headSeq ? 'checkpoint.taken' : undefined,
    event: (state) => {
      const facts = projectionFactsOf(
        visibleEntries(state.memory).map((entry) => entry.item),
        options.tokenizer,
      );
      const event = checkpointEventFor(state, checkpointEvery, facts);
      pendingFacts = { digest: event.digest, facts };
      return event;
    },
    store: (event, state) => {
      const facts = pendingFacts?.digest === event.digest ? pendingFacts.facts : undefined;
      pendingFacts = undefined;
      // Facts that were not digested with this event are not stored (its digest would then not match).
      return writeCheckpoint(log, id, event, state, {
        ...(checkpointEvery > 0 ? { band: checkpointEvery } : {}),
        ...(facts !== undefined ? { projection: facts } : {}),
      });
    },
    onError: options.onCheckpointError,
  };
};

/** Stage 3: the session's one writer, from the state the log folded to, and its background counter (countTokensOnWrite). */
const goLive = (log: SessionEventLog, settings: SessionSettings, rebuilt: RebuiltState): { live: LiveSession; counter: WriteCounter | undefined } => {
  const { id, hooks, options } = settings;
  let counter: WriteCounter | undefined;
  const userListener = options.onEvents;
  // The counter hears of each append first (it only schedules), then the user's listener.
  const onEvents =
    options.countTokensOnWrite === true
      ? (events: readonly SessionEvent[]) => {
          counter?.stored(events);
          userListener?.(events);
        }
      : userListener;
  const live = createLiveSession({
    sessionId: id,
    appender: appenderFor(log, id),
    state: { memory: rebuilt.state, run: rebuilt.run },
    headSeq: rebuilt.headSeq,
    ...(onEvents ? { onEvents } : {}),
    // A compressor's compaction goes through the session's pipeline (trigger auto, no step: it runs after a write).
    ...(options.compressor ? { afterItemsWritten: compressAfterWrite(options.compressor, id, hooks) } : {}),
    checkpoints: checkpointsOf(log, settings, rebuilt),
  });
  if (options.countTokensOnWrite === true && options.tokenizer !== undefined) {
    counter = createWriteCounter(options.tokenizer, {
      memory: live.memoryState,
      built: live.built,
      writing: live.writing,
      idle: live.idle,
    });
  }
  return { live, counter };
};

/** What the compaction pipeline works on: memory, the hooks, memory's tokens, and the calls an approval waits for. */
const compactionTargetOf = (live: LiveSession, settings: SessionSettings): CompactionTarget => {
  const { memory } = live;
  // One warm token count per tokenizer, so an automatic trigger costs O(new items) per step.
  const trackers = new Map<string, { readonly tokenizer: Tokenizer; readonly measure: (state: MemoryState) => MemoryMeasure }>();
  const measure = (tokenizer: Tokenizer): MemoryMeasure => {
    let tracker = trackers.get(tokenizer.name);
    if (tracker?.tokenizer !== tokenizer) {
      tracker = { tokenizer, measure: memoryTokenTracker(tokenizer) };
      trackers.set(tokenizer.name, tracker);
    }
    return tracker.measure(memory.state());
  };
  return {
    sessionId: settings.id,
    memory,
    hooks: settings.hooks,
    measure,
    protectedCallIds: () => (live.state().run.openRun?.approvals ?? []).map((a) => a.callId),
  };
};

/**
 * Creates a session, or resumes the one with `options.id` by folding the log (from its latest valid checkpoint).
 * @example const session = await openSession(await openLevelLog('./.ledger'), { id: 'task-42' })
 */
export const openSession = async (log: SessionEventLog, options: OpenSessionOptions = {}): Promise<AgentSession> => {
  const settings = settingsOf(log, options);
  // Stage 2: the state, from the latest checkpoint the chain vouches for and the events after it.
  const rebuilt = await rebuildState(log, settings.id, options.tokenizer ? { tokenizer: options.tokenizer } : {});
  const { live, counter } = goLive(log, settings, rebuilt);
  if (rebuilt.headSeq === 0) await live.write([{ type: 'session.started', ...(options.metadata ? { metadata: options.metadata } : {}) }]);
  return sessionOver(log, settings, rebuilt, live, counter);
};

/** Stage 4: the AgentSession over the live writer: compaction through the pipeline, checkpoints, snapshots, rewind. */
const sessionOver = (log: SessionEventLog, settings: SessionSettings, rebuilt: RebuiltState, live: LiveSession, counter: WriteCounter | undefined): AgentSession => {
  const { id, options } = settings;
  const { memory } = live;
  const target = compactionTargetOf(live, settings);
  const session: AgentSession = {
    id,
    log,
    memory,
    resumed: rebuilt.headSeq > 0,
    opened: {
      from: rebuilt.from,
      eventsFolded: rebuilt.eventsFolded,
      ...(rebuilt.rejectedCheckpoint !== undefined ? { rejectedCheckpoint: rebuilt.rejectedCheckpoint } : {}),
      ...(rebuilt.projectionFacts !== undefined ? { projectionFacts: rebuilt.projectionFacts } : {}),
    },
    state: live.state,
    get lastCheckpointError() {
      return live.checkpointFailure();
    },

    async compact(policy, compactOptions = {}) {
      if (!policy) throw new InvalidOptionsError('compact', [{ path: 'policy', message: 'is required' }]);
      const outcome = await runCompaction(target, { policy, trigger: 'manual' }, compactOptions);
      if (E.isLeft(outcome)) throw outcome.left.error;
      // A manual compaction has no shouldCompact gate and no veto, so the right side always holds a compaction.
      return outcome.right!.result;
    },

    async autoCompactIfNecessary(policy, compactOptions = {}) {
      // A given reason (overflow) compacts with any policy; otherwise a policy without shouldCompact never compacts automatically.
      if (!policy || (typeof policy.shouldCompact !== 'function' && compactOptions.reason === undefined)) return null;
      const outcome = await runCompaction(target, { policy, trigger: 'auto' }, compactOptions);
      // The failure is already recorded (compaction.failed or hook.failed); an automatic compaction goes on without it.
      return E.isLeft(outcome) ? null : (outcome.right?.result ?? null);
    },

    getLastCompactResult() {
      return memory.state().lastCompaction?.result ?? null;
    },

    snapshot() {
      return {
        id,
        headSeq: memory.headSeq(),
        ...(options.clock ? { savedAt: toIso(options.clock()) } : {}),
        memory: memory.snapshot(),
        lastCompactResult: memory.state().lastCompaction?.result ?? null,
      };
    },

    async save() {
      await live.checkpoint();
      return session.snapshot();
    },

    record(events) {
      return memory.record(events);
    },

    async checkpoint() {
      await flushDeferred(memory);
      const before = memory.headSeq();
      await session.save();
      const seq = memory.headSeq();
      return { seq, taken: seq !== before };
    },

    async rewind(target, rewindOptions = {}) {
      // It reads the log: deferred events first.
      await flushDeferred(memory);
      return rewindSession(log, memory, live.state().run, target, rewindOptions);
    },

    async compactRequested(policy, compactOptions = {}) {
      if (!policy) {
        // Nothing can answer the request: recorded, so it is not asked again at every step.
        await memory.record([
          {
            type: 'compaction.failed',
            trigger: 'auto',
            policy: { name: 'none', settings: {} },
            ...(compactOptions.step !== undefined ? { step: compactOptions.step } : {}),
            stage: 'compact',
            error: 'the agent has no compactPolicy to answer the requested compaction',
          },
        ]);
        return null;
      }
      const outcome = await runCompaction(target, { policy, trigger: 'auto', requested: true }, compactOptions);
      return E.isLeft(outcome) ? null : (outcome.right?.result ?? null);
    },

    tokensCounted() {
      return counter?.drained() ?? Promise.resolve();
    },

    close() {
      counter?.close();
      return Promise.resolve();
    },
  };
  return session;
};
