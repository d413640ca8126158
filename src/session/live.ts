// The live session: the one writer of a session. It serialises writes, appends with the head it has folded as
// `expectedSeq`, folds what is stored with the session fold (memory and run), tells the listeners, takes checkpoints
// when due, and holds the step's deferred bookkeeping events (decision 0033). AgentMemory is a façade over it.
import { type NewSessionEvent, type SessionEvent, type SessionEventOf } from '../events/index.js';
import { checkRewinds, memoryOver, type AgentMemory, type EventAppender } from '../memory/agent-memory.js';
import { createMemoryFold } from '../memory/reducer.js';
import type { MemoryState } from '../memory/state.js';
import { runReducer, type RunState } from './run-state.js';
import { initialSessionState, type SessionState } from './session-state.js';

/** When and how a live session takes checkpoints (the session's: `openSession`). */
export interface LiveCheckpoints {
  /** A checkpoint every `every` events (0: never, except when asked). */
  readonly every: number;
  /** The session was opened by a long fold: the next append takes one. */
  readonly dueOnOpen: boolean;
  /** The type of the event at the head when opened (a checkpoint at the head is one already). */
  readonly lastTypeOnOpen?: SessionEvent['type'] | undefined;
  /** The `checkpoint.taken` event for the state at the head. */
  event(state: SessionState): NewSessionEvent;
  /** Stores the state at the seq of a stored `checkpoint.taken` event. */
  store(event: SessionEventOf<'checkpoint.taken'>, state: SessionState): Promise<void>;
  /** An automatic checkpoint failed after the append before it committed (the append still resolves). */
  onError?: ((error: unknown) => void) | undefined;
}

export interface LiveSessionOptions {
  readonly sessionId: string;
  readonly appender: EventAppender;
  /** The state folded from the session's existing events, and the seq it was folded to. */
  readonly state?: SessionState | undefined;
  readonly headSeq?: number | undefined;
  readonly checkpoints?: LiveCheckpoints | undefined;
  /** Told about every append, once stored and folded. A throwing listener is ignored. */
  readonly onEvents?: ((events: readonly SessionEvent[]) => void) | undefined;
  /**
   * After each write of items (user input, model output, tool output) has been stored, before the write resolves;
   * outside the write's lock, so it may write too (the session runs its compressor's compaction here).
   */
  readonly afterItemsWritten?: ((memory: AgentMemory) => Promise<void>) | undefined;
}

/** The one writer of a session, and its live state. */
export interface LiveSession {
  readonly sessionId: string;
  /** Memory: a façade that turns its methods into events written here and reads the live state. */
  readonly memory: AgentMemory;
  /**
   * The session's state: the fold of the events stored, and for the run, of the bookkeeping events deferred for the
   * next append too (a step started is a step started, stored or not yet).
   */
  state(): SessionState;
  /** The seq of the last event stored and folded. */
  head(): number;
  /** Appends `events` (the deferred ones first); `itemsWritten` runs `afterItemsWritten` after. */
  write(events: readonly NewSessionEvent[], itemsWritten?: boolean): Promise<readonly SessionEvent[]>;
  /** Takes a checkpoint at the head now unless the head is one (deferred events are stored first); its failure is thrown. */
  checkpoint(): Promise<void>;
  /** The last automatic checkpoint's failure, until a checkpoint succeeds. */
  checkpointFailure(): unknown;
  /**
   * Memory as last built, without folding what was stored since (`build` false; see {@link built}), or built now.
   * For background work that must not build memory between the appends of a burst (countTokensOnWrite).
   */
  memoryState(build: boolean): MemoryState;
  /** Whether memory is built up to the last event stored. */
  built(): boolean;
  /** Whether a write (or flush, or checkpoint) is in flight. */
  writing(): boolean;
  /** Resolves once no write is in flight; never rejects. */
  idle(): Promise<void>;
}

/** Events put off until the session's next write (see {@link deferWrite}), and what to call once they are stored. */
interface DeferredGroup {
  readonly events: readonly NewSessionEvent[];
  readonly onStored?: ((stored: readonly SessionEvent[]) => void) | undefined;
  /** When it was deferred: a write takes only the groups deferred before it was asked for. */
  readonly ticket: number;
}

/** The deferral side of a live session (the runtime's step uses it through the session's memory). */
interface Deferral {
  defer(events: readonly NewSessionEvent[], onStored?: (stored: readonly SessionEvent[]) => void): void;
  flush(): Promise<void>;
  pending(): number;
  /** Whether a checkpoint would follow one of the groups waiting, were they appended now. */
  reachesCheckpoint(): boolean;
}
const deferrals = new WeakMap<AgentMemory, Deferral>();

/**
 * Puts `events` off until the next write of the session `memory` belongs to (or {@link flushDeferred}), which
 * appends them first, in order, in the same append as its own events unless a checkpoint falls between: a step's
 * bookkeeping events then share one append instead of one each. Only for events that change nothing a read of memory
 * would see (a step's start and end, its projection record): until stored, memory does not fold them, while the
 * session's run state does (`session.state().run.lastStep` counts a deferred `step.started`). `onStored` runs once
 * they are stored (after the listeners of those events). Returns false when `memory` is not a live session's: append
 * them yourself.
 * @example if (!deferWrite(session.memory, [{ type: 'step.started', runId, step }])) await session.record([...])
 */
export const deferWrite = (
  memory: AgentMemory,
  events: readonly NewSessionEvent[],
  onStored?: (stored: readonly SessionEvent[]) => void,
): boolean => {
  const deferral = deferrals.get(memory);
  if (!deferral) return false;
  deferral.defer(events, onStored);
  return true;
};

/** Appends what {@link deferWrite} put off for `memory` now (nothing when nothing waits). */
export const flushDeferred = (memory: AgentMemory): Promise<void> => deferrals.get(memory)?.flush() ?? Promise.resolve();

/**
 * Whether events `memory` put off would be followed by a checkpoint were they appended now: store them now then
 * ({@link flushDeferred}), so the checkpoint is taken where it would have been without deferral, before anything else
 * happens (its projection facts are those known at that point).
 */
export const deferredReachCheckpoint = (memory: AgentMemory): boolean => deferrals.get(memory)?.reachesCheckpoint() ?? false;

/** How many groups of events wait in `memory` for its next write (a work count for tests). */
export const deferredGroups = (memory: AgentMemory): number => deferrals.get(memory)?.pending() ?? 0;

const quietly = (call: () => void): void => {
  try {
    call();
  } catch {
    // a listener must not break the write: its events are stored
  }
};

/**
 * Opens the live side of a session over an appender, from the state already folded. Writes are serialised; each
 * appends with the head it has folded as `expectedSeq`, so a second writer to the same session is detected, not merged.
 */
export const createLiveSession = (options: LiveSessionOptions): LiveSession => {
  const { sessionId, appender, checkpoints } = options;
  const every = checkpoints?.every ?? 0;
  const initial = options.state ?? initialSessionState;
  // Memory as last built, and the appends folded on top of it since: built when someone reads it. Many appends in a
  // row (a step's tool results, one append each) then copy memory's entry list once, not once per append, which made a
  // step with thousands of results quadratic (and, past V8's large-object size, every copy a GC burden).
  let built = initial.memory;
  let folding: ReturnType<typeof createMemoryFold> | undefined;
  const memoryState = () => {
    if (folding) {
      built = folding.result();
      folding = undefined;
    }
    return built;
  };
  let run: RunState = initial.run;
  let head = options.headSeq ?? 0;
  let lastType: SessionEvent['type'] | undefined = checkpoints?.lastTypeOnOpen;
  let checkpointDue = every > 0 && (checkpoints?.dueOnOpen ?? false);
  let checkpointFailure: unknown;
  let tail: Promise<unknown> = Promise.resolve();
  // Writes queued or running (for background work that waits for a quiet moment).
  let inFlight = 0;

  const ended = (): void => {
    inFlight -= 1;
  };
  const serialised = <T>(op: () => Promise<T>): Promise<T> => {
    inFlight += 1;
    const run = (): Promise<T> => {
      let running: Promise<T>;
      try {
        running = op();
      } catch (error) {
        ended();
        throw error;
      }
      running.then(ended, ended);
      return running;
    };
    const next = tail.then(run, run);
    tail = next.catch(() => undefined);
    return next;
  };

  /** The state of the events stored (what a checkpoint holds). */
  const storedState = (): SessionState => ({ memory: memoryState(), run });

  /** Whether a checkpoint follows an append of the seqs `first..last`. */
  const checkpointAfter = (first: number, last: number): boolean =>
    every > 0 && (checkpointDue || Math.floor(last / every) > Math.floor((first - 1) / every));

  const failedCheckpoint = (error: unknown): void => {
    // Tried again with the next append; the append that came before it stays committed.
    checkpointDue = every > 0;
    checkpointFailure = error;
    quietly(() => checkpoints?.onError?.(error));
  };

  /** Folds events just stored (one append's, or one deferred group's of a merged append), tells, checkpoints. */
  const settle = async (stored: readonly SessionEvent[]): Promise<void> => {
    if (stored.length === 0) return;
    folding ??= createMemoryFold(built);
    for (const event of stored) {
      folding.add(event);
      run = runReducer(run, event);
    }
    const before = stored[0]!.seq - 1;
    const last = stored[stored.length - 1]!;
    head = last.seq;
    lastType = last.type;
    if (options.onEvents) quietly(() => options.onEvents!(stored));
    if (!checkpoints) return;
    // The events are committed: what follows (a checkpoint) never turns the write into a rejection.
    try {
      if (last.type === 'checkpoint.taken') {
        await checkpoints.store(last, storedState());
        checkpointFailure = undefined;
      } else if (checkpointAfter(before + 1, last.seq)) {
        checkpointDue = false;
        await appendNow([checkpoints.event(storedState())]);
      }
    } catch (error) {
      failedCheckpoint(error);
    }
  };

  const appendNow = async (events: readonly NewSessionEvent[]): Promise<readonly SessionEvent[]> => {
    const stored = await appender(events, { expectedSeq: head });
    await settle(stored);
    return stored;
  };

  // Deferred groups, oldest first, and the ticket the next deferred group gets.
  let deferred: DeferredGroup[] = [];
  let tickets = 0;

  /** Removes and returns the groups deferred before `ticket`. */
  const takeDeferred = (ticket: number): DeferredGroup[] => {
    let n = 0;
    while (n < deferred.length && deferred[n]!.ticket < ticket) n++;
    const taken = deferred.slice(0, n);
    deferred = deferred.slice(n);
    return taken;
  };

  const told = (group: Omit<DeferredGroup, 'ticket'>, stored: readonly SessionEvent[]): void => {
    if (group.onStored) quietly(() => group.onStored!(stored));
  };

  /**
   * Appends groups in order, as few appends as it takes: groups are merged unless a checkpoint would follow one of
   * them, where the append ends. Each group is folded, told to the listeners and to its `onStored` as if it had been
   * appended alone. A merged append that fails is tried again group by group, so what is stored, and the error, are
   * what appending them one by one gives. Returns the last group's stored events.
   */
  const appendGroups = async (groups: readonly Omit<DeferredGroup, 'ticket'>[]): Promise<readonly SessionEvent[]> => {
    let last: readonly SessionEvent[] = [];
    let i = 0;
    while (i < groups.length) {
      let end = i + 1;
      let first = head + 1;
      let lastSeq = head + groups[i]!.events.length;
      while (end < groups.length && !checkpointAfter(first, lastSeq)) {
        first = lastSeq + 1;
        lastSeq += groups[end]!.events.length;
        end++;
      }
      const chunk = groups.slice(i, end);
      i = end;
      if (chunk.length === 1) {
        last = await appendNow(chunk[0]!.events);
        told(chunk[0]!, last);
        continue;
      }
      let stored: readonly SessionEvent[];
      try {
        stored = await appender(chunk.flatMap((group) => group.events), { expectedSeq: head });
      } catch {
        // Nothing of it is stored: one group at a time, the first that fails throws its own error.
        for (const group of chunk) {
          last = await appendNow(group.events);
          told(group, last);
        }
        continue;
      }
      let offset = 0;
      for (const group of chunk) {
        last = stored.slice(offset, offset + group.events.length);
        offset += group.events.length;
        await settle(last);
        told(group, last);
      }
    }
    return last;
  };

  const write = async (events: readonly NewSessionEvent[], itemsWritten = false): Promise<readonly SessionEvent[]> => {
    checkRewinds(sessionId, events);
    const ticket = tickets;
    const stored = await serialised(() => {
      const groups = takeDeferred(ticket);
      return groups.length === 0 ? appendNow(events) : appendGroups([...groups, { events }]);
    });
    if (itemsWritten && options.afterItemsWritten) await options.afterItemsWritten(memory);
    return stored;
  };

  const flush = (): Promise<void> => {
    if (deferred.length === 0) return Promise.resolve();
    const ticket = tickets;
    return serialised(async () => {
      const groups = takeDeferred(ticket);
      if (groups.length > 0) await appendGroups(groups);
    });
  };

  /** The run with the deferred bookkeeping events folded in (their seqs are those they will be stored at). */
  const liveRun = (): RunState => {
    let view = run;
    let seq = head;
    for (const group of deferred) {
      for (const event of group.events) view = runReducer(view, { ...event, seq: ++seq, sessionId } as SessionEvent);
    }
    return view;
  };

  const memory = memoryOver({ sessionId, write, state: memoryState, head: () => head });

  deferrals.set(memory, {
    defer(events, onStored) {
      checkRewinds(sessionId, events);
      if (events.length > 0) deferred.push({ events, onStored, ticket: tickets++ });
      else told({ events, onStored }, []);
    },
    flush,
    pending: () => deferred.length,
    reachesCheckpoint() {
      let first = head + 1;
      for (const group of deferred) {
        const last = first + group.events.length - 1;
        if (checkpointAfter(first, last)) return true;
        first = last + 1;
      }
      return false;
    },
  });

  return {
    sessionId,
    memory,
    state: () => (deferred.length === 0 ? storedState() : { memory: memoryState(), run: liveRun() }),
    head: () => head,
    write,
    async checkpoint() {
      // Deferred step events first: the checkpoint's state is the state at its seq.
      await flush();
      if (!checkpoints || head === 0 || (lastType === 'checkpoint.taken' && checkpointFailure === undefined)) return;
      // Asked for: a failure of the checkpoint's own storage is this call's error.
      checkpointFailure = undefined;
      await write([checkpoints.event(storedState())]);
      if (checkpointFailure !== undefined) throw checkpointFailure;
    },
    checkpointFailure: () => checkpointFailure,
    memoryState: (build) => (build ? memoryState() : built),
    built: () => folding === undefined,
    writing: () => inFlight > 0,
    idle: async () => {
      while (inFlight > 0) await tail;
    },
  };
};
