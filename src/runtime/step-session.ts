// A session's side of the step loop: what the stages use of the agent, recording, hooks and answering left-over calls.
import type { CompactPolicy } from '../compact/index.js';
import type { ContextBudget, ContextProjector } from '../context/index.js';
import { type NewSessionEvent, type SessionEvent } from '../events/index.js';
import { errorText } from '../base/index.js';
import { UnansweredCallTracker, type MemoryItem } from '../items/index.js';
import { entriesAppendedFrom, type MemoryEntry } from '../memory/index.js';
import { deferWrite, deferredReachCheckpoint, flushDeferred } from '../session/index.js';
import type { ModelClient } from '../model/index.js';
import type { AgentSession } from '../session/index.js';
import type { AgentHooks, RuntimeNotification, TurnContext } from './hooks.js';
import type { NormalizedAnswer } from './normalize.js';
import type { Tool } from './tools.js';

/** What the stages use of an agent (an `Agent` is one). */
export interface StepAgent {
  readonly options: {
    readonly model: string;
    readonly modelClient: ModelClient;
    readonly compactPolicy?: CompactPolicy | undefined;
    readonly overflowRetries?: number | undefined;
    readonly hooks?: AgentHooks | undefined;
  };
  readonly projector: ContextProjector;
  readonly budget: ContextBudget;
  readonly ids: () => string;
  /** CodeAct: the user's tools, called from inside the code. */
  readonly innerTools: readonly Tool[];
  /** The most calls of one answer that run at once (`parallelToolCalls`; default 1). */
  readonly toolCallLimit?: number;
  /** The tools the model calls directly (the memory tools look for a recall tool among them). */
  readonly tools?: readonly Tool[];
  notify(notification: RuntimeNotification): void;
}

/** The last `model.requested` that carried the prompt: its seq and the canonical JSON of prompt and tools. */
export interface LastPrompt {
  readonly seq: number;
  readonly key: string;
}

/** The calls of memory's entries (as of `entries`) that have no output yet, kept up to date as entries are appended. */
export interface OpenCalls {
  entries: readonly MemoryEntry[];
  readonly tracker: UnansweredCallTracker;
}

/** A session's side of its steps: the agent, the session, and the prompt last recorded in full (a step updates it). */
export interface StepSession {
  readonly agent: StepAgent;
  readonly session: AgentSession;
  lastPrompt: LastPrompt | undefined;
  /** Memory's unanswered calls as of the last look (absent until then); a step only adds the entries appended since. */
  openCalls?: OpenCalls | undefined;
}

/** The model's answer of a step: normalised, with the items recorded in `model.responded`. */
export interface StepAnswer {
  readonly result: NormalizedAnswer;
  readonly items: readonly MemoryItem[];
}

/**
 * A re-run's model client answers, per projection in order, what the recording took off maxTokens (see
 * request-allowance.ts); its presence also tells the step that it runs again from a recording.
 */
export const REPLAYED_REQUEST = Symbol.for('context-ledger.replayedRequest');

/** Appends events to the session; memory folds them. */
export const recordEvents = (s: StepSession, events: readonly NewSessionEvent[]): Promise<readonly SessionEvent[]> => s.session.record(events);

/**
 * Records a step's bookkeeping events (`step.started`, `context.projected`, `step.ended`: they change neither memory
 * nor what the step reads of the session) with the session's next append instead of one of their own, so a step
 * writes three times (before the model call, its answer, its tool results) instead of six; the events and their
 * order are the same. `onStored` runs once they are stored. A re-run appends each at once, as it compares the
 * events it stores with the recording while it runs.
 */
export const deferEvents = async (
  s: StepSession,
  events: readonly NewSessionEvent[],
  onStored?: (stored: readonly SessionEvent[]) => void,
): Promise<void> => {
  const replaying = (s.agent.options.modelClient as { [REPLAYED_REQUEST]?: unknown })[REPLAYED_REQUEST] !== undefined;
  if (!replaying && deferWrite(s.session.memory, events, onStored)) {
    // A checkpoint follows them: stored now, so it is taken where and as it would be one append per event.
    if (deferredReachCheckpoint(s.session.memory)) await flushDeferred(s.session.memory);
    return;
  }
  const stored = await recordEvents(s, events);
  onStored?.(stored);
};

/** Stores what {@link deferEvents} put off, so that user code (a hook) sees the log and the session as they are. */
export const flushEvents = (s: StepSession): Promise<void> => flushDeferred(s.session.memory);

/** Runs a lifecycle hook; a throw is recorded as `hook.failed` and the run goes on. */
export const runHook = async <K extends keyof AgentHooks>(
  s: StepSession,
  name: K,
  context: Parameters<NonNullable<AgentHooks[K]>>[0] & TurnContext,
): Promise<void> => {
  const hook = s.agent.options.hooks?.[name] as ((c: unknown) => unknown) | undefined;
  if (!hook) return;
  await flushEvents(s);
  try {
    await hook.call(s.agent.options.hooks, context);
  } catch (error) {
    await recordEvents(s, [{ type: 'hook.failed', hook: name, error: errorText(error), step: context.step, runId: context.runId }]);
  }
};

/**
 * The calls in memory without an output: the entries appended since the last look are added to what it found, so a
 * step costs O(new entries) however large memory is; entries replaced (a compaction, restore, clear, rewind) are read
 * again from the start.
 */
export const openCallsOf = (s: StepSession): UnansweredCallTracker => {
  const entries = s.session.memory.state().entries;
  let open = s.openCalls;
  const from = open ? entriesAppendedFrom(open.entries, entries) : -1;
  if (!open || from < 0) open = { entries, tracker: new UnansweredCallTracker() };
  for (let i = from < 0 ? 0 : from; i < entries.length; i++) open.tracker.add((entries[i] as MemoryEntry).item);
  open.entries = entries;
  s.openCalls = open;
  return open.tracker;
};

/** Gives every call in memory without an output an error result, so the model never sees an unanswered call. */
export const answerUnansweredCalls = async (s: StepSession, step: number, why: string): Promise<void> => {
  // A call without a usable id (an old log, from before answers were normalised) cannot be answered; projection drops it.
  const missing = openCallsOf(s).unanswered().filter((c) => c.callId !== '');
  if (missing.length === 0) return;
  await recordEvents(
    s,
    missing.map((call) => ({
      type: 'tool.result' as const,
      callId: call.callId,
      output: `Error: not executed: ${why}`,
      isError: true,
      ...(call.name ? { name: call.name } : {}),
      step,
    })),
  );
};
