// `context-ledger migrate --pg URL`: creates or updates the PostgreSQL tables a ledger needs.
import type { Command } from 'commander';
import { CliError, usage } from '../errors.js';
import { isPostgresUrl, redact } from '../ledger.js';
import { createOutput } from '../output.js';

interface MigrateOptions {
  readonly pg?: string;
  readonly schema?: string;
  readonly json?: boolean;
}

export const migrateCommand = (program: Command): Command =>
  program
    .command('migrate')
    .description('create or update the tables of a PostgreSQL ledger')
    .requiredOption('--pg <url>', 'the database, postgres://…')
    .option('--schema <name>', 'the schema for the tables (default context_ledger)')
    .option('--json', 'print JSON for scripts')
    .action(async (options: MigrateOptions) => {
      const url = options.pg ?? '';
      if (!isPostgresUrl(url)) throw usage(`--pg must be a postgres:// URL, got ${JSON.stringify(redact(url))}`);
      const out = createOutput(options.json === true);
      let postgres: typeof import('../../postgres/index.js');
      try {
        postgres = await import('../../postgres/index.js');
      } catch (error) {
        throw new CliError(`PostgreSQL needs the pg package (npm install pg): ${(error as Error).message}`, 2);
      }
      let result: { schema: string; version: number };
      try {
        result = await postgres.migrate({ connectionString: url }, options.schema !== undefined ? { schema: options.schema } : {});
      } catch (error) {
        throw new CliError(`migrate ${redact(url)}: ${(error as Error).message.split('\n')[0]}`, 2);
      }
      if (out.json) out.data(result);
      else out.line(`${redact(url)}: schema ${result.schema} at version ${result.version}`);
    });
