// `context-ledger copy SESSION --to DEST`: copies a session to another ledger (LevelDB or PostgreSQL), hashes kept.
import type { Command } from 'commander';
import { copySession, SessionsDivergeError } from '../../log/index.js';
import { requireSession, withCommonOptions, withReadLedger, type CommonOptions } from '../common.js';
import { CliError, usage } from '../errors.js';
import { isPostgresUrl, openForWrite, realLedgerPath, redact } from '../ledger.js';

interface CopyOptions extends CommonOptions {
  readonly to?: string;
}

export const copyCommand = (program: Command): Command =>
  withCommonOptions(
    program
      .command('copy')
      .description('copy a session to another ledger (a LevelDB directory or a postgres:// URL); an interrupted copy resumes')
      .argument('<session>', 'session id')
      .requiredOption('--to <ledger>', 'the target ledger (created when a directory does not exist)'),
  ).action(async (sessionId: string, options: CopyOptions) => {
    const to = options.to ?? '';
    if (to === '') throw usage('--to must name a ledger');
    if (to === options.dir) throw usage('--to must differ from --dir');
    const sameAs = realLedgerPath(options.dir);
    if (!isPostgresUrl(to) && realLedgerPath(to) === sameAs) {
      throw usage(`--to ${to} is the same ledger as --dir ${options.dir} (${sameAs}): copy a session to another ledger`);
    }
    await withReadLedger(options, async ({ log }, out) => {
      await requireSession(log, sessionId, options.dir);
      const target = await openForWrite(to);
      try {
        const result = await copySession(log, target.log, sessionId);
        const verified = await target.log.verify(sessionId);
        if (out.json) out.data({ sessionId, to: redact(to), ...result, valid: verified.valid });
        else out.line(`copied ${result.copied} event(s) of ${sessionId} to ${redact(to)}; the copy has ${result.head} events and ${verified.valid ? 'verifies' : 'DOES NOT verify'}`);
        if (!verified.valid) throw new CliError(`the copy of ${sessionId} does not verify`, 1);
      } catch (error) {
        if (SessionsDivergeError.isInstance(error)) throw new CliError(error.message, 1);
        throw error;
      } finally {
        await target.close();
      }
    });
  });
