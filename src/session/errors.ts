// Errors of session opening: a log whose events do not chain where a session folds them.
/**
 * The events folded to open or read a session do not form an unbroken hash chain (an event was edited,
 * removed or reordered): nothing is folded past `seq`.
 * @example try { await agent.resumeSession(id) } catch (e) { if (isSessionIntegrityError(e)) console.error(e.seq) }
 */
export class SessionIntegrityError extends Error {
  readonly _tag = 'SessionIntegrityError' as const;
  constructor(
    readonly sessionId: string,
    readonly seq: number,
    readonly problem: string,
  ) {
    super(`session ${JSON.stringify(sessionId)}: event ${seq} breaks the hash chain (${problem})`);
    this.name = 'SessionIntegrityError';
  }
}

export const isSessionIntegrityError = (e: unknown): e is SessionIntegrityError => e instanceof SessionIntegrityError;
