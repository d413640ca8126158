// forkSession: a new session whose history is a prefix of another's (same seqs and item ids, new times and hashes).
import type { NewSessionEvent, SessionEvent } from '../events/index.js';
import type { SessionEventLog } from '../log/index.js';
import { foldSession } from '../session/index.js';
import { checkpointEventFor, writeCheckpoint } from '../session/index.js';
import { InvalidOptionsError } from '../base/errors.js';
import { ReplayTargetError } from './errors.js';
import { headOf } from './memory-at.js';

/** Where a fork is cut: after the event at `atSeq`, or after step `afterStep` ended (with its run's end or plan, when they follow). */
export type ForkPoint = { readonly atSeq: number } | { readonly afterStep: number };

export interface ForkResult {
  readonly sessionId: string;
  readonly forkedFrom: { readonly sessionId: string; readonly seq: number; readonly hash: string };
  /** Events copied (seqs 1..seq of the source). */
  readonly copied: number;
  /** The head of the new session (the copied prefix and the checkpoint.taken after it). */
  readonly headSeq: number;
}

const APPEND_BATCH = 1_000;

const payloadOf = (event: SessionEvent): NewSessionEvent => {
  const { sessionId: _s, seq: _q, at: _a, v: _v, prevHash: _p, hash: _h, ...payload } = event;
  return payload as NewSessionEvent;
};

/** The seq a fork point stands for, and the prefix up to it. */
const prefixOf = async (log: SessionEventLog, sessionId: string, at: ForkPoint, head: number): Promise<SessionEvent[]> => {
  if (at === null || typeof at !== 'object' || (!('atSeq' in at) && !('afterStep' in at))) throw new InvalidOptionsError('forkSession', [{ path: '', message: 'pass { atSeq } or { afterStep }' }]);
  if ('atSeq' in at && 'afterStep' in at) throw new InvalidOptionsError('forkSession', [{ path: '', message: 'pass { atSeq } or { afterStep }, not both' }]);
  const bound = 'atSeq' in at ? at.atSeq : at.afterStep;
  const name = 'atSeq' in at ? 'atSeq' : 'afterStep';
  if (typeof bound !== 'number' || !Number.isInteger(bound) || bound < 1) throw new InvalidOptionsError('forkSession', [{ path: name, message: `must be an integer ≥ 1, got ${JSON.stringify(bound)}` }]);
  if ('atSeq' in at && bound > head) throw new ReplayTargetError(sessionId, `seq ${bound} is past the head (${head})`);
  const prefix: SessionEvent[] = [];
  let ended: SessionEvent | undefined;
  for await (const event of log.read(sessionId, 'atSeq' in at ? { toSeq: bound } : {})) {
    if ('atSeq' in at) {
      prefix.push(event);
      continue;
    }
    if (ended) {
      // after step.ended: the plan it made and the end of its run belong to it
      const sameRun = (event.type === 'plan.created' || event.type === 'run.finished' || event.type === 'run.failed') && event.runId === (ended as { runId?: string }).runId;
      if (!sameRun) break;
      prefix.push(event);
      continue;
    }
    prefix.push(event);
    if (event.type === 'step.ended' && event.step === bound) ended = event;
  }
  if ('afterStep' in at && !ended) throw new ReplayTargetError(sessionId, `step ${bound} never ended`);
  return prefix;
};

/**
 * Forks a session: a new session `newId` whose events are the source's up to the fork point (payloads copied,
 * seqs and so item ids kept, new `at` and hashes), its `session.started` carrying `forkedFrom: { sessionId,
 * seq, hash }`, and a checkpoint taken after the prefix. Its state equals the source's at that seq;
 * `agent.resumeSession(newId)` continues it. The source is not touched.
 * @example await forkSession(log, 'task-42', { afterStep: 7 }, 'task-42-try-b')
 */
export const forkSession = async (log: SessionEventLog, sessionId: string, at: ForkPoint, newId: string): Promise<ForkResult> => {
  const head = await headOf(log, sessionId);
  if (typeof newId !== 'string' || newId.length === 0) throw new InvalidOptionsError('forkSession', [{ path: 'newId', message: `must be a non-empty string, got ${JSON.stringify(newId)}` }]);
  if (newId === sessionId) throw new InvalidOptionsError('forkSession', [{ path: 'newId', message: 'must differ from the source session id' }]);
  if ((await log.head(newId)) !== 0) throw new ReplayTargetError(newId, 'already exists; a fork needs a new session id');
  const prefix = await prefixOf(log, sessionId, at, head);
  const first = prefix[0];
  if (first?.type !== 'session.started') throw new ReplayTargetError(sessionId, 'does not start with session.started, so a fork could not keep its seqs');
  const last = prefix[prefix.length - 1]!;
  const forkedFrom = { sessionId, seq: last.seq, hash: last.hash };
  const payloads = prefix.map((event, i) => {
    const payload = payloadOf(event);
    if (i > 0) return payload;
    const { forkedFrom: _previous, ...started } = payload as NewSessionEvent & { forkedFrom?: unknown };
    return { ...started, forkedFrom } as NewSessionEvent;
  });
  const stored: SessionEvent[] = [];
  for (let i = 0; i < payloads.length; i += APPEND_BATCH) {
    stored.push(...(await log.append(newId, payloads.slice(i, i + APPEND_BATCH), { expectedSeq: i })));
  }
  const state = foldSession(stored);
  const every = prefix.find((e): e is Extract<SessionEvent, { type: 'checkpoint.taken' }> => e.type === 'checkpoint.taken')?.checkpointEvery ?? 10_000;
  const [taken] = await log.append(newId, [checkpointEventFor(state, every)], { expectedSeq: stored.length });
  await writeCheckpoint(log, newId, taken!, state, every > 0 ? { band: every } : {});
  return { sessionId: newId, forkedFrom, copied: stored.length, headSeq: taken!.seq };
};
