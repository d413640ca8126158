// replaySession: re-project every step from recorded memory ('project'), or run the runtime again from the recording ('rerun').
import {
  parseContextBudget,
  type ContextBudget,
  type ContextProjector,
} from '../context/index.js';
import { describePolicy, type CompactPolicy, type ComponentRegistry } from '../compact/index.js';
import { type SessionEvent, type SessionEventOf } from '../events/index.js';
import { canonicalJson } from '../base/index.js';
import type { SessionEventLog } from '../log/index.js';
import { compactionEventFor, createMemoryFold, type MemoryState } from '../memory/index.js';
import { initialSessionState, sessionReducer } from '../session/index.js';
import { InvalidOptionsError } from '../base/errors.js';
import { tighterBudgetAfterOverflow } from '../runtime/index.js';
/** setTimeout's own limit (about 24.8 days). */
const MAX_CODE_TIMEOUT_MS = 2_147_483_647;
import { headOf } from './memory-at.js';
import { projectMemory, projectionDifferences, projectorOfRecord, recordedFates, recordedRequestBudget, type Reprojection } from './reproject.js';
import { holdsErased } from './erased-steps.js';
import { rerunSession } from './rerun.js';
import type { Divergence, ReplayOptions, ReplayResult } from './types.js';

/** The projection the recording made, rebuilt (its items are compared by content with a replay's). */
const commonPrefix = (a: readonly unknown[], b: readonly unknown[]): number => {
  let i = 0;
  while (i < a.length && i < b.length && canonicalJson(a[i]) === canonicalJson(b[i])) i++;
  return i;
};

/** added / dropped / rewritten between a recorded projection and a replayed one. */
export const compareProjections = (
  recorded: SessionEventOf<'context.projected'>,
  recordedItems: readonly unknown[] | undefined,
  again: Reprojection,
): NonNullable<Divergence['context']> => {
  // The recorded fates are by position in the memory it saw, which is the memory re-projected here.
  const before = recordedFates(recorded, again.sourceIds) ?? { sent: [], fates: [] };
  const recordedSent = new Set(before.sent);
  const againSent = new Set(again.sent);
  const recordedFate = new Map(before.fates.map((f) => [f.id, f.fate]));
  return {
    added: again.sent.filter((id) => !recordedSent.has(id)),
    dropped: before.sent.filter((id) => !againSent.has(id)),
    rewritten: again.fates.filter((f) => f.fate !== 'dropped' && recordedSent.has(f.id) && recordedFate.get(f.id) !== f.fate).map((f) => f.id),
    commonPrefixItems: recordedItems ? commonPrefix(recordedItems, again.items) : 0,
  };
};

const describeKey = (value: unknown): string => canonicalJson(value);

/** Rebuilds projectors as recorded (projectorOfRecord), cached by description unless the step recorded its own token counts. */
const projectorCache = (registry: ComponentRegistry) => {
  const cache = new Map<string, ContextProjector>();
  return (event: SessionEventOf<'context.projected'>): ContextProjector => {
    if (event.tokenCounts !== undefined) return projectorOfRecord(event, registry);
    const key = describeKey(event.projector);
    let projector = cache.get(key);
    if (!projector) {
      projector = projectorOfRecord(event, registry);
      cache.set(key, projector);
    }
    return projector;
  };
};

/** Applies a policy to simulated memory as the session does at the top of a step; the new memory, or the same one. */
const compactSimulated = async (memory: MemoryState, policy: CompactPolicy, seq: number, step: number | undefined): Promise<{ memory: MemoryState; compacted: boolean }> => {
  const snapshot = { items: memory.entries.map((e) => e.item), summary: memory.summary, facts: memory.facts, readFiles: memory.readFiles, modifiedFiles: memory.modifiedFiles };
  if (!policy.shouldCompact || !(await policy.shouldCompact(snapshot))) return { memory, compacted: false };
  let result;
  try {
    result = await policy.compact(snapshot);
  } catch {
    return { memory, compacted: false };
  }
  const target = result.memory ?? { items: snapshot.items, summary: result.summary ?? snapshot.summary ?? null };
  const { memory: _m, summarizer: _s, ...record } = result;
  const event = compactionEventFor(memory, { items: target.items, summary: target.summary ?? null }, record, {
    trigger: 'auto',
    policy: describePolicy(policy),
    ...(step !== undefined ? { step } : {}),
  });
  // A synthetic stored event: its seq is the step's first seq, so inline items get ids no recorded event has.
  const stored = { ...event, sessionId: '', seq, at: '', v: 1, prevHash: '', hash: '' } as unknown as SessionEvent;
  return { memory: sessionReducer({ memory, run: initialSessionState.run }, stored).memory, compacted: true };
};

const projectMode = async (log: SessionEventLog, sessionId: string, options: ReplayOptions): Promise<ReplayResult> => {
  const registry = options.registry ?? {};
  const projectorOf = projectorCache(registry);
  const budgetOverride = options.budget !== undefined ? parseContextBudget(options.budget) : undefined;
  const changed = budgetOverride !== undefined || options.projector !== undefined || options.policy !== undefined;
  const notes: string[] = [];
  // Recorded memory, folded as the events come and built only where a step reads it: one copy of its entries per
  // step, not one per event that adds an item.
  const recordedMemory = createMemoryFold(initialSessionState.memory);
  // Under a changed policy memory evolves apart from the recording: `simulated` is memory under that policy.
  let simulated = options.policy ? createMemoryFold(initialSessionState.memory) : undefined;
  let compactionsDiffer = false;
  let steps = 0;
  const divergent: number[] = [];
  const erasedSteps: number[] = [];
  const erasedSeqs = new Set<number>();
  let first: Divergence | undefined;
  const onProgress = options.onProgress;
  const total = onProgress ? await log.head(sessionId) : 0;
  // A step retried after a provider overflow projects again within a tighter budget: with a replaced budget, the same tightening of it.
  let overflowed: SessionEventOf<'model.failed'> | undefined;
  let lastOverride: { step: number | undefined; budget: ContextBudget; again: Reprojection } | undefined;
  for await (const event of log.read(sessionId)) {
    options.signal?.throwIfAborted();
    if (onProgress && (event.seq % 64 === 0 || event.seq === total)) onProgress(event.seq, total);
    if (event.type === 'model.failed') overflowed = event;
    if (event.erased !== undefined) erasedSeqs.add(event.seq);
    if (simulated !== undefined && options.policy) {
      if (event.type === 'step.started') {
        const outcome = await compactSimulated(simulated.result(), options.policy, event.seq, event.step);
        if (outcome.compacted) simulated = createMemoryFold(outcome.memory);
        if (outcome.compacted) notes.push(`step ${event.step}: the replacement policy compacted`);
      }
    }
    if (event.type === 'context.projected') {
      steps += 1;
      const state = { memory: recordedMemory.result() };
      const recordedProjector = projectorOf(event);
      const library = event.projector.settings['tokenizerLibrary'];
      const current = recordedProjector.describe().settings['tokenizerLibrary'];
      if (library !== undefined && library !== current) {
        const note = `recorded with ${String(library)}, replayed with ${String(current ?? 'another tokenizer')}: token counts may differ`;
        if (!notes.includes(note)) notes.push(note);
      }
      const recordedBudget = event.budget as ContextBudget;
      const whole = recordedRequestBudget(event, recordedProjector);
      const recorded = changed ? projectMemory(state.memory, recordedProjector, recordedBudget, whole) : undefined;
      const againProjector = options.projector ?? recordedProjector;
      const previous = lastOverride;
      const override =
        budgetOverride !== undefined && overflowed !== undefined && previous !== undefined && previous.step === event.step && overflowed.step === event.step
          ? tighterBudgetAfterOverflow(previous.budget, overflowed, previous.again)
          : budgetOverride;
      overflowed = undefined;
      const again = projectMemory(simulated?.result() ?? state.memory, againProjector, override ?? recordedBudget, whole && options.projector ? recordedRequestBudget(event, againProjector) : whole);
      if (override !== undefined) lastOverride = { step: event.step, budget: override, again };
      // With a replaced setting the question is what would have been sent: compare the content (digest, ids).
      const fields = changed ? projectionDifferences(event, again).filter((f) => f === 'digest' || (simulated === undefined && f === 'sent')) : projectionDifferences(event, again);
      if (fields.length > 0 && holdsErased(event, state.memory, erasedSeqs)) {
        erasedSteps.push(event.step ?? steps);
      } else if (fields.length > 0) {
        divergent.push(event.step ?? steps);
        if (!first) {
          first = {
            step: event.step,
            seq: event.seq,
            type: 'context.projected',
            fields,
            context: compareProjections(event, (recorded ?? projectMemory(state.memory, recordedProjector, recordedBudget, whole)).items, again),
          };
        }
      }
    }
    if (simulated !== undefined) {
      if (event.type === 'memory.compacted') {
        if (!compactionsDiffer) {
          compactionsDiffer = true;
          notes.push(`a recorded compaction at seq ${event.seq} (step ${event.step ?? '?'}) was replaced by the policy's own; items are compared by content from here`);
        }
      } else {
        simulated.add(event);
      }
    }
    recordedMemory.add(event);
  }
  return {
    mode: 'project',
    identical: divergent.length === 0,
    steps,
    divergentSteps: divergent.length,
    divergentStepNumbers: divergent,
    ...(first ? { firstDivergence: first } : {}),
    ...(erasedSteps.length > 0 ? { erasedSteps: erasedSteps.length, erasedStepNumbers: erasedSteps } : {}),
    notes,
  };
};

/**
 * Replays a recorded session and says whether it reproduces. `mode: 'project'` (default) folds the recorded
 * events and re-projects every step (recorded projector and budget, rebuilt by name) and compares digest, sent
 * ids, fates and report with `context.projected`. `mode: 'rerun'` runs the runtime again (answers from
 * `model.responded`, tools from `tool.result`) and compares every new event with the recorded one except `at`,
 * `hash`, `prevHash` and `durationMs`. With `budget`, `projector` or `policy` it answers "what would this
 * setting have sent": the first step that differs and how many do. Reads only.
 * @example const { identical, firstDivergence } = await replaySession(log, 'task-42', { budget: { maxTokens: 8_000 } })
 */
export const replaySession = async (log: SessionEventLog, sessionId: string, options: ReplayOptions = {}): Promise<ReplayResult> => {
  await headOf(log, sessionId);
  const mode = options.mode ?? 'project';
  if (mode !== 'project' && mode !== 'rerun') throw new InvalidOptionsError('replaySession', [{ path: 'mode', message: `must be 'project' or 'rerun', got ${JSON.stringify(mode)}` }]);
  const cap = options.maxCodeTimeoutMs;
  if (cap !== undefined && !(typeof cap === 'number' && cap > 0 && cap <= MAX_CODE_TIMEOUT_MS)) {
    throw new InvalidOptionsError('replaySession', [{ path: 'maxCodeTimeoutMs', message: `must be a positive number of ms up to ${MAX_CODE_TIMEOUT_MS}, got ${String(cap)}` }]);
  }
  options.signal?.throwIfAborted();
  if (mode === 'rerun') return rerunSession(log, sessionId, options);
  return projectMode(log, sessionId, options);
};

