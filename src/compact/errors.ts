// Named errors of compaction.
import { ContextLedgerError, errorGuard } from '../errors.js';

/** A summarizer answered with no summary; memory was left as it was. */
export class EmptySummaryError extends ContextLedgerError {
  declare readonly code: 'EMPTY_SUMMARY';
  readonly _tag = 'EmptySummaryError' as const;
  constructor(
    /** The policy that asked for the summary. */
    readonly policyName: string,
    detail = 'the model returned an empty summary',
  ) {
    super('EMPTY_SUMMARY', `${policyName}: ${detail}; memory was left as it was`);
    this.name = 'EmptySummaryError';
  }
}
export const isEmptySummaryError = errorGuard<EmptySummaryError>('EMPTY_SUMMARY');
