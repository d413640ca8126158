// RunState and runReducer: the run part of the session fold (last step, the open run, whether its plan exists).
import { z } from 'zod';
import { InternalError } from '../errors.js';
import type { SessionEvent } from '../events/index.js';

/** The run state of a session; its zod schema is its definition (checkpoints are parsed with it). */
export const RunStateSchema = z.object({
  /** The highest step number started in the session (steps count across runs and resumes). */
  lastStep: z.number().int().nonnegative(),
  /** A run that started and has not finished or failed, and whether its DeepResearch plan was recorded. */
  openRun: z.object({ runId: z.string().min(1), hasPlan: z.boolean() }).nullable(),
  /** A compaction the agent asked for (`compaction.requested`), due at the top of the next step; absent in older checkpoints. */
  requestedCompaction: z.object({ seq: z.number().int().positive(), instructions: z.string().optional() }).optional(),
});
export type RunState = z.infer<typeof RunStateSchema>;

export const initialRunState: RunState = Object.freeze({ lastStep: 0, openRun: null });

/** The run state without a requested compaction (the key is absent, as in states recorded before it existed). */
const withoutRequest = (state: RunState, changes: Partial<RunState> = {}): RunState => {
  const { requestedCompaction: _r, ...rest } = state;
  return Object.freeze({ ...rest, ...changes });
};

const assertNever = (value: never): never => {
  throw new InternalError(`unhandled event ${JSON.stringify(value)}`);
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
      return state.openRun?.runId === event.runId ? Object.freeze({ ...state, openRun: null }) : state;
    case 'compaction.requested':
      return Object.freeze({
        ...state,
        requestedCompaction: Object.freeze({ seq: event.seq, ...(event.instructions !== undefined ? { instructions: event.instructions } : {}) }),
      });
    case 'memory.compacted':
    case 'compaction.failed':
    case 'compaction.skipped':
      // Any compaction attempt after the request answers it (a failure is not retried at every step).
      return state.requestedCompaction ? withoutRequest(state) : state;
    case 'session.rewound':
      // Steps keep counting (step numbers stay unique in the log); a rewind closes no run (session.rewind fails an open one first).
      return state.requestedCompaction || state.openRun ? withoutRequest(state, { openRun: null }) : state;
    case 'memory.noted':
    case 'memory.recalled':
    case 'session.started':
    case 'user.input':
    case 'model.output':
    case 'tool.result':
    case 'command.failed':
    case 'test.result':
    case 'approval.recorded':
    case 'sandbox.state':
    case 'artifact.changed':
    case 'memory.summary-set':
    case 'memory.restored':
    case 'memory.cleared':
    case 'checkpoint.taken':
    case 'hook.failed':
    case 'context.projected':
    case 'model.requested':
    case 'model.responded':
    case 'step.ended':
      return state;
    default:
      return assertNever(event);
  }
};
