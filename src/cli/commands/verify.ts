// `context-ledger verify SESSION`: the hash chain and the fate law at every step; exit 1 when either fails, 2 when a keyed session's chain cannot be checked without its key.
import type { Command } from 'commander';
import { createFateLawChecker } from '../../replay/fate-law.js';
import { CHAIN_KEY_ENV, requireSession, withCommonOptions, withReadLedger, type CommonOptions } from '../common.js';
import { CliError } from '../errors.js';
import { num } from '../output.js';
import type { SessionEventLog } from '../../log/index.js';

export const verifyCommand = (program: Command): Command =>
  withCommonOptions(
    program.command('verify').description("check a session's hash chain and the fate law at every step (exit 1 when broken)").argument('<session>', 'session id'),
  ).action(async (sessionId: string, options: CommonOptions) => {
    await withReadLedger(options, async ({ log }, out) => {
      await requireSession(log, sessionId, options.dir);
      const chain = await log.verify(sessionId);
      let fateViolations: { seq: number; message: string }[] = [];
      if (chain.valid) {
        // Streamed: the check holds only memory and the current step.
        const law = createFateLawChecker();
        for await (const event of log.read(sessionId)) law.observe(event);
        fateViolations = law.finish();
      }
      const valid = chain.valid && fateViolations.length === 0;
      // Keyed, and no key given: the chain cannot be checked here, which is not the same as broken.
      const unchecked = !chain.valid && chain.keyed?.mismatch === 'keyed-session-no-key' ? chain.keyed : undefined;
      const keyHelp = `give the key with ${CHAIN_KEY_ENV} or --chain-key-file`;
      if (out.json) out.data({ sessionId, ...chain, valid, fateLaw: fateViolations });
      else if (unchecked) out.line(`${sessionId}: NOT CHECKED: the session is keyed (chain key id ${unchecked.keyId}); its hash chain cannot be checked without the key (${keyHelp})`);
      else if (!chain.valid) out.line(`${sessionId}: BROKEN at seq ${chain.firstBrokenSeq}: ${chain.problem ?? 'chain broken'} (${num(chain.eventCount)} events read)`);
      else if (fateViolations.length > 0) out.line(`${sessionId}: hash chain intact, fate law broken at seq ${fateViolations[0]!.seq}: ${fateViolations[0]!.message} (${fateViolations.length} violation(s))`);
      else out.line(`${sessionId}: valid (${num(chain.eventCount)} events, hash chain intact, one fate per item at every step)`);
      if (!out.json && chain.valid && chain.erased !== undefined) out.line(await erasureLines(log, sessionId, chain.erased));
      if (unchecked) throw new CliError(`${sessionId}: the session is keyed; its hash chain cannot be checked without the key (${keyHelp})`, 2);
      if (!valid) {
        const brokenChain = chain.keyed?.mismatch === 'other-key'
          ? `${sessionId}: hash chain broken at seq ${chain.firstBrokenSeq}, or sealed with another key: the session names chain key id ${chain.keyed.keyId}, not the given key's`
          : `${sessionId}: hash chain broken at seq ${chain.firstBrokenSeq}`;
        throw new CliError(chain.valid ? `${sessionId}: fate law broken` : brokenChain, 1);
      }
    });
  });

/** What verify prints of a session's erasures: one line per `event.erased` event (seqs, when, by whom, why). */
const erasureLines = async (log: SessionEventLog, sessionId: string, erased: readonly number[]): Promise<string> => {
  const lines = [`erased: ${erased.length} event(s) (${erased.join(', ')}); their envelopes and digests verify, their content is gone`];
  for await (const event of log.read(sessionId)) {
    if (event.type !== 'event.erased') continue;
    lines.push(`  seq ${event.seq} at ${event.at}${event.by !== undefined ? ` by ${event.by}` : ''}: erased ${event.seqs.join(', ')} (${event.reason})`);
  }
  return lines.join('\n');
};
