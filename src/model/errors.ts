// Named errors of the model layer.
import { ContextLedgerError, errorGuard } from '../errors.js';

/** A ScriptedModelClient was asked for more answers than it was given. */
export class ScriptExhaustedError extends ContextLedgerError {
  declare readonly code: 'SCRIPT_EXHAUSTED';
  readonly _tag = 'ScriptExhaustedError' as const;
  constructor(readonly requestNumber: number) {
    super('SCRIPT_EXHAUSTED', `ScriptedModelClient: no answer left for request #${requestNumber}`);
    this.name = 'ScriptExhaustedError';
  }
}
export const isScriptExhaustedError = errorGuard<ScriptExhaustedError>('SCRIPT_EXHAUSTED');
