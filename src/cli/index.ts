#!/usr/bin/env node
// context-ledger CLI entry: runs the program and maps outcomes to exit codes (0 ok, 1 a check failed, 2 cannot run).
import { CommanderError } from 'commander';
import { EventDecodeError } from '../events/index.js';
import { CliError } from './errors.js';
import { exitQuietlyWhenStdoutCloses } from './pipe.js';
import { buildProgram } from './program.js';

/** Runs the CLI on `argv` (as process.argv) and resolves to the exit code. */
export const runCli = async (argv: readonly string[]): Promise<number> => {
  const program = buildProgram();
  try {
    await program.parseAsync([...argv]);
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version exit 0; every parse error was printed on one line by commander.
      return error.exitCode === 0 || error.code === 'commander.helpDisplayed' || error.code === 'commander.version' ? 0 : 2;
    }
    if (CliError.isInstance(error)) {
      process.stderr.write(`context-ledger: ${error.message}\n`);
      return error.exitCode;
    }
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    process.stderr.write(`context-ledger: ${message}\n`);
    // A stored event that does not decode is a ledger failing a check; anything else means the command could not run.
    return EventDecodeError.isInstance(error) ? 1 : 2;
  }
};

exitQuietlyWhenStdoutCloses();
runCli(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`context-ledger: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 2;
  },
);
