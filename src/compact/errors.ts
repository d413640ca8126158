// Named errors of compaction.
import { ContextLedgerError } from '../base/errors.js';

/**
 * A summarizing model answered with no summary, or a content-free one (`isContentFree`: after JSON parsing and
 * removing Unicode whitespace and format characters, nothing but `null`, `""`, `[]`, `{}`, zero-width spaces); memory
 * was left as it was.
 */
export class EmptySummaryError extends ContextLedgerError {
  static override readonly code = 'EMPTY_SUMMARY';
  constructor(
    /** The policy that asked for the summary. */
    readonly policyName: string,
    detail = 'the model returned an empty summary',
  ) {
    super(`${policyName}: ${detail}; memory was left as it was`);
  }
}
/** @deprecated use EmptySummaryError.isInstance */ export const isEmptySummaryError = (e: unknown): e is EmptySummaryError => EmptySummaryError.isInstance(e);

/**
 * `LlmCompactPolicy`'s summarizer refused every request of a compaction as too long, though each retry cut the items
 * further (recorded as `compaction.failed`); memory was left as it was.
 */
export class SummarizerOverflowError extends ContextLedgerError {
  static override readonly code = 'SUMMARIZER_OVERFLOW';
  constructor(
    readonly policyName: string,
    /** The provider's message for each refused request, in order. */
    readonly overflows: readonly string[],
  ) {
    super(`${policyName}: the summarizer refused ${overflows.length} requests as too long (last: ${overflows.at(-1) ?? ''}); memory was left as it was`);
  }
}
/** @deprecated use SummarizerOverflowError.isInstance */ export const isSummarizerOverflowError = (e: unknown): e is SummarizerOverflowError => SummarizerOverflowError.isInstance(e);
