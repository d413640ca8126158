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

/** The summarizer refused every request of a compaction as too long, even with its items cut further each time; memory was left as it was. */
export class SummarizerOverflowError extends ContextLedgerError {
  declare readonly code: 'SUMMARIZER_OVERFLOW';
  readonly _tag = 'SummarizerOverflowError' as const;
  constructor(
    readonly policyName: string,
    /** The provider's message for each refused request, in order. */
    readonly overflows: readonly string[],
  ) {
    super('SUMMARIZER_OVERFLOW', `${policyName}: the summarizer refused ${overflows.length} requests as too long (last: ${overflows.at(-1) ?? ''}); memory was left as it was`);
    this.name = 'SummarizerOverflowError';
  }
}
export const isSummarizerOverflowError = errorGuard<SummarizerOverflowError>('SUMMARIZER_OVERFLOW');
