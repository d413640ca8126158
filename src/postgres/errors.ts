// Named errors of the PostgreSQL log.
import { ContextLedgerError } from '../base/errors.js';

/**
 * The database has no context-ledger schema of the name given (run `migrate()`), or one at a version this package does
 * not know.
 */
export class PostgresSchemaError extends ContextLedgerError {
  static override readonly code = 'POSTGRES_SCHEMA';
  constructor(
    readonly schema: string,
    message: string,
    options?: { readonly cause?: unknown },
  ) {
    super(message, options);
  }
}
/** @deprecated use PostgresSchemaError.isInstance */ export const isPostgresSchemaError = (e: unknown): e is PostgresSchemaError => PostgresSchemaError.isInstance(e);
