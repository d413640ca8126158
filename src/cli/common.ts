// What every command shares: --dir and --json, opening the ledger, integer options, an unknown session.
import { Option, type Command } from 'commander';
import type { SessionEventLog } from '../log/index.js';
import { CliError, usage } from './errors.js';
import { openForRead, openForWrite, type OpenedLedger } from './ledger.js';
import { createOutput, type Output } from './output.js';

export const DEFAULT_DIR = './.ledger';

export interface CommonOptions {
  readonly dir: string;
  readonly json?: boolean;
}

/** Adds `--dir` and `--json` to a command. */
export const withCommonOptions = (command: Command): Command =>
  command
    .addOption(new Option('--dir <path>', 'the ledger: a LevelDB directory or a postgres:// URL').default(DEFAULT_DIR))
    .option('--json', 'print JSON for scripts instead of tables');

/** Parses an integer option; a usage error (exit 2) names the option. */
export const intOption = (name: string, value: string | undefined, min = 0): number | undefined => {
  if (value === undefined) return undefined;
  if (!/^-?\d+$/.test(value.trim())) throw usage(`${name} must be an integer, got ${JSON.stringify(value)}`);
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < min) throw usage(`${name} must be an integer ≥ ${min}, got ${value}`);
  return n;
};

/** The session's head; an unknown session is exit 2. */
export const requireSession = async (log: SessionEventLog, sessionId: string, dir: string): Promise<number> => {
  if (sessionId === '') throw usage('the session id must not be empty');
  const head = await log.head(sessionId);
  if (head === 0) throw new CliError(`no session ${JSON.stringify(sessionId)} in ${dir}`, 2);
  return head;
};

/** Runs `body` with the ledger opened for reading (a snapshot when locked) and closes it after. */
export const withReadLedger = async <T>(options: CommonOptions, body: (ledger: OpenedLedger, out: Output) => Promise<T>): Promise<T> => {
  const out = createOutput(options.json === true);
  const ledger = await openForRead(options.dir, (message) => out.note(message));
  try {
    return await body(ledger, out);
  } finally {
    await ledger.close();
  }
};

/** Runs `body` with the ledger opened for writing (created when missing) and closes it after. */
export const withWriteLedger = async <T>(options: CommonOptions, body: (ledger: OpenedLedger, out: Output) => Promise<T>): Promise<T> => {
  const out = createOutput(options.json === true);
  const ledger = await openForWrite(options.dir);
  try {
    return await body(ledger, out);
  } finally {
    await ledger.close();
  }
};

/** A command's result: its exit code (0 ok, 1 a check failed). */
export type ExitCode = 0 | 1 | 2;
