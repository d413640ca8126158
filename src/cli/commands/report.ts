// `context-ledger report SESSION --out FILE.html`: one self-contained HTML file (timeline, fate map, each step's context).
import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { renderReport, reportData } from '../../replay/index.js';
import { pricesOption } from '../accounting.js';
import { requireSession, withCommonOptions, withReadLedger, type CommonOptions } from '../common.js';
import { CliError, usage } from '../errors.js';
import { progressBar } from '../progress.js';

interface ReportOptions extends CommonOptions {
  readonly out?: string;
  readonly prices?: string;
}

export const reportCommand = (program: Command): Command =>
  withCommonOptions(
    program
      .command('report')
      .description('write a visual report of a session: one HTML file that works offline')
      .argument('<session>', 'session id')
      .requiredOption('--out <file>', 'the HTML file to write')
      .option('--prices <file|json>', 'prices per model per million tokens (JSON file or object): a cost line on the timeline'),
  ).action(async (sessionId: string, options: ReportOptions) => {
    const file = options.out ?? '';
    if (file === '') throw usage('--out must name a file');
    const prices = await pricesOption(options.prices);
    await withReadLedger(options, async ({ log }, out) => {
      await requireSession(log, sessionId, options.dir);
      const bar = progressBar('report');
      const data = await reportData(log, sessionId, (seq, head) => bar.update(seq, head), prices !== undefined ? { prices } : {});
      bar.finish();
      const html = renderReport(data);
      try {
        await writeFile(file, html);
      } catch (error) {
        throw new CliError(`cannot write ${file}: ${(error as Error).message}`, 2);
      }
      const unverified = data.steps.filter((s) => s.verified === false).length;
      if (out.json) out.data({ sessionId, out: file, bytes: Buffer.byteLength(html), steps: data.steps.length, compactions: data.compactions.length, digestMismatches: unverified });
      else out.line(`wrote ${file} (${(Buffer.byteLength(html) / 1024).toFixed(0)} KB): ${data.steps.length} steps, ${data.compactions.length} compactions${unverified ? `, ${unverified} step(s) whose re-projection does not match the recording` : ''}`);
      if (unverified > 0) throw new CliError(`${unverified} step(s) of ${sessionId} do not re-project to the recorded digest`, 1);
    });
  });
