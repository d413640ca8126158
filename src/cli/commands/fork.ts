// `context-ledger fork SESSION (--after-step N | --at-seq N) --as NEW`: a new session that starts as a prefix of another.
import type { Command } from 'commander';
import type { NewSessionEvent } from '../../events/index.js';
import { intOption, requireSession, withCommonOptions, withWriteLedger, type CommonOptions } from '../common.js';
import { CliError, usage } from '../errors.js';

interface ForkOptions extends CommonOptions {
  readonly afterStep?: string;
  readonly atSeq?: string;
  readonly as?: string;
}

const ENVELOPE = new Set(['sessionId', 'seq', 'at', 'v', 'prevHash', 'hash']);

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
      const head = await requireSession(log, sessionId, options.dir);
      if ((await log.head(target)) > 0) throw new CliError(`session ${JSON.stringify(target)} already exists in ${options.dir}`, 2);
      if (atSeq !== undefined && atSeq > head) throw new CliError(`session ${JSON.stringify(sessionId)} has ${head} events; no seq ${atSeq}`, 2);
      const copied: NewSessionEvent[] = [];
      let endSeq = 0;
      let sawStep = afterStep === 0;
      for await (const event of log.read(sessionId, atSeq !== undefined ? { toSeq: atSeq } : {})) {
        if (afterStep !== undefined && event.type === 'step.started' && event.step > afterStep) break;
        if (afterStep !== undefined && event.type === 'step.started' && event.step === afterStep) sawStep = true;
        copied.push(Object.fromEntries(Object.entries(event).filter(([k]) => !ENVELOPE.has(k))) as NewSessionEvent);
        endSeq = event.seq;
      }
      if (!sawStep) throw new CliError(`session ${JSON.stringify(sessionId)} has no step ${afterStep}`, 2);
      const first = copied[0] as { type: string; metadata?: Record<string, unknown> } | undefined;
      if (first && first.type === 'session.started') first.metadata = { ...(first.metadata ?? {}), forkedFrom: { sessionId, seq: endSeq } };
      else copied.unshift({ type: 'session.started', metadata: { forkedFrom: { sessionId, seq: endSeq } } });
      await log.append(target, copied, { expectedSeq: 0 });
      if (out.json) out.data({ sessionId: target, forkedFrom: { sessionId, seq: endSeq }, events: copied.length });
      else out.line(`forked ${sessionId} up to seq ${endSeq} as ${target} (${copied.length} events)`);
    });
  });
