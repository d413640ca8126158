// CLI errors: each carries its exit code (1: the ledger fails a check, 2: the command cannot run).
export class CliError extends Error {
  readonly _tag = 'CliError' as const;
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 2,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export const isCliError = (e: unknown): e is CliError => e instanceof CliError;

/** A usage error (exit 2). */
export const usage = (message: string): CliError => new CliError(message, 2);
