// AgentSession: a session's memory over the log, with manual and automatic compaction, checkpoints and resume.
import { randomUUID } from 'node:crypto';
import * as E from 'fp-ts/lib/Either.js';
import { describePolicy, type CompactPolicy, type CompactResult } from '../compact/index.js';
import { approxTokenizer, itemTokenCount, projectionFactsOf, type AttachedProjectionFacts, type ProjectionFacts, type Tokenizer } from '../context/index.js';
import { systemMessage, type MemoryItem } from '../items/index.js';
import { emptyCompactLists, errorText } from '../events/index.js';
import { objectWithMethods, parseOptions } from '../events/options.js';
import { OpenSessionOptionsSchema } from './options.js';
import type { z } from 'zod';
import type {
  CompactResultRecord,
  ComponentDescription,
  MemorySnapshot,
  NewSessionEvent,
  SessionEvent,
  SessionEventOf,
} from '../events/index.js';
import type { Clock, SessionEventLog } from '../log/index.js';
import { untilAborted } from '../model/index.js';
import {
  compactionEventFor,
  lastFactSeq,
  createEventSourcedMemory,
  runReducer,
  visibleEntries,
  type AgentMemory,
  type MemoryCompressor,
  type MemoryState,
  type RunState,
  type SessionState,
} from '../memory/index.js';
import { InvalidOptionsError } from '../errors.js';
import { appenderFor } from './agent-memory.js';
import { checkpointEventFor, rebuildState, writeCheckpoint } from './checkpoint.js';
import { CompactionConflictError } from './errors.js';

/** Options of a compaction: the step it belongs to, and the tokenizer its `tokens` record is counted with (default approx). */
export interface CompactOptions {
  readonly step?: number;
  readonly tokenizer?: Tokenizer;
  /** Aborts a waiting policy (e.g. an LLM summarizer); the compaction is then recorded as failed. */
  readonly signal?: AbortSignal;
}

/** The tokens of memory as a prompt would carry it: the summary (when not blank) as a system message, then the items. */
const memoryTokens = (items: readonly MemoryItem[], summary: string | null | undefined, tokenizer: Tokenizer): number => {
  let total = summary !== null && summary !== undefined && summary.trim() !== '' ? itemTokenCount(systemMessage(summary), tokenizer) : 0;
  for (const item of items) total += itemTokenCount(item, tokenizer);
  return total;
};

/** Where a compaction failed: describing the policy counts as its first stage (`shouldCompact` auto, `compact` manual). */
export type CompactionStage = 'shouldCompact' | 'beforeCompact' | 'compact' | 'record';

/** The left of the compaction pipeline: the stage that failed and what it threw (already recorded in the log). */
export interface CompactionFailure {
  readonly stage: CompactionStage;
  readonly error: unknown;
}

/** The right of the compaction pipeline: the policy's result and the `memory.compacted` event recorded for it. */
export interface RecordedCompaction {
  readonly result: CompactResult;
  readonly event: SessionEventOf<'memory.compacted'>;
}

export interface CompactHookContext {
  readonly sessionId: string;
  readonly snapshot: MemorySnapshot;
  readonly policy: ComponentDescription;
  readonly trigger: 'auto' | 'manual';
  readonly step?: number | undefined;
}

export interface CompactedHookContext extends CompactHookContext {
  readonly result: CompactResult;
  readonly event: SessionEventOf<'memory.compacted'>;
}

export interface SessionHooks {
  /** Before an automatic compaction: observe, or veto by returning false (recorded as `compaction.skipped`). A throw is recorded and vetoes. */
  beforeCompact?(context: CompactHookContext): boolean | void | Promise<boolean | void>;
  /** After every compaction, manual or automatic. A throw is recorded as `hook.failed`. */
  onCompact?(context: CompactedHookContext): void | Promise<void>;
}

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
  /**
   * The tokenizer the session's projections count with (the agent passes its projector's). Each checkpoint
   * saves, beside memory, the per-item facts projections derive (characters, tool pairing, token lower bounds)
   * and the counts this tokenizer has already made of memory's items (nothing is counted for it); a resume
   * gives them back to the restored items when the tokenizer has the same name, so the first projection after
   * it costs about what a warm one does. Without it, checkpoints save the facts that need no tokenizer.
   */
  readonly tokenizer?: Tokenizer;
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
}

const message = (error: unknown): string => errorText(error);
const toIso = (value: Date | string | number): string =>
  typeof value === 'string' ? value : (value instanceof Date ? value : new Date(value)).toISOString();

// Every option has a schema entry: adding an option without one does not compile.
void (OpenSessionOptionsSchema.shape satisfies Record<keyof OpenSessionOptions, z.ZodType>);

/**
 * Creates a session, or resumes the one with `options.id` by folding the log (from its latest valid checkpoint).
 * @example const session = await openSession(await openLevelLog('./.ledger'), { id: 'task-42' })
 */
export const openSession = async (log: SessionEventLog, options: OpenSessionOptions = {}): Promise<AgentSession> => {
  parseOptions(OpenSessionOptionsSchema, options, 'openSession');
  parseOptions(objectWithMethods('a SessionEventLog', 'append', 'read', 'head'), log, 'openSession log');
  const id = options.id ?? (options.ids ?? randomUUID)();
  const hooks = options.hooks ?? {};
  const checkpointEvery = options.checkpointEvery ?? 10_000;
  if (!Number.isInteger(checkpointEvery) || checkpointEvery < 0) {
    throw new InvalidOptionsError('openSession', [{ path: 'checkpointEvery', message: `must be a non-negative integer, got ${String(checkpointEvery)}` }]);
  }
  const tokenizer = options.tokenizer;
  const rebuilt = await rebuildState(log, id, tokenizer ? { tokenizer } : {});
  let run: RunState = rebuilt.run;
  let lastType: SessionEvent['type'] | undefined;
  // A long fold without a usable checkpoint: the next append takes one (never on open itself).
  let checkpointDue = checkpointEvery > 0 && rebuilt.headSeq > 0 && (rebuilt.eventsFolded >= checkpointEvery || rebuilt.rejectedCheckpoint !== undefined);
  // The projection facts taken with the last checkpoint event, stored with the checkpoint once the event is.
  let pendingFacts: { readonly digest: string; readonly facts: ProjectionFacts } | undefined;
  const checkpointEvent = (state: SessionState): NewSessionEvent => {
    const facts = projectionFactsOf(
      visibleEntries(state.memory).map((entry) => entry.item),
      tokenizer,
    );
    const event = checkpointEventFor(state, checkpointEvery, facts);
    pendingFacts = { digest: event.digest, facts };
    return event;
  };

  const memory = createEventSourcedMemory({
    sessionId: id,
    appender: appenderFor(log, id),
    state: rebuilt.state,
    headSeq: rebuilt.headSeq,
    compressor: options.compressor,
    // A compressor's compaction runs onCompact like a policy's (trigger auto, no step: it runs after a write).
    onCompressed: async ({ snapshot, compressed, policy, event, lastResult }) => {
      const result = (lastResult as CompactResult | undefined) ?? { ...emptyCompactLists(), memory: compressed, ...(compressed.summary != null ? { summary: compressed.summary } : {}) };
      await runOnCompact({ sessionId: id, snapshot, policy, trigger: 'auto', step: undefined, result, event: event as SessionEventOf<'memory.compacted'> });
    },
    afterAppend: async (stored, state) => {
      const before = stored[0]!.seq - 1;
      const last = stored[stored.length - 1]!;
      for (const event of stored) run = runReducer(run, event);
      lastType = last.type;
      if (options.onEvents) {
        try {
          options.onEvents(stored);
        } catch {
          // a listener must not break the write
        }
      }
      if (last.type === 'checkpoint.taken') {
        const facts = pendingFacts?.digest === last.digest ? pendingFacts.facts : undefined;
        pendingFacts = undefined;
        // Facts that were not digested with this event are not stored (its digest would then not match).
        await writeCheckpoint(log, id, last, { memory: state, run }, {
          ...(checkpointEvery > 0 ? { band: checkpointEvery } : {}),
          ...(facts !== undefined ? { projection: facts } : {}),
        });
        return undefined;
      }
      if (checkpointEvery > 0 && (checkpointDue || Math.floor(last.seq / checkpointEvery) > Math.floor(before / checkpointEvery))) {
        checkpointDue = false;
        return [checkpointEvent({ memory: state, run })];
      }
      return undefined;
    },
  });
  const resumed = rebuilt.headSeq > 0;
  if (!resumed) await memory.record([{ type: 'session.started', ...(options.metadata ? { metadata: options.metadata } : {}) }]);

  const recordQuietly = async (events: readonly NewSessionEvent[]): Promise<void> => {
    try {
      await memory.record(events);
    } catch {
      // Recording a failure must not throw out of autoCompactIfNecessary; the log itself is failing.
    }
  };

  /** Turns a policy result into a `memory.compacted` event, keeping items added while the policy ran. */
  const applyResult = async (
    before: MemoryState,
    snapshot: MemorySnapshot,
    result: CompactResult,
    meta: { trigger: 'auto' | 'manual'; policy: ComponentDescription; step?: number | undefined },
    tokenizer: Tokenizer,
  ): Promise<SessionEventOf<'memory.compacted'>> => {
    const now = memory.state();
    if (now !== before) {
      const sameStart = before.entries.every((e, i) => now.entries[i]?.id === e.id) && now.summary === before.summary;
      if (!sameStart) throw new CompactionConflictError(id);
    }
    const added = now.entries.slice(before.entries.length).map((e) => e.item);
    const target: MemorySnapshot = result.memory ?? { items: snapshot.items, summary: result.summary ?? snapshot.summary ?? null };
    const { memory: _m, summarizer, ...record } = result;
    const after = { items: [...target.items, ...added], summary: target.summary ?? null };
    const event = compactionEventFor(now, after, record, { ...meta, summarizer, factsThroughSeq: lastFactSeq(before.facts) });
    const tokens = {
      before: memoryTokens(now.entries.map((e) => e.item), now.summary, tokenizer),
      after: memoryTokens(after.items, after.summary, tokenizer),
      tokenizer: tokenizer.name,
    };
    const [stored] = await memory.record([{ ...event, tokens }]);
    return stored as SessionEventOf<'memory.compacted'>;
  };

  const runOnCompact = async (context: CompactedHookContext): Promise<void> => {
    if (!hooks.onCompact) return;
    try {
      await hooks.onCompact(context);
    } catch (error) {
      await recordQuietly([{ type: 'hook.failed', hook: 'onCompact', error: message(error), ...(context.step !== undefined ? { step: context.step } : {}) }]);
    }
  };

  /**
   * The one compaction pipeline, for manual and automatic compaction: describe the policy, (auto) ask
   * shouldCompact and beforeCompact, run the policy, record `memory.compacted`, run onCompact. Every failure is
   * recorded where it happens (`compaction.failed` with its stage, or `hook.failed`) and returned as the left;
   * the right is the recorded compaction, or null when the policy or a hook declined (auto only).
   */
  const runCompaction = async (
    policy: CompactPolicy,
    trigger: 'auto' | 'manual',
    compactOptions: CompactOptions,
  ): Promise<E.Either<CompactionFailure, RecordedCompaction | null>> => {
    const { step, signal } = compactOptions;
    const stepField = step !== undefined ? { step } : {};
    const fail = async (stage: CompactionStage, error: unknown, events: readonly NewSessionEvent[]): Promise<E.Either<CompactionFailure, never>> => {
      await recordQuietly(events);
      return E.left({ stage, error });
    };
    const before = memory.state();
    const snapshot = memory.snapshot();
    let policyDescription: ComponentDescription;
    try {
      policyDescription = describePolicy(policy);
    } catch (error) {
      // An undescribable policy fails where it would first be used: at shouldCompact (auto) or compact (manual).
      const stage = trigger === 'auto' ? 'shouldCompact' : 'compact';
      return fail(stage, error, [{ type: 'compaction.failed', trigger, policy: { name: 'CompactPolicy', settings: {} }, stage, error: message(error), ...stepField }]);
    }
    const base = { trigger, policy: policyDescription, ...stepField };
    const context: CompactHookContext = { sessionId: id, snapshot, policy: policyDescription, trigger, step };
    if (trigger === 'auto') {
      try {
        if (!(await policy.shouldCompact?.(snapshot))) return E.right(null);
      } catch (error) {
        return fail('shouldCompact', error, [{ type: 'compaction.failed', ...base, stage: 'shouldCompact', error: message(error) }]);
      }
      if (hooks.beforeCompact) {
        try {
          if ((await hooks.beforeCompact(context)) === false) {
            await recordQuietly([{ type: 'compaction.skipped', ...base, reason: 'vetoed' }]);
            return E.right(null);
          }
        } catch (error) {
          return fail('beforeCompact', error, [{ type: 'hook.failed', hook: 'beforeCompact', error: message(error), ...stepField }]);
        }
      }
    }
    let result: CompactResult;
    try {
      // A policy that ignores the signal is not waited for; its late result is never applied.
      result = await untilAborted(
        Promise.resolve().then(() => policy.compact(snapshot, signal ? { signal } : undefined)),
        signal,
        'the compaction policy',
      );
    } catch (error) {
      return fail('compact', error, [{ type: 'compaction.failed', ...base, stage: 'compact', error: message(error) }]);
    }
    let event: SessionEventOf<'memory.compacted'>;
    try {
      event = await applyResult(before, snapshot, result, base, compactOptions.tokenizer ?? approxTokenizer);
    } catch (error) {
      return fail('record', error, [{ type: 'compaction.failed', ...base, stage: 'record', error: message(error) }]);
    }
    await runOnCompact({ ...context, result, event });
    return E.right({ result, event });
  };

  const session: AgentSession = {
    id,
    log,
    memory,
    resumed,
    opened: {
      from: rebuilt.from,
      eventsFolded: rebuilt.eventsFolded,
      ...(rebuilt.rejectedCheckpoint !== undefined ? { rejectedCheckpoint: rebuilt.rejectedCheckpoint } : {}),
      ...(rebuilt.projectionFacts !== undefined ? { projectionFacts: rebuilt.projectionFacts } : {}),
    },
    state: () => ({ memory: memory.state(), run }),

    async compact(policy, compactOptions = {}) {
      if (!policy) throw new InvalidOptionsError('compact', [{ path: 'policy', message: 'is required' }]);
      const outcome = await runCompaction(policy, 'manual', compactOptions);
      if (E.isLeft(outcome)) throw outcome.left.error;
      // A manual compaction has no shouldCompact gate and no veto, so the right side always holds a compaction.
      return outcome.right!.result;
    },

    async autoCompactIfNecessary(policy, compactOptions = {}) {
      if (!policy || typeof policy.shouldCompact !== 'function') return null;
      const outcome = await runCompaction(policy, 'auto', compactOptions);
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
      if (memory.headSeq() > 0 && lastType !== 'checkpoint.taken') {
        await memory.record([checkpointEvent(session.state())]);
      }
      return session.snapshot();
    },

    record(events) {
      return memory.record(events);
    },
  };
  return session;
};
