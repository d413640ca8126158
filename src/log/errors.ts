// Named errors of the log, each with its code (docs/errors.md lists them, generated from these classes).
import { ContextLedgerError } from '../base/errors.js';
import { errorText } from '../base/error-text.js';

/** `append` was given an `expectedSeq` that is not the session's head; nothing was written. */
export class ExpectedSeqConflictError extends ContextLedgerError {
  static override readonly code = 'EXPECTED_SEQ_CONFLICT';
  constructor(
    readonly sessionId: string,
    readonly expectedSeq: number,
    readonly actualSeq: number,
  ) {
    super(`session ${JSON.stringify(sessionId)}: expected head seq ${expectedSeq} but it is ${actualSeq}; nothing was written`);
  }
}
/** @deprecated use ExpectedSeqConflictError.isInstance */ export const isExpectedSeqConflictError = (e: unknown): e is ExpectedSeqConflictError => ExpectedSeqConflictError.isInstance(e);

/**
 * Another process, or another open handle in this one, holds the log: `openLevelLog` on a directory open elsewhere,
 * under any spelling of its path (`dir/`, `dir/.`, relative, symlink).
 */
export class LogInUseError extends ContextLedgerError {
  static override readonly code = 'LOG_IN_USE';
  constructor(
    readonly path: string,
    cause?: unknown,
    /** The directory `path` resolves to, when it differs. */
    readonly realPath?: string,
  ) {
    super(
      `the log at ${path}${realPath !== undefined && realPath !== path ? ` (${realPath})` : ''} is in use by another process ` +
        '(or is already open in this one); close it there first',
      { cause },
    );
  }
}
/** @deprecated use LogInUseError.isInstance */ export const isLogInUseError = (e: unknown): e is LogInUseError => LogInUseError.isInstance(e);

/** The longest session id, in UTF-16 code units. */
export const MAX_SESSION_ID_LENGTH = 512;

/** A session id is not a non-empty string of at most 512 UTF-16 code units ({@link MAX_SESSION_ID_LENGTH}). */
export class InvalidSessionIdError extends ContextLedgerError {
  static override readonly code = 'INVALID_SESSION_ID';
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
    super(`invalid session id ${shown}: expected a non-empty string of at most ${MAX_SESSION_ID_LENGTH} UTF-16 code units`);
  }
}
/** @deprecated use InvalidSessionIdError.isInstance */ export const isInvalidSessionIdError = (e: unknown): e is InvalidSessionIdError => InvalidSessionIdError.isInstance(e);

/** The log was used after `close()`, or `close()` ended a `read` still running. */
export class LogClosedError extends ContextLedgerError {
  static override readonly code = 'LOG_CLOSED';
  constructor(options?: { readonly cause?: unknown }) {
    super('the log is closed', options);
  }
}
/** @deprecated use LogClosedError.isInstance */ export const isLogClosedError = (e: unknown): e is LogClosedError => LogClosedError.isInstance(e);

/** A session that must exist has no events in the log (`agent.resumeSession(id)`). */
export class UnknownSessionError extends ContextLedgerError {
  static override readonly code = 'UNKNOWN_SESSION';
  constructor(readonly sessionId: string) {
    super(`no session ${JSON.stringify(sessionId)} in the log`);
  }
}
/** @deprecated use UnknownSessionError.isInstance */ export const isUnknownSessionError = (e: unknown): e is UnknownSessionError => UnknownSessionError.isInstance(e);

/** An append would take the session past the largest seq the log can store (2^53 − 1); nothing was written. */
export class SeqLimitError extends ContextLedgerError {
  static override readonly code = 'SEQ_LIMIT';
  constructor(readonly sessionId: string) {
    super(`session ${JSON.stringify(sessionId)} would pass the largest seq; nothing was written`);
  }
}
/** @deprecated use SeqLimitError.isInstance */ export const isSeqLimitError = (e: unknown): e is SeqLimitError => SeqLimitError.isInstance(e);

/**
 * `putCheckpoint` was given a checkpoint that cannot be stored: a seq that is not a positive integer, or is past the
 * head.
 */
export class InvalidCheckpointError extends ContextLedgerError {
  static override readonly code = 'INVALID_CHECKPOINT';
  constructor(
    readonly sessionId: string,
    readonly seq: unknown,
    reason: string,
  ) {
    super(`session ${JSON.stringify(sessionId)}: cannot store a checkpoint at seq ${String(seq)}: ${reason}`);
  }
}
/** @deprecated use InvalidCheckpointError.isInstance */ export const isInvalidCheckpointError = (e: unknown): e is InvalidCheckpointError => InvalidCheckpointError.isInstance(e);

/**
 * The store failed to write a batch of appends (a full disk, a lost connection, a PostgreSQL statement the server
 * refused or whose connection was killed), or to read the head the batch chains onto; every append of that batch is
 * rejected with this error (`cause` is the store's error), none is acknowledged, and appends after it read the head
 * from the store again. Every store (LevelDB, memory, PostgreSQL) gives this error, never its raw one. `written` says
 * what the store holds after the failure: `false` when it was read and does not hold the events (a retry appends them
 * once), `undefined` when it could not tell (retry with `expectedSeq`: a conflict then means they were written). A
 * batch the store holds despite its error resolves instead.
 */
export class LogWriteError extends ContextLedgerError {
  static override readonly code = 'LOG_WRITE_FAILED';
  constructor(
    readonly sessionId: string,
    cause: unknown,
    readonly written: false | undefined = undefined,
  ) {
    super(
      `session ${JSON.stringify(sessionId)}: writing the batch failed (${written === false ? 'nothing was written' : 'whether it was written is unknown'}): ${errorText(cause)}`,
      { cause },
    );
  }
}
/** @deprecated use LogWriteError.isInstance */ export const isLogWriteError = (e: unknown): e is LogWriteError => LogWriteError.isInstance(e);

/**
 * The hash chain does not hold: `read(id, { verify: true })` met an event whose hash, prevHash or seq is wrong
 * (nothing from that event on is handed out).
 */
export class ChainBrokenError extends ContextLedgerError {
  static override readonly code = 'CHAIN_BROKEN';
  constructor(
    readonly sessionId: string,
    readonly seq: number,
    readonly problem: string,
  ) {
    super(`session ${JSON.stringify(sessionId)}: the hash chain is broken at seq ${seq}: ${problem}`);
  }
}
/** @deprecated use ChainBrokenError.isInstance */ export const isChainBrokenError = (e: unknown): e is ChainBrokenError => ChainBrokenError.isInstance(e);

