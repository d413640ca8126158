// `context-ledger erase SESSION (--seq N… | --item ID… | --all) --reason TEXT [--by NAME] [--yes]`: removes content, keeps the chain verifiable.
import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import { ErasureRefusedError, type EraseSelector } from '../../log/index.js';
import { InvalidOptionsError } from '../../base/errors.js';
import { intOption, requireSession, withCommonOptions, withWriteLedger, type CommonOptions } from '../common.js';
import { CliError, usage } from '../errors.js';

interface EraseCliOptions extends CommonOptions {
  readonly seq?: string[];
  readonly item?: string[];
  readonly all?: boolean;
  readonly reason?: string;
  readonly by?: string;
  readonly yes?: boolean;
}

const collectValues = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), ...value.split(',').filter((v) => v !== '')];

const confirm = async (question: string): Promise<boolean> => {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(`${question} [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
};

export const eraseCommand = (program: Command): Command =>
  withCommonOptions(
    program
      .command('erase')
      .description('remove the content of events (by seq, by memory item id, or all), keeping the hash chain verifiable')
      .argument('<session>', 'session id')
      .option('--seq <n...>', 'erase the event at this seq (repeat, or separate with commas)', collectValues)
      .option('--item <id...>', 'erase the event that brought in this memory item (seq:index)', collectValues)
      .option('--all', 'erase every event of the session (event.erased events are kept)')
      .requiredOption('--reason <text>', 'why (recorded with the erasure)')
      .option('--by <name>', 'who asked for it (recorded with the erasure)')
      .option('--yes', 'do not ask for confirmation on a terminal'),
  ).action(async (sessionId: string, options: EraseCliOptions) => {
    const given = [options.seq !== undefined, options.item !== undefined, options.all === true].filter(Boolean).length;
    if (given !== 1) throw usage('give exactly one of --seq, --item and --all');
    const selector: EraseSelector =
      options.all === true
        ? { all: true }
        : options.seq !== undefined
          ? { seqs: options.seq.map((s) => intOption('--seq', s, 1) as number) }
          : { itemIds: options.item ?? [] };
    const reason = options.reason ?? '';
    if (reason.trim() === '') throw usage('--reason must say why the content is erased');
    await withWriteLedger(options, async ({ log }, out) => {
      await requireSession(log, sessionId, options.dir);
      if (options.yes !== true && process.stdin.isTTY === true && process.stderr.isTTY === true) {
        const what = 'all' in selector ? 'every event' : 'seqs' in selector ? `seq ${selector.seqs.join(', ')}` : `the events of item ${selector.itemIds.join(', ')}`;
        if (!(await confirm(`Erase the content of ${what} in session ${JSON.stringify(sessionId)}? This cannot be undone.`))) {
          throw new CliError('not erased', 1);
        }
      }
      let result;
      try {
        result = await log.erase(sessionId, selector, { reason, ...(options.by !== undefined ? { by: options.by } : {}) });
      } catch (error) {
        if (ErasureRefusedError.isInstance(error) || InvalidOptionsError.isInstance(error)) throw new CliError(error.message, 2);
        throw error;
      }
      if (out.json) out.data({ sessionId, ...result });
      else if (result.erased.length === 0) out.line(`${sessionId}: nothing left to erase (already erased)`);
      else out.line(`${sessionId}: erased the content of seq ${result.erased.join(', ')} (recorded as event.erased at seq ${result.seq})`);
    });
  });
