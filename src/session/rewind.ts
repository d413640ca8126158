// session.rewind: one `session.rewound` event that makes memory what it was after an earlier seq (the log keeps the rest).
import { InvalidOptionsError } from '../base/errors.js';
import type { NewSessionEvent, SessionEventOf } from '../events/index.js';
import type { SessionEventLog } from '../log/index.js';
import type { AgentMemory } from '../memory/index.js';
import type { RunState } from './run-state.js';
import { rebuildState } from './checkpoint.js';

/** Where to rewind to: after the event at `toSeq`, or the start of step `toStep` (just after its `step.started`, as `memoryAt({ step })`). */
export type RewindTarget = { readonly toSeq: number } | { readonly toStep: number };

export interface RewindOptions {
  /** Why, recorded in the event. */
  readonly reason?: string;
}

const invalid = (path: string, message: string): InvalidOptionsError => new InvalidOptionsError('rewind', [{ path, message }]);

const checkInteger = (path: string, value: unknown, min: number): number => {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) throw invalid(path, `must be an integer ≥ ${min}, got ${JSON.stringify(value)}`);
  return value;
};

/** The seq a rewind target stands for, checked against the session's head. */
export const seqOfRewindTarget = async (log: SessionEventLog, sessionId: string, target: RewindTarget, head: number): Promise<number> => {
  if (target === null || typeof target !== 'object') throw invalid('', 'pass { toSeq } or { toStep }');
  if ('toSeq' in target && 'toStep' in target) throw invalid('', 'pass { toSeq } or { toStep }, not both');
  if ('toSeq' in target) {
    const seq = checkInteger('toSeq', target.toSeq, 1);
    if (seq > head) throw invalid('toSeq', `seq ${seq} is past the head of session ${JSON.stringify(sessionId)} (${head})`);
    return seq;
  }
  if ('toStep' in target) {
    const step = checkInteger('toStep', target.toStep, 1);
    for await (const event of log.read(sessionId, { toSeq: head })) {
      if (event.type === 'step.started' && event.step === step) return event.seq;
    }
    throw invalid('toStep', `session ${JSON.stringify(sessionId)} never started step ${step}`);
  }
  throw invalid('', 'pass { toSeq } or { toStep }');
};

/**
 * Rewinds a session: memory becomes what it was after `toSeq` (folded from the log, checkpoints used), written as
 * one `session.rewound` that carries that state, so the fold stays pure and a replay needs nothing else. A run
 * left open is failed first (`run.failed`, reason `interrupted`). Steps keep counting.
 * @example await rewindSession(log, memory, run, { toStep: 3 }, { reason: 'wrong branch' })
 */
export const rewindSession = async (
  log: SessionEventLog,
  memory: AgentMemory,
  run: RunState,
  target: RewindTarget,
  options: RewindOptions = {},
): Promise<SessionEventOf<'session.rewound'>> => {
  if (options.reason !== undefined && typeof options.reason !== 'string') throw invalid('reason', 'must be a string');
  const head = memory.headSeq();
  const toSeq = await seqOfRewindTarget(log, memory.sessionId, target, head);
  const at = await rebuildState(log, memory.sessionId, { toSeq });
  const events: NewSessionEvent[] = [];
  if (run.openRun) events.push({ type: 'run.failed', runId: run.openRun.runId, reason: 'interrupted', message: `superseded by a rewind to seq ${toSeq}` });
  events.push({
    type: 'session.rewound',
    toSeq,
    ...(options.reason !== undefined ? { reason: options.reason } : {}),
    memory: JSON.parse(JSON.stringify(at.state)) as Record<string, unknown>,
  });
  const stored = await memory.record(events);
  return stored[stored.length - 1] as SessionEventOf<'session.rewound'>;
};
