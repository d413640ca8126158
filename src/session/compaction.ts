// The one compaction pipeline: manual and automatic compaction by a policy, and a compressor's compaction after a write.
import * as E from 'fp-ts/lib/Either.js';
import { describePolicy, type CompactContext, type CompactPolicy, type CompactReason, type CompactResult } from '../compact/index.js';
import { approxTokenizer, itemTokenCount, type Tokenizer } from '../context/index.js';
import { describeComponent, emptyCompactLists, type ComponentDescription, type MemorySnapshot, type NewSessionEvent, type SessionEventOf } from '../events/index.js';
import { errorText } from '../base/index.js';
import { callIdsOf, systemMessage, type MemoryItem } from '../items/index.js';
import { untilAborted } from '../model/index.js';
import { compactionEventFor, lastFactSeq, type AgentMemory, type MemoryCompressor, type MemoryState } from '../memory/index.js';
import { CompactionConflictError } from './errors.js';
import { memoryTokenTracker, type MemoryMeasure } from './memory-tokens.js';

/** Options of a compaction: the step it belongs to, and the tokenizer its `tokens` record is counted with (default approx). */
export interface CompactOptions {
  readonly step?: number;
  readonly tokenizer?: Tokenizer;
  /** Aborts a waiting policy (e.g. an LLM summarizer); the compaction is then recorded as failed. */
  readonly signal?: AbortSignal;
  /** Why to compact, recorded as `memory.compacted.reason`; on an automatic compaction it skips `shouldCompact` (e.g. `overflow`). */
  readonly reason?: CompactReason;
  /** The input tokens the provider reported for the last request (given to `shouldCompact` as `lastInputTokens`). */
  readonly lastInputTokens?: number | undefined;
  /** Focus instructions for the policy; recorded as `memory.compacted.reason = { kind: 'requested', instructions }`. */
  readonly instructions?: string;
  /** The agent's recall tool, when it has one: the policy adds a line on how to recall to its summary. */
  readonly recallTool?: string;
}

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

/** The memory a compaction works on and the hooks it runs. */
export interface CompactionTarget {
  readonly sessionId: string;
  readonly memory: AgentMemory;
  readonly hooks: SessionHooks;
  /** Memory's tokens with a tokenizer, kept warm across steps (default: counted afresh). */
  readonly measure?: (tokenizer: Tokenizer) => MemoryMeasure;
  /** Calls waiting for approval: the item holding the first of them and every item after it are kept as they are. */
  readonly protectedCallIds?: () => readonly string[];
}

/**
 * The index of the first memory entry that holds a protected call (a call waiting for approval), or -1: a compaction
 * works on the entries before it and keeps that entry and everything after it verbatim, so a pending call is never
 * summarised away and its result (recorded later) always finds it.
 */
const protectedFromIndex = (state: MemoryState, callIds: readonly string[] | undefined): number => {
  if (!callIds || callIds.length === 0) return -1;
  const wanted = new Set(callIds);
  return state.entries.findIndex((entry) => callIdsOf(entry.item).some((id) => wanted.has(id)));
};

/**
 * What compacts: a policy, `manual` (no gate) or `auto` (gated by `shouldCompact` and `beforeCompact`), or a
 * compressor after a write (recorded as `auto`; the compressor is its own gate: memory it leaves as it was records nothing).
 */
export type CompactionSource =
  | { readonly policy: CompactPolicy; readonly trigger: 'auto' | 'manual'; /** Asked for (the `compact` tool): not gated by shouldCompact. */ readonly requested?: boolean }
  | { readonly compressor: MemoryCompressor };

/** The tokens of memory as a prompt would carry it: the summary (when not blank) as a system message, then the items. */
const memoryTokens = (items: readonly MemoryItem[], summary: string | null | undefined, tokenizer: Tokenizer): number => {
  let total = summary !== null && summary !== undefined && summary.trim() !== '' ? itemTokenCount(systemMessage(summary), tokenizer) : 0;
  for (const item of items) total += itemTokenCount(item, tokenizer);
  return total;
};

const sameMemory = (state: MemoryState, snapshot: MemorySnapshot): boolean =>
  (snapshot.summary ?? null) === state.summary &&
  snapshot.items.length === state.entries.length &&
  snapshot.items.every((item, i) => item === state.entries[i]?.item);

const recordQuietly = async (target: CompactionTarget, events: readonly NewSessionEvent[]): Promise<void> => {
  try {
    await target.memory.record(events);
  } catch {
    // Recording a failure must not throw out of the pipeline; the log itself is failing.
  }
};

/** Records `memory.compacted` turning `before` into `after`, keeping items added while the policy ran (a changed start is a conflict). */
const recordCompaction = async (
  target: CompactionTarget,
  before: MemoryState,
  after: MemorySnapshot,
  result: CompactResult,
  meta: { trigger: 'auto' | 'manual'; policy: ComponentDescription; step?: number | undefined },
  tokenizer: Tokenizer,
  reason: CompactReason,
): Promise<SessionEventOf<'memory.compacted'>> => {
  const now = target.memory.state();
  if (now !== before) {
    const sameStart = before.entries.every((e, i) => now.entries[i]?.id === e.id) && now.summary === before.summary;
    if (!sameStart) throw new CompactionConflictError(target.sessionId);
  }
  const added = now.entries.slice(before.entries.length).map((e) => e.item);
  const { memory: _m, summarizer, usage, ...record } = result;
  const memory = { items: [...after.items, ...added], summary: after.summary ?? null };
  const event = compactionEventFor(now, memory, record, { ...meta, summarizer, factsThroughSeq: lastFactSeq(before.facts) });
  const tokens = {
    before: memoryTokens(now.entries.map((e) => e.item), now.summary, tokenizer),
    after: memoryTokens(memory.items, memory.summary, tokenizer),
    tokenizer: tokenizer.name,
  };
  const [stored] = await target.memory.record([{ ...event, tokens, reason, ...(usage !== undefined ? { usage: { ...usage } } : {}) }]);
  return stored as SessionEventOf<'memory.compacted'>;
};

/** Runs `onCompact`; a throw is recorded as `hook.failed`. */
const runOnCompact = async (target: CompactionTarget, context: CompactedHookContext): Promise<void> => {
  if (!target.hooks.onCompact) return;
  try {
    await target.hooks.onCompact(context);
  } catch (error) {
    await recordQuietly(target, [
      { type: 'hook.failed', hook: 'onCompact', error: errorText(error), ...(context.step !== undefined ? { step: context.step } : {}) },
    ]);
  }
};

/** What a policy's `compact` is passed: the signal, focus instructions and the recall tool, when there are any. */
const policyOptions = (signal: AbortSignal | undefined, options: Pick<CompactOptions, 'instructions' | 'recallTool' | 'tokenizer'>) => {
  const passed = {
    ...(signal ? { signal } : {}),
    ...(options.instructions !== undefined ? { instructions: options.instructions } : {}),
    ...(options.recallTool !== undefined ? { recallTool: options.recallTool } : {}),
    ...(options.tokenizer !== undefined ? { tokenizer: options.tokenizer } : {}),
  };
  return Object.keys(passed).length > 0 ? passed : undefined;
};

/** The policy's or compressor's result and the memory it leaves (undefined: a compressor left memory as it was). */
const compactWith = async (
  source: CompactionSource,
  before: MemoryState,
  snapshot: MemorySnapshot,
  signal: AbortSignal | undefined,
  options: Pick<CompactOptions, 'instructions' | 'recallTool' | 'tokenizer'> = {},
): Promise<{ readonly result: CompactResult; readonly after: MemorySnapshot } | undefined> => {
  if ('compressor' in source) {
    const compressed = await source.compressor.compress(snapshot);
    if (sameMemory(before, compressed)) return undefined;
    const last = (source.compressor as { getLastResult?: () => unknown }).getLastResult?.() as CompactResult | null | undefined;
    const result = last ?? { ...emptyCompactLists(), memory: compressed, ...(compressed.summary != null ? { summary: compressed.summary } : {}) };
    return { result, after: compressed };
  }
  const { policy } = source;
  // A policy that ignores the signal is not waited for; its late result is never applied.
  const result = await untilAborted(
    Promise.resolve().then(() => policy.compact(snapshot, policyOptions(signal, options))),
    signal,
    'the compaction policy',
  );
  return { result, after: result.memory ?? { items: snapshot.items, summary: result.summary ?? snapshot.summary ?? null } };
};

/**
 * The one compaction pipeline, for manual and automatic compaction and for compressors: describe the policy,
 * (auto) ask shouldCompact and beforeCompact, run the policy, record `memory.compacted`, run onCompact. Every
 * failure is recorded where it happens (`compaction.failed` with its stage, or `hook.failed`) and returned as the
 * left; the right is the recorded compaction, or null when the policy, a hook or the compressor declined.
 * @example const outcome = await runCompaction({ sessionId, memory, hooks }, { policy, trigger: 'manual' }, { step: 3 })
 */
export const runCompaction = async (
  target: CompactionTarget,
  source: CompactionSource,
  options: CompactOptions = {},
): Promise<E.Either<CompactionFailure, RecordedCompaction | null>> => {
  const { step, signal } = options;
  const trigger = 'compressor' in source ? 'auto' : source.trigger;
  const requested = 'policy' in source && source.requested === true;
  const gated = 'policy' in source && source.trigger === 'auto' && options.reason === undefined && !requested;
  const tokenizer = options.tokenizer ?? approxTokenizer;
  // Asked for by the agent (the compact tool) or with focus instructions by the host: recorded as requested.
  const requestedReason: CompactReason | undefined =
    requested || options.instructions !== undefined
      ? { kind: 'requested' as const, ...(options.instructions !== undefined ? { instructions: options.instructions } : {}) }
      : undefined;
  const stepField = step !== undefined ? { step } : {};
  const fail = async (stage: CompactionStage, error: unknown, events: readonly NewSessionEvent[]): Promise<E.Either<CompactionFailure, never>> => {
    await recordQuietly(target, events);
    return E.left({ stage, error });
  };
  const whole = target.memory.state();
  const protectedFrom = protectedFromIndex(whole, target.protectedCallIds?.());
  // With calls waiting for approval, the policy sees memory up to the first of them; the rest is kept after its result.
  const before: MemoryState = protectedFrom < 0 ? whole : { ...whole, entries: whole.entries.slice(0, protectedFrom) };
  const fullSnapshot = target.memory.snapshot();
  const snapshot: MemorySnapshot = protectedFrom < 0 ? fullSnapshot : { ...fullSnapshot, items: fullSnapshot.items.slice(0, protectedFrom) };
  let policyDescription: ComponentDescription;
  try {
    policyDescription = 'compressor' in source ? describeComponent(source.compressor, 'MemoryCompressor') : describePolicy(source.policy);
  } catch (error) {
    // An undescribable policy fails where it would first be used: at shouldCompact (auto) or compact (manual, compressor).
    const stage = gated ? 'shouldCompact' : 'compact';
    const policy = { name: 'compressor' in source ? 'MemoryCompressor' : 'CompactPolicy', settings: {} };
    return fail(stage, error, [{ type: 'compaction.failed', trigger, policy, stage, error: errorText(error), ...stepField }]);
  }
  const base = { trigger, policy: policyDescription, ...stepField };
  const context: CompactHookContext = { sessionId: target.sessionId, snapshot, policy: policyDescription, trigger, step };
  let reason: CompactReason = options.reason ?? requestedReason ?? (trigger === 'manual' ? { kind: 'manual' } : { kind: 'items', value: before.entries.length });
  if (gated) {
    try {
      const measured = (target.measure ?? ((t: Tokenizer) => memoryTokenTracker(t)(before)))(tokenizer);
      const compactContext: CompactContext = {
        tokens: measured.tokens,
        items: before.entries.length,
        ...(options.lastInputTokens !== undefined ? { lastInputTokens: options.lastInputTokens } : {}),
        ...(step !== undefined ? { step } : {}),
        ...(measured.lastCompaction !== undefined ? { lastCompaction: measured.lastCompaction } : {}),
      };
      if (!(await source.policy.shouldCompact?.(snapshot, compactContext))) return E.right(null);
      reason = source.policy.compactTrigger?.(snapshot, compactContext) ?? reason;
    } catch (error) {
      return fail('shouldCompact', error, [{ type: 'compaction.failed', ...base, stage: 'shouldCompact', error: errorText(error) }]);
    }
    if (target.hooks.beforeCompact) {
      try {
        if ((await target.hooks.beforeCompact(context)) === false) {
          await recordQuietly(target, [{ type: 'compaction.skipped', ...base, reason: 'vetoed' }]);
          return E.right(null);
        }
      } catch (error) {
        return fail('beforeCompact', error, [{ type: 'hook.failed', hook: 'beforeCompact', error: errorText(error), ...stepField }]);
      }
    }
  }
  let compacted: { readonly result: CompactResult; readonly after: MemorySnapshot } | undefined;
  try {
    compacted = await compactWith(source, before, snapshot, signal, options);
  } catch (error) {
    return fail('compact', error, [{ type: 'compaction.failed', ...base, stage: 'compact', error: errorText(error) }]);
  }
  if (compacted === undefined) return E.right(null);
  const { result, after } = compacted;
  let event: SessionEventOf<'memory.compacted'>;
  try {
    event = await recordCompaction(target, before, after, result, base, tokenizer, reason);
  } catch (error) {
    return fail('record', error, [{ type: 'compaction.failed', ...base, stage: 'record', error: errorText(error) }]);
  }
  // Calls waiting for approval (and what follows them) were kept as they are: the result's memory holds them too.
  const tail = protectedFrom < 0 ? [] : fullSnapshot.items.slice(protectedFrom);
  const shown: CompactResult =
    tail.length === 0 ? result : { ...result, memory: { ...(result.memory ?? after), items: [...(result.memory ?? after).items, ...tail] } };
  await runOnCompact(target, { ...context, result: shown, event });
  return E.right({ result: shown, event });
};

/**
 * A memory's `afterItemsWritten` when it has a compressor: the compressor's compaction through the pipeline after
 * each write of items, one at a time (so one never works from memory that another is replacing). Failures are
 * recorded as `compaction.failed`, never thrown: the write stands.
 * @example createLiveSession({ sessionId, appender, afterItemsWritten: compressAfterWrite(compressor, sessionId) })
 */
export const compressAfterWrite = (compressor: MemoryCompressor, sessionId: string, hooks: SessionHooks = {}): ((memory: AgentMemory) => Promise<void>) => {
  let previous: Promise<unknown> = Promise.resolve();
  return (memory) => {
    const run = previous.then(() => runCompaction({ sessionId, memory, hooks }, { compressor }));
    previous = run.catch(() => undefined);
    return run.then(() => undefined);
  };
};
