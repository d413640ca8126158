// Named errors of sessions: a compaction overtaken by other changes, a log whose events do not chain where a session folds them.
import { ContextLedgerError } from '../base/errors.js';

/** Memory was restored, cleared or compacted while a compact policy ran; its result was not applied. */
export class CompactionConflictError extends ContextLedgerError {
  static override readonly code = 'COMPACTION_CONFLICT';
  constructor(readonly sessionId: string) {
    super('memory was restored, cleared or compacted while the policy ran; compaction not applied');
  }
}
/** @deprecated use CompactionConflictError.isInstance */ export const isCompactionConflictError = (e: unknown): e is CompactionConflictError => CompactionConflictError.isInstance(e);

/**
 * The events folded to open, resume or read a session do not form an unbroken hash chain (an event was edited, removed
 * or reordered): nothing is folded past `seq`.
 * @example try { await agent.resumeSession(id) } catch (e) { if (SessionIntegrityError.isInstance(e)) console.error(e.seq) }
 */
export class SessionIntegrityError extends ContextLedgerError {
  static override readonly code = 'SESSION_INTEGRITY';
  constructor(
    readonly sessionId: string,
    readonly seq: number,
    readonly problem: string,
  ) {
    super(`session ${JSON.stringify(sessionId)}: event ${seq} breaks the hash chain (${problem})`);
  }
}
/** @deprecated use SessionIntegrityError.isInstance */ export const isSessionIntegrityError = (e: unknown): e is SessionIntegrityError => SessionIntegrityError.isInstance(e);
