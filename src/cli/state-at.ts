// Memory at a point of a session (after a seq, or at the start of a step), folded from the log.
import type { SessionEventLog } from '../log/index.js';
import { initialMemoryState, memoryReducer, type MemoryState } from '../memory/index.js';
import { CliError } from './errors.js';

export type Point = { readonly seq: number } | { readonly step: number };

export interface StateAt {
  /** The seq of the last event folded. */
  readonly seq: number;
  readonly memory: MemoryState;
}

/**
 * Folds a session up to `point`: after the event at `seq`, or just after step N's `step.started`. Exit 2 for a
 * seq past the head or a step never started.
 */
export const memoryAtPoint = async (log: SessionEventLog, sessionId: string, head: number, point: Point): Promise<StateAt> => {
  if ('seq' in point && point.seq > head) throw new CliError(`session ${JSON.stringify(sessionId)} has ${head} events; no seq ${point.seq}`, 2);
  let memory: MemoryState = initialMemoryState;
  let seq = 0;
  const toSeq = 'seq' in point ? point.seq : head;
  for await (const event of log.read(sessionId, { toSeq })) {
    memory = memoryReducer(memory, event);
    seq = event.seq;
    if ('step' in point && event.type === 'step.started' && event.step === point.step) return { seq, memory };
  }
  if ('step' in point) throw new CliError(`session ${JSON.stringify(sessionId)} has no step ${point.step}`, 2);
  return { seq, memory };
};
