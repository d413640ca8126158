// `context-ledger fork SESSION (--after-step N | --at-seq N) --as NEW`: a new session that starts as a prefix of another.
import type { Command } from 'commander';
import { forkSession, ReplayTargetError } from '../../replay/index.js';
import { intOption, requireSession, withCommonOptions, withWriteLedger, type CommonOptions } from '../common.js';
import { CliError, usage } from '../errors.js';

interface ForkOptions extends CommonOptions {
  readonly afterStep?: string;
  readonly atSeq?: string;
  readonly as?: string;
}

export const forkCommand = (program: Command): Command =>
  withCommonOptions(
    program
      .command('fork')
      .description('copy a session up to a point into a new session (to resume it differently)')
      .argument('<session>', 'session id')
      .option('--after-step <n>', 'up to the end of this step')
      .option('--at-seq <n>', 'up to and including this seq')
      .requiredOption('--as <new>', 'the new session id'),
  ).action(async (sessionId: string, options: ForkOptions) => {
    if ((options.afterStep === undefined) === (options.atSeq === undefined)) throw usage('give exactly one of --after-step and --at-seq');
    const afterStep = intOption('--after-step', options.afterStep, 0);
    const atSeq = intOption('--at-seq', options.atSeq, 1);
    const target = options.as ?? '';
    if (target === '') throw usage('--as must name the new session');
    await withWriteLedger(options, async ({ log }, out) => {
      await requireSession(log, sessionId, options.dir);
      if ((await log.head(target)) > 0) throw new CliError(`session ${JSON.stringify(target)} already exists in ${options.dir}`, 2);
      let result;
      try {
        result = await forkSession(log, sessionId, afterStep !== undefined ? { afterStep } : { atSeq: atSeq! }, target);
      } catch (error) {
        if (ReplayTargetError.isInstance(error) || error instanceof TypeError || error instanceof RangeError) throw new CliError(error.message, 2);
        throw error;
      }
      if (out.json) out.data(result);
      else out.line(`forked ${sessionId} up to seq ${result.forkedFrom.seq} as ${target} (${result.copied} events copied)`);
    });
  });
