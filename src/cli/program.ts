// The command-line program: every command, with --dir, --json, --help on each and --version.
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { auditCommand } from './commands/audit.js';
import { contextCommand } from './commands/context.js';
import { copyCommand } from './commands/copy.js';
import { demoCommand } from './commands/demo.js';
import { eventsCommand } from './commands/events.js';
import { exportCommand } from './commands/export.js';
import { forkCommand } from './commands/fork.js';
import { memoryCommand } from './commands/memory.js';
import { migrateCommand } from './commands/migrate.js';
import { replayCommand } from './commands/replay.js';
import { reportCommand } from './commands/report.js';
import { sessionsCommand } from './commands/sessions.js';
import { verifyCommand } from './commands/verify.js';

const packageVersion = (): string => {
  for (const path of ['../../package.json', '../package.json']) {
    try {
      return (JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8')) as { version: string }).version;
    } catch {
      // try the next place (src/cli/ in a clone, dist/cli/ in the package)
    }
  }
  return 'unknown';
};

/**
 * Builds the program. Commander's own errors (unknown option, missing argument) go through `exitOverride`
 * so the caller maps them to exit 2.
 */
export const buildProgram = (): Command => {
  const program = new Command('context-ledger')
    .description('Look into a context-ledger log: sessions, events, memory, what the model saw, audit, verify, replay, report.')
    .version(packageVersion(), '--version', 'print the version')
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(text.split('\n')[0]!.replace(/^error: /, 'context-ledger: ') + '\n') });
  sessionsCommand(program);
  eventsCommand(program);
  memoryCommand(program);
  contextCommand(program);
  auditCommand(program);
  verifyCommand(program);
  replayCommand(program);
  forkCommand(program);
  reportCommand(program);
  demoCommand(program);
  copyCommand(program);
  migrateCommand(program);
  exportCommand(program);
  for (const command of program.commands) command.exitOverride().configureOutput(program.configureOutput());
  return program;
};
