// Errors of replay: a session, seq or step that the log does not have, a re-run that leaves its recording, a recorded failure raised again.
import { ContextLedgerError, errorGuard } from '../errors.js';

/**
 * What a replay read asked for is not in the log: an unknown session, a seq past the head, a step never started.
 * @example try { await memoryAt(log, id, { step: 99 }) } catch (e) { if (isReplayTargetError(e)) console.error(e.message) }
 */
export class ReplayTargetError extends ContextLedgerError {
  declare readonly code: 'REPLAY_TARGET';
  readonly _tag = 'ReplayTargetError' as const;
  constructor(
    readonly sessionId: string,
    message: string,
  ) {
    super('REPLAY_TARGET', `session ${JSON.stringify(sessionId)}: ${message}`);
    this.name = 'ReplayTargetError';
  }
}

export const isReplayTargetError = errorGuard<ReplayTargetError>('REPLAY_TARGET');

/** A re-run asked for more than the recording holds (a model answer, a summarizer answer, a tool result): it diverged. */
export class ReplayDivergenceError extends ContextLedgerError {
  declare readonly code: 'REPLAY_DIVERGED';
  readonly _tag = 'ReplayDivergenceError' as const;
  constructor(message: string) {
    super('REPLAY_DIVERGED', message);
    this.name = 'ReplayDivergenceError';
  }
}
export const isReplayDivergenceError = errorGuard<ReplayDivergenceError>('REPLAY_DIVERGED');

/** A failure recorded in the session (a model error, an abort reason, a failing hook or tool), raised again by a re-run with its recorded message. */
export class RecordedError extends ContextLedgerError {
  declare readonly code: 'RECORDED_ERROR';
  readonly _tag = 'RecordedError' as const;
  constructor(message: string) {
    super('RECORDED_ERROR', message);
    this.name = 'RecordedError';
  }
}
export const isRecordedError = errorGuard<RecordedError>('RECORDED_ERROR');
