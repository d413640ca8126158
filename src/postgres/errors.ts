// Named errors of the PostgreSQL log.
import { ContextLedgerError, errorGuard } from '../errors.js';

/** The database has no context-ledger schema of the name given, or one at a version this package does not know. */
export class PostgresSchemaError extends ContextLedgerError {
  declare readonly code: 'POSTGRES_SCHEMA';
  readonly _tag = 'PostgresSchemaError' as const;
  constructor(
    readonly schema: string,
    message: string,
    options?: { readonly cause?: unknown },
  ) {
    super('POSTGRES_SCHEMA', message, options);
    this.name = 'PostgresSchemaError';
  }
}
export const isPostgresSchemaError = errorGuard<PostgresSchemaError>('POSTGRES_SCHEMA');
