// Named errors of sessions: a compaction overtaken by other changes, a log whose events do not chain where a session folds them.
import { ContextLedgerError, errorGuard } from '../errors.js';

/** Memory was restored, cleared or compacted while a compact policy ran; its result was not applied. */
export class CompactionConflictError extends ContextLedgerError {
  declare readonly code: 'COMPACTION_CONFLICT';
  readonly _tag = 'CompactionConflictError' as const;
  constructor(readonly sessionId: string) {
    super('COMPACTION_CONFLICT', 'memory was restored, cleared or compacted while the policy ran; compaction not applied');
    this.name = 'CompactionConflictError';
  }
}
export const isCompactionConflictError = errorGuard<CompactionConflictError>('COMPACTION_CONFLICT');

/**
 * The events folded to open or read a session do not form an unbroken hash chain (an event was edited,
 * removed or reordered): nothing is folded past `seq`.
 * @example try { await agent.resumeSession(id) } catch (e) { if (isSessionIntegrityError(e)) console.error(e.seq) }
 */
export class SessionIntegrityError extends ContextLedgerError {
  declare readonly code: 'SESSION_INTEGRITY';
  readonly _tag = 'SessionIntegrityError' as const;
  constructor(
    readonly sessionId: string,
    readonly seq: number,
    readonly problem: string,
  ) {
    super('SESSION_INTEGRITY', `session ${JSON.stringify(sessionId)}: event ${seq} breaks the hash chain (${problem})`);
    this.name = 'SessionIntegrityError';
  }
}

export const isSessionIntegrityError = errorGuard<SessionIntegrityError>('SESSION_INTEGRITY');
