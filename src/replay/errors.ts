// Errors of replay: a session, seq or step that the log does not have, a re-run that leaves its recording, a recorded failure raised again.
import { ContextLedgerError } from '../base/errors.js';

/**
 * A replay read asked for what the log does not have: an unknown session, a seq past the head, a step never started.
 * @example try { await memoryAt(log, id, { step: 99 }) } catch (e) { if (ReplayTargetError.isInstance(e)) console.error(e.message) }
 */
export class ReplayTargetError extends ContextLedgerError {
  static override readonly code = 'REPLAY_TARGET';
  constructor(
    readonly sessionId: string,
    message: string,
  ) {
    super(`session ${JSON.stringify(sessionId)}: ${message}`);
  }
}
/** @deprecated use ReplayTargetError.isInstance */ export const isReplayTargetError = (e: unknown): e is ReplayTargetError => ReplayTargetError.isInstance(e);

/**
 * A re-run asked for more than the recording holds (a model answer, a summarizer answer, a tool result): it diverged.
 */
export class ReplayDivergenceError extends ContextLedgerError {
  static override readonly code = 'REPLAY_DIVERGED';
}
/** @deprecated use ReplayDivergenceError.isInstance */ export const isReplayDivergenceError = (e: unknown): e is ReplayDivergenceError => ReplayDivergenceError.isInstance(e);

/**
 * A failure recorded in the session (a model error, an abort reason, a failing hook or tool), raised again by a re-run
 * with its recorded message.
 */
export class RecordedError extends ContextLedgerError {
  static override readonly code = 'RECORDED_ERROR';
}
/** @deprecated use RecordedError.isInstance */ export const isRecordedError = (e: unknown): e is RecordedError => RecordedError.isInstance(e);
