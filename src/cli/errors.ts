// CLI errors: each carries its exit code (1: the ledger fails a check, 2: the command cannot run).
import { ContextLedgerError, errorGuard } from '../errors.js';

export class CliError extends ContextLedgerError {
  declare readonly code: 'CLI';
  readonly _tag = 'CliError' as const;
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 2,
  ) {
    super('CLI', message);
    this.name = 'CliError';
  }
}

export const isCliError = errorGuard<CliError>('CLI');

/** A usage error (exit 2). */
export const usage = (message: string): CliError => new CliError(message, 2);
