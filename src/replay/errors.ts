// Errors of the read APIs: a session, seq or step that the log does not have.
/**
 * What a replay read asked for is not in the log: an unknown session, a seq past the head, a step never started.
 * @example try { await memoryAt(log, id, { step: 99 }) } catch (e) { if (isReplayTargetError(e)) console.error(e.message) }
 */
export class ReplayTargetError extends Error {
  readonly _tag = 'ReplayTargetError' as const;
  constructor(
    readonly sessionId: string,
    message: string,
  ) {
    super(`session ${JSON.stringify(sessionId)}: ${message}`);
    this.name = 'ReplayTargetError';
  }
}

export const isReplayTargetError = (e: unknown): e is ReplayTargetError => e instanceof ReplayTargetError;
