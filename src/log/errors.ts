// Named errors of the log, each with an is… guard (codes in docs/errors.md).
import { ContextLedgerError, errorGuard } from '../errors.js';

/** `append` was given an `expectedSeq` that is not the session's head; nothing was written. */
export class ExpectedSeqConflictError extends ContextLedgerError {
  declare readonly code: 'EXPECTED_SEQ_CONFLICT';
  readonly _tag = 'ExpectedSeqConflictError' as const;
  constructor(
    readonly sessionId: string,
    readonly expectedSeq: number,
    readonly actualSeq: number,
  ) {
    super(
      'EXPECTED_SEQ_CONFLICT',
      `session ${JSON.stringify(sessionId)}: expected head seq ${expectedSeq} but it is ${actualSeq}; nothing was written`,
    );
    this.name = 'ExpectedSeqConflictError';
  }
}
export const isExpectedSeqConflictError = errorGuard<ExpectedSeqConflictError>('EXPECTED_SEQ_CONFLICT');

/** Another process, or another open handle in this one (under any spelling of the path), holds the log. */
export class LogInUseError extends ContextLedgerError {
  declare readonly code: 'LOG_IN_USE';
  readonly _tag = 'LogInUseError' as const;
  constructor(
    readonly path: string,
    cause?: unknown,
    /** The directory `path` resolves to, when it differs. */
    readonly realPath?: string,
  ) {
    super(
      'LOG_IN_USE',
      `the log at ${path}${realPath !== undefined && realPath !== path ? ` (${realPath})` : ''} is in use by another process ` +
        '(or is already open in this one); close it there first',
      { cause },
    );
    this.name = 'LogInUseError';
  }
}
export const isLogInUseError = errorGuard<LogInUseError>('LOG_IN_USE');

/** The longest session id, in UTF-16 code units. */
export const MAX_SESSION_ID_LENGTH = 512;

/** A session id must be a non-empty string of at most {@link MAX_SESSION_ID_LENGTH} UTF-16 code units. */
export class InvalidSessionIdError extends ContextLedgerError {
  declare readonly code: 'INVALID_SESSION_ID';
  readonly _tag = 'InvalidSessionIdError' as const;
  constructor(readonly sessionId: unknown) {
    const shown =
      typeof sessionId === 'string'
        ? sessionId.length > 64
          ? `of ${sessionId.length} UTF-16 code units (starting ${JSON.stringify(sessionId.slice(0, 32))})`
          : JSON.stringify(sessionId)
        : (() => {
            try {
              return JSON.stringify(sessionId) ?? String(sessionId);
            } catch {
              return typeof sessionId;
            }
          })();
    super(
      'INVALID_SESSION_ID',
      `invalid session id ${shown}: expected a non-empty string of at most ${MAX_SESSION_ID_LENGTH} UTF-16 code units`,
    );
    this.name = 'InvalidSessionIdError';
  }
}
export const isInvalidSessionIdError = errorGuard<InvalidSessionIdError>('INVALID_SESSION_ID');

/** The log was used after `close()` (also what a `read` still running when `close()` is called ends with). */
export class LogClosedError extends ContextLedgerError {
  declare readonly code: 'LOG_CLOSED';
  readonly _tag = 'LogClosedError' as const;
  constructor(options?: { readonly cause?: unknown }) {
    super('LOG_CLOSED', 'the log is closed', options);
    this.name = 'LogClosedError';
  }
}
export const isLogClosedError = errorGuard<LogClosedError>('LOG_CLOSED');

/** A session that was expected to exist has no events in the log. */
export class UnknownSessionError extends ContextLedgerError {
  declare readonly code: 'UNKNOWN_SESSION';
  readonly _tag = 'UnknownSessionError' as const;
  constructor(readonly sessionId: string) {
    super('UNKNOWN_SESSION', `no session ${JSON.stringify(sessionId)} in the log`);
    this.name = 'UnknownSessionError';
  }
}
export const isUnknownSessionError = errorGuard<UnknownSessionError>('UNKNOWN_SESSION');

/** An append would take the session past the largest seq the log can store; nothing was written. */
export class SeqLimitError extends ContextLedgerError {
  declare readonly code: 'SEQ_LIMIT';
  readonly _tag = 'SeqLimitError' as const;
  constructor(readonly sessionId: string) {
    super('SEQ_LIMIT', `session ${JSON.stringify(sessionId)} would pass the largest seq; nothing was written`);
    this.name = 'SeqLimitError';
  }
}
export const isSeqLimitError = errorGuard<SeqLimitError>('SEQ_LIMIT');

/** `putCheckpoint` was given a checkpoint that cannot be stored (bad seq, past the head). */
export class InvalidCheckpointError extends ContextLedgerError {
  declare readonly code: 'INVALID_CHECKPOINT';
  readonly _tag = 'InvalidCheckpointError' as const;
  constructor(
    readonly sessionId: string,
    readonly seq: unknown,
    reason: string,
  ) {
    super('INVALID_CHECKPOINT', `session ${JSON.stringify(sessionId)}: cannot store a checkpoint at seq ${String(seq)}: ${reason}`);
    this.name = 'InvalidCheckpointError';
  }
}
export const isInvalidCheckpointError = errorGuard<InvalidCheckpointError>('INVALID_CHECKPOINT');

/**
 * The store failed to write a batch of appends; every append in that batch is rejected with this
 * error (`cause` is the store's error) and none of them is acknowledged. Appends after it read the
 * head from the store again. `written` says what the store holds after the failure: `false` when the
 * events are not in it (a retry appends them once), `undefined` when the store could not be read to
 * tell (retry with `expectedSeq`: a conflict then means they were written). A batch the store holds
 * despite its error is not rejected at all.
 */
export class LogWriteError extends ContextLedgerError {
  declare readonly code: 'LOG_WRITE_FAILED';
  readonly _tag = 'LogWriteError' as const;
  constructor(
    readonly sessionId: string,
    cause: unknown,
    readonly written: false | undefined = undefined,
  ) {
    super(
      'LOG_WRITE_FAILED',
      `session ${JSON.stringify(sessionId)}: writing the batch failed (${written === false ? 'nothing was written' : 'whether it was written is unknown'}): ${messageOf(cause)}`,
      { cause },
    );
    this.name = 'LogWriteError';
  }
}
export const isLogWriteError = errorGuard<LogWriteError>('LOG_WRITE_FAILED');

/**
 * The hash chain does not hold: thrown by `read(id, { verify: true })` at the first event whose
 * hash, prevHash or seq is wrong (nothing from that event on is handed out).
 */
export class ChainBrokenError extends ContextLedgerError {
  declare readonly code: 'CHAIN_BROKEN';
  readonly _tag = 'ChainBrokenError' as const;
  constructor(
    readonly sessionId: string,
    readonly seq: number,
    readonly problem: string,
  ) {
    super('CHAIN_BROKEN', `session ${JSON.stringify(sessionId)}: the hash chain is broken at seq ${seq}: ${problem}`);
    this.name = 'ChainBrokenError';
  }
}
export const isChainBrokenError = errorGuard<ChainBrokenError>('CHAIN_BROKEN');

const messageOf = (error: unknown): string => {
  try {
    return error instanceof Error ? error.message : String(error);
  } catch {
    return 'unprintable error';
  }
};
