// Public face of context-ledger/postgres: the SessionEventLog on PostgreSQL (needs the optional peer `pg`).
export { MAX_POSTGRES_SESSION_ID_LENGTH, openPostgresLog } from './log.js';
export type { PostgresLogOptions } from './log.js';
export { DEFAULT_SCHEMA, SCHEMA_VERSION, migrate, schemaSql } from './schema.js';
export type { MigrateOptions, PostgresTarget } from './schema.js';
export { copySession, isSessionsDivergeError, SessionsDivergeError } from '../log/copy.js';
export { PostgresSchemaError, isPostgresSchemaError } from './errors.js';
export type { CopySessionOptions, CopySessionResult } from '../log/copy.js';
