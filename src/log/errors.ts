// Named errors of the log, each with an is… guard.

/** `append` was given an `expectedSeq` that is not the session's head; nothing was written. */
export class ExpectedSeqConflictError extends Error {
  readonly _tag = 'ExpectedSeqConflictError' as const;
  constructor(
    readonly sessionId: string,
    readonly expectedSeq: number,
    readonly actualSeq: number,
  ) {
    super(`session ${JSON.stringify(sessionId)}: expected head seq ${expectedSeq} but it is ${actualSeq}; nothing was written`);
    this.name = 'ExpectedSeqConflictError';
  }
}
export const isExpectedSeqConflictError = (e: unknown): e is ExpectedSeqConflictError => e instanceof ExpectedSeqConflictError;

/** Another process (or another open handle) holds the LevelDB lock on this directory. */
export class LogInUseError extends Error {
  readonly _tag = 'LogInUseError' as const;
  constructor(
    readonly path: string,
    cause?: unknown,
  ) {
    super(`the log at ${path} is in use by another process (or is already open in this one); close it there first`, { cause });
    this.name = 'LogInUseError';
  }
}
export const isLogInUseError = (e: unknown): e is LogInUseError => e instanceof LogInUseError;

/** A session id must be a non-empty string. */
export class InvalidSessionIdError extends Error {
  readonly _tag = 'InvalidSessionIdError' as const;
  constructor(readonly sessionId: unknown) {
    super(`invalid session id ${JSON.stringify(sessionId) ?? String(sessionId)}: expected a non-empty string`);
    this.name = 'InvalidSessionIdError';
  }
}
export const isInvalidSessionIdError = (e: unknown): e is InvalidSessionIdError => e instanceof InvalidSessionIdError;

/** The log was used after `close()`. */
export class LogClosedError extends Error {
  readonly _tag = 'LogClosedError' as const;
  constructor() {
    super('the log is closed');
    this.name = 'LogClosedError';
  }
}
export const isLogClosedError = (e: unknown): e is LogClosedError => e instanceof LogClosedError;
