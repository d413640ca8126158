// `context-ledger demo`: records the scripted coding-agent session in the ledger, prints a short audit, replays it.
import type { Command } from 'commander';
import { auditSession, replaySession } from '../../replay/index.js';
import { withCommonOptions, withWriteLedger, type CommonOptions } from '../common.js';
import { runDemoSession } from '../demo/coding-session.js';
import { CliError } from '../errors.js';
import { num } from '../output.js';
import { progressBar } from '../progress.js';
import { printAuditSummary, stepWorthShowing } from './audit.js';

interface DemoOptions extends CommonOptions {
  readonly tasks?: string;
}

export const demoCommand = (program: Command): Command =>
  withCommonOptions(
    program
      .command('demo')
      .description('record a scripted long-horizon coding-agent session (about 300 steps) in the ledger, audit it and replay it'),
  ).action(async (options: DemoOptions) => {
    await withWriteLedger(options, async ({ log }, out) => {
      let sessionId = 'demo';
      for (let n = 2; (await log.head(sessionId)) > 0; n++) sessionId = `demo-${n}`;
      const started = performance.now();
      const bar = progressBar('demo');
      const { steps } = await runDemoSession(log, { sessionId, onStep: (step, total) => bar.update(step, total) });
      bar.finish();
      const seconds = (performance.now() - started) / 1000;
      const audit = await auditSession(log, sessionId);
      const replay = await replaySession(log, sessionId);
      const dirFlag = options.dir !== './.ledger' ? ` --dir ${options.dir}` : '';
      const dropped = audit.items.find((i) => i.left?.eventType === 'memory.compacted' && i.left.placeholderId) ?? audit.items.find((i) => i.left);
      const stepToShow = stepWorthShowing(audit);
      if (out.json) {
        out.data({ sessionId, dir: options.dir, steps, seconds: Math.round(seconds * 10) / 10, audit: { totals: audit.totals, compactions: audit.compactions }, replay });
      } else {
        out.line(`recorded a scripted coding-agent session: ${num(steps)} steps as "${sessionId}" in ${options.dir} (${seconds.toFixed(1)} s)`);
        out.line('  TypeAware projection, exact o200k tokens, budget 6,000 tokens, Tier-1 keeps 8 tool results raw, fact-summary compaction (no model)');
        out.line('');
        printAuditSummary(audit, out);
        out.line('');
        out.line(replay.identical ? `replay: identical (${replay.steps} steps re-projected from the log match what was sent)` : `replay: ${replay.divergentSteps} of ${replay.steps} steps DIFFER`);
        out.line('');
        out.line('look further:');
        out.line(`  context-ledger context ${sessionId} --step ${stepToShow}${dirFlag}        what the model saw at a step, and what was dropped`);
        out.line(`  context-ledger audit ${sessionId}${dirFlag}                  the audit above (--json for scripts)`);
        if (dropped) out.line(`  context-ledger audit ${sessionId} --item ${dropped.id}${dirFlag}    one item's life`);
        out.line(`  context-ledger report ${sessionId} --out report.html${dirFlag}   a visual report`);
        out.line(`  (in a clone: npx context-ledger …)`);
      }
      if (!replay.identical) throw new CliError(`replay of ${sessionId} diverges from the recording`, 1);
    });
  });
