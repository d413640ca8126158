// Named errors of the model layer.
import { ContextLedgerError } from '../base/errors.js';

/** A `ScriptedModelClient` was asked for more answers than it holds. */
export class ScriptExhaustedError extends ContextLedgerError {
  static override readonly code = 'SCRIPT_EXHAUSTED';
  constructor(readonly requestNumber: number) {
    super(`ScriptedModelClient: no answer left for request #${requestNumber}`);
  }
}
/** @deprecated use ScriptExhaustedError.isInstance */ export const isScriptExhaustedError = (e: unknown): e is ScriptExhaustedError => ScriptExhaustedError.isInstance(e);
