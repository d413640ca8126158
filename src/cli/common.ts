// What every command shares: --dir and --json, opening the ledger, integer options, an unknown session.
import { readFileSync } from 'node:fs';
import { Option, type Command } from 'commander';
import type { SessionEventLog } from '../log/index.js';
import { CliError, usage } from './errors.js';
import { openForRead, openForWrite, type OpenedLedger } from './ledger.js';
import { createOutput, type Output } from './output.js';

export const DEFAULT_DIR = './.ledger';

export interface CommonOptions {
  readonly dir: string;
  readonly json?: boolean;
  readonly chainKeyFile?: string;
}

/** The environment variable a keyed ledger's chain key is read from (`--chain-key-file` wins). */
export const CHAIN_KEY_ENV = 'CONTEXT_LEDGER_CHAIN_KEY';

/** The chain key of a keyed ledger: the file's text without its final newline, or the environment variable; none when neither is set. */
export const chainKeyOf = (options: CommonOptions): { readonly chainKey?: string } => {
  if (options.chainKeyFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(options.chainKeyFile, 'utf8');
    } catch (error) {
      throw new CliError(`cannot read --chain-key-file ${options.chainKeyFile}: ${(error as Error).message}`, 2);
    }
    const key = text.replace(/\r?\n$/, '');
    if (key === '') throw usage(`--chain-key-file ${options.chainKeyFile} is empty`);
    return { chainKey: key };
  }
  const fromEnv = process.env[CHAIN_KEY_ENV];
  return fromEnv === undefined || fromEnv === '' ? {} : { chainKey: fromEnv };
};

/** Adds `--dir` and `--json` to a command. */
export const withCommonOptions = (command: Command): Command =>
  command
    .addOption(new Option('--dir <path>', 'the ledger: a LevelDB directory or a postgres:// URL').default(DEFAULT_DIR))
    .option('--json', 'print JSON for scripts instead of tables')
    .option('--chain-key-file <path>', `a keyed ledger's chain key (or set ${CHAIN_KEY_ENV})`);

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
  const ledger = await openForRead(options.dir, (message) => out.note(message), chainKeyOf(options));
  try {
    return await body(ledger, out);
  } finally {
    await ledger.close();
  }
};

/** Runs `body` with the ledger opened for writing (created when missing) and closes it after. */
export const withWriteLedger = async <T>(options: CommonOptions, body: (ledger: OpenedLedger, out: Output) => Promise<T>): Promise<T> => {
  const out = createOutput(options.json === true);
  const ledger = await openForWrite(options.dir, chainKeyOf(options));
  try {
    return await body(ledger, out);
  } finally {
    await ledger.close();
  }
};

/** A command's result: its exit code (0 ok, 1 a check failed). */
export type ExitCode = 0 | 1 | 2;
