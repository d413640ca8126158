// Named errors of sessions.
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
