// RunState and runReducer: the run part of the session fold (last step, the open run, whether its plan exists).
import { assertNever } from '../base/assert-never.js';
import { z } from 'zod';
import type { SessionEvent } from '../events/index.js';

/** A call of the open run that asked for approval (`approval.requested`), and its decision once `approval.recorded` gave one. */
export const RunApprovalSchema = z.object({
  callId: z.string().min(1),
  name: z.string(),
  arguments: z.string(),
  step: z.number().int().nonnegative(),
  decision: z.object({ approved: z.boolean(), by: z.string().optional(), reason: z.string().optional(), seq: z.number().int().positive() }).optional(),
  /** Set by `approval.call-started`: the approved call began to run (after a crash it is answered, never run again). */
  started: z.literal(true).optional(),
});
export type RunApproval = z.infer<typeof RunApprovalSchema>;

/** How many of the session's latest drifts the `calibrate` margin is learned from. */
export const CALIBRATION_WINDOW = 5;

/**
 * What the provider reported of the session's requests, for the usage trigger and `calibrate` (decision 0021): the
 * input tokens of the last answer since memory was last replaced, and the latest drifts between the runtime's count
 * of what it sent and the provider's input tokens.
 */
export const RunUsageSchema = z.object({
  /** `usage.inputTokens` of the last `model.responded`; absent after a compaction, restore, clear or rewind (it measured memory that is gone). */
  lastInputTokens: z.number().optional(),
  /** The count of what the last `context.projected` sent (items and overhead), until the answer of its step pairs with it. */
  sent: z.object({ runId: z.string().optional(), step: z.number().int().nonnegative().optional(), tokens: z.number() }).optional(),
  /** The steps of the latest {@link CALIBRATION_WINDOW} drifts, across runs, oldest first. */
  steps: z.array(z.number().int().nonnegative()),
  /** Those drifts: the provider's input tokens (rounded) less the count of what was sent. */
  drifts: z.array(z.number()),
});
export type RunUsage = z.infer<typeof RunUsageSchema>;

/** The run state of a session; its zod schema is its definition (checkpoints are parsed with it). */
export const RunStateSchema = z.object({
  /** The highest step number started in the session (steps count across runs and resumes). */
  lastStep: z.number().int().nonnegative(),
  /**
   * A run that started and has not finished or failed, and whether its DeepResearch plan was recorded; `approvals`
   * (absent when none): its calls that asked for approval and have no `tool.result` yet, in the model's call order.
   */
  openRun: z.object({ runId: z.string().min(1), hasPlan: z.boolean(), approvals: z.array(RunApprovalSchema).optional() }).nullable(),
  /** A compaction the agent asked for (`compaction.requested`), due at the top of the next step; absent in older checkpoints. */
  requestedCompaction: z.object({ seq: z.number().int().positive(), instructions: z.string().optional() }).optional(),
  /** The provider's reported usage, across runs ({@link RunUsageSchema}); absent until a projection or an answer with usage. */
  usage: RunUsageSchema.optional(),
});
export type RunState = z.infer<typeof RunStateSchema>;

type OpenRun = NonNullable<RunState['openRun']>;

/** The open run with `approvals` replaced (the key left out when the list is empty, so states without approvals keep their shape). */
const withApprovals = (state: RunState, openRun: OpenRun, approvals: readonly RunApproval[]): RunState => {
  const { approvals: _old, ...rest } = openRun;
  return Object.freeze({ ...state, openRun: Object.freeze(approvals.length > 0 ? { ...rest, approvals: Object.freeze([...approvals]) as RunApproval[] } : rest) });
};

/**
 * The approvals of the open run that wait for a decision (none when no run is open).
 * @example pendingApprovalsOf(session.state().run).map((a) => a.callId)
 */
export const pendingApprovalsOf = (state: RunState): readonly RunApproval[] => (state.openRun?.approvals ?? []).filter((a) => a.decision === undefined);

export const initialRunState: RunState = Object.freeze({ lastStep: 0, openRun: null });

/** The run state without a requested compaction (the key is absent, as in states recorded before it existed). */
const withoutRequest = (state: RunState, changes: Partial<RunState> = {}): RunState => {
  const { requestedCompaction: _r, ...rest } = state;
  return Object.freeze({ ...rest, ...changes });
};

const EMPTY_USAGE: RunUsage = Object.freeze({ steps: [], drifts: [] });

/** The run state with `usage` changed (the key left out when nothing is left in it). */
const withUsage = (state: RunState, usage: RunUsage): RunState => {
  const { usage: _old, ...rest } = state;
  const empty = usage.lastInputTokens === undefined && usage.sent === undefined && usage.drifts.length === 0;
  return Object.freeze(empty ? rest : { ...rest, usage: Object.freeze(usage) });
};

/** `context.projected`: what it sent, counted, waits for its step's answer. */
const noteSent = (state: RunState, event: Extract<SessionEvent, { type: 'context.projected' }>): RunState => {
  const tokens = (event.report.projectedTokens ?? 0) + (event.report.overheadTokens ?? 0);
  const sent = Object.freeze({ ...(event.runId !== undefined ? { runId: event.runId } : {}), ...(event.step !== undefined ? { step: event.step } : {}), tokens });
  return withUsage(state, { ...(state.usage ?? EMPTY_USAGE), sent });
};

/**
 * `model.responded`: with `usage.inputTokens`, the last input tokens, and the drift of its step when the projection
 * before it was of the same run and step. The projection's count is used up either way.
 */
const noteAnswer = (state: RunState, event: Extract<SessionEvent, { type: 'model.responded' }>): RunState => {
  const input = event.usage?.['inputTokens'];
  const { sent, ...usage } = state.usage ?? EMPTY_USAGE;
  if (typeof input !== 'number' || !Number.isFinite(input)) return sent ? withUsage(state, usage) : state;
  if (!sent || sent.runId !== event.runId || sent.step !== event.step || event.step === undefined) return withUsage(state, { ...usage, lastInputTokens: input });
  return withUsage(state, {
    lastInputTokens: input,
    steps: Object.freeze([...usage.steps, event.step].slice(-CALIBRATION_WINDOW)) as number[],
    drifts: Object.freeze([...usage.drifts, Math.round(input) - sent.tokens].slice(-CALIBRATION_WINDOW)) as number[],
  });
};

/** A run ended: a projection its step never got an answer for pairs with nothing. */
const forgetSent = (state: RunState): RunState => {
  if (state.usage?.sent === undefined) return state;
  const { sent: _unanswered, ...usage } = state.usage;
  return withUsage(state, usage);
};

/** Memory was replaced (compaction, restore, clear, rewind): the last usage measured memory that is gone. */
const forgetLastInput = (state: RunState): RunState => {
  if (state.usage?.lastInputTokens === undefined) return state;
  const { lastInputTokens: _gone, ...usage } = state.usage;
  return withUsage(state, usage);
};

/**
 * The run reducer: `(state, event) => state`; an event that does not change the run state returns the same reference.
 * @example const run = events.reduce(runReducer, initialRunState)
 */
export const runReducer = (state: RunState, event: SessionEvent): RunState => {
  switch (event.type) {
    case 'step.started':
      return event.step > state.lastStep ? Object.freeze({ ...state, lastStep: event.step }) : state;
    case 'run.started':
      return Object.freeze({ ...state, openRun: Object.freeze({ runId: event.runId, hasPlan: false }) });
    case 'plan.created':
      return state.openRun && !state.openRun.hasPlan && event.runId === state.openRun.runId
        ? Object.freeze({ ...state, openRun: Object.freeze({ ...state.openRun, hasPlan: true }) })
        : state;
    case 'run.finished':
    case 'run.failed':
      return forgetSent(state.openRun?.runId === event.runId ? Object.freeze({ ...state, openRun: null }) : state);
    case 'approval.requested': {
      const open = state.openRun;
      if (!open || (event.runId !== undefined && event.runId !== open.runId)) return state;
      const approvals = open.approvals ?? [];
      if (approvals.some((a) => a.callId === event.callId)) return state;
      return withApprovals(state, open, [...approvals, Object.freeze({ callId: event.callId, name: event.name, arguments: event.arguments, step: event.step })]);
    }
    case 'approval.recorded': {
      const open = state.openRun;
      const index = event.callId === undefined || !open?.approvals ? -1 : open.approvals.findIndex((a) => a.callId === event.callId && a.decision === undefined);
      if (index < 0 || !open?.approvals) return state;
      const decision = Object.freeze({
        approved: event.approved,
        ...(event.by !== undefined ? { by: event.by } : {}),
        ...(event.reason !== undefined ? { reason: event.reason } : {}),
        seq: event.seq,
      });
      return withApprovals(state, open, open.approvals.map((a, i) => (i === index ? Object.freeze({ ...a, decision }) : a)));
    }
    case 'approval.call-started': {
      const open = state.openRun;
      if (!open?.approvals?.some((a) => a.callId === event.callId && !a.started)) return state;
      return withApprovals(state, open, open.approvals.map((a) => (a.callId === event.callId ? Object.freeze({ ...a, started: true as const }) : a)));
    }
    case 'tool.result': {
      const open = state.openRun;
      if (event.parentCallId !== undefined || !open?.approvals?.some((a) => a.callId === event.callId)) return state;
      return withApprovals(state, open, open.approvals.filter((a) => a.callId !== event.callId));
    }
    case 'compaction.requested':
      return Object.freeze({
        ...state,
        requestedCompaction: Object.freeze({ seq: event.seq, ...(event.instructions !== undefined ? { instructions: event.instructions } : {}) }),
      });
    case 'memory.compacted':
      // Any compaction attempt after the request answers it (a failure is not retried at every step).
      return forgetLastInput(state.requestedCompaction ? withoutRequest(state) : state);
    case 'compaction.failed':
    case 'compaction.skipped':
      return state.requestedCompaction ? withoutRequest(state) : state;
    case 'session.rewound':
      // Steps keep counting (step numbers stay unique in the log); a rewind closes no run (session.rewind fails an open one first).
      return forgetLastInput(state.requestedCompaction || state.openRun ? withoutRequest(state, { openRun: null }) : state);
    case 'memory.restored':
    case 'memory.edited':
    case 'memory.cleared':
      return forgetLastInput(state);
    case 'context.projected':
      return noteSent(state, event);
    case 'model.responded':
      return noteAnswer(state, event);
    case 'memory.noted':
    case 'memory.recalled':
    case 'event.erased':
    case 'session.started':
    case 'user.input':
    case 'model.output':
    case 'command.failed':
    case 'test.result':
    case 'sandbox.state':
    case 'artifact.changed':
    case 'memory.summary-set':
    case 'checkpoint.taken':
    case 'hook.failed':
    case 'model.requested':
    case 'model.failed':
    case 'step.ended':
      return state;
    default:
      return assertNever(event);
  }
};
