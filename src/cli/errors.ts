// CLI errors: each carries its exit code (1: the ledger fails a check, 2: the command cannot run).
import { ContextLedgerError } from '../base/errors.js';

/** A CLI command fails (`exitCode` 1: the ledger fails a check; 2: the command cannot run). */
export class CliError extends ContextLedgerError {
  static override readonly code = 'CLI';
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 2,
  ) {
    super(message);
  }
}
/** @deprecated use CliError.isInstance */ export const isCliError = (e: unknown): e is CliError => CliError.isInstance(e);

/** A usage error (exit 2). */
export const usage = (message: string): CliError => new CliError(message, 2);
