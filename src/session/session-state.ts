// SessionState and sessionReducer: the whole session as one fold (memory and run state), and its fast folds.
import { z } from 'zod';
import type { SessionEvent } from '../events/index.js';
import { createMemoryFold, memoryReducer } from '../memory/reducer.js';
import { RunStateSchema, initialRunState, runReducer, type RunState } from './run-state.js';
import { MemoryStateSchema, initialMemoryState, type MemoryState } from '../memory/state.js';

/** Everything a session's events fold into: what the agent remembers and where its runs stand. */
export interface SessionState {
  readonly memory: MemoryState;
  readonly run: RunState;
}

/** SessionState as a zod schema: what a format-2 checkpoint holds. */
export const SessionStateSchema = z.object({ memory: MemoryStateSchema, run: RunStateSchema } satisfies Record<keyof SessionState, z.ZodType>);

// A parsed value is a SessionState: a schema that drifts from it does not compile.
void ((parsed: z.infer<typeof SessionStateSchema>): SessionState => parsed);

export const initialSessionState: SessionState = Object.freeze({ memory: initialMemoryState, run: initialRunState });

/**
 * The session reducer: `memoryReducer` and `runReducer` side by side; the same reference when neither changes.
 * @example const state = events.reduce(sessionReducer, initialSessionState)
 */
export const sessionReducer = (state: SessionState, event: SessionEvent): SessionState => {
  const memory = memoryReducer(state.memory, event);
  const run = runReducer(state.run, event);
  return memory === state.memory && run === state.run ? state : Object.freeze({ memory, run });
};

/** An incremental session fold: the memory part through the linear-time memory fold. */
export const createSessionFold = (initial: SessionState) => {
  const memory = createMemoryFold(initial.memory);
  let run = initial.run;
  return {
    add(event: SessionEvent): void {
      memory.add(event);
      run = runReducer(run, event);
    },
    result(): SessionState {
      const folded = memory.result();
      return folded === initial.memory && run === initial.run ? initial : Object.freeze({ memory: folded, run });
    },
  };
};

/**
 * Folds events into a session state: equal to `events.reduce(sessionReducer, initial)`, in linear time.
 * @example const { memory, run } = foldSession(eventsFromLog)
 */
export const foldSession = (events: Iterable<SessionEvent>, initial: SessionState = initialSessionState): SessionState => {
  const fold = createSessionFold(initial);
  for (const event of events) fold.add(event);
  return fold.result();
};
