// Named errors of the SDK adapters: a provider's response the library cannot use.
import { ContextLedgerError } from '../base/errors.js';

/**
 * An SDK adapter got a response it cannot use: no choices, a failed Responses call, or another failure the API
 * reported.
 */
export class ProviderResponseError extends ContextLedgerError {
  static override readonly code = 'PROVIDER_RESPONSE';
  constructor(
    /** `'chat-completions'`, `'responses'`, `'anthropic'`. */
    readonly api: string,
    readonly responseId: string | undefined,
    message: string,
    options?: { readonly cause?: unknown },
  ) {
    super(message, options);
  }
}
/** @deprecated use ProviderResponseError.isInstance */ export const isProviderResponseError = (e: unknown): e is ProviderResponseError => ProviderResponseError.isInstance(e);
