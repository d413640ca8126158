// `context-ledger replay SESSION [--budget JSON] [--projector JSON] [--mode project]`: re-derive every step and compare.
import type { Command } from 'commander';
import { contextProjectorFromDescription, parseContextBudget, type ContextBudget, type ContextProjector } from '../../context/index.js';
import { ComponentDescriptionSchema } from '../../events/index.js';
import { requireSession, withCommonOptions, withReadLedger, type CommonOptions } from '../common.js';
import { CliError, usage } from '../errors.js';
import { progressBar } from '../progress.js';
import { replayProjections } from '../replay-project.js';

interface ReplayOptions extends CommonOptions {
  readonly budget?: string;
  readonly projector?: string;
  readonly policy?: string;
  readonly mode: string;
}

const parseJson = (name: string, text: string): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw usage(`${name} is not JSON: ${(error as Error).message}`);
  }
};

export const replayCommand = (program: Command): Command =>
  withCommonOptions(
    program
      .command('replay')
      .description('replay a session: re-project every step from memory and compare with the recording (exit 1 when a faithful replay differs)')
      .argument('<session>', 'session id')
      .option('--budget <json>', 'replace the recorded budget, e.g. \'{"maxTokens":4000}\'')
      .option('--projector <json>', 'replace the recorded projector, e.g. \'{"name":"DefaultContextProjector"}\'')
      .option('--policy <json>', 'replace the recorded compaction policy (rerun mode)')
      .option('--mode <mode>', 'project (re-project recorded memory) or rerun (run the runtime again)', 'project'),
  ).action(async (sessionId: string, options: ReplayOptions) => {
    if (options.mode !== 'project' && options.mode !== 'rerun') throw usage(`--mode must be project or rerun, got ${JSON.stringify(options.mode)}`);
    // The rerun mode and --policy come with the replay module's replaySession.
    if (options.mode === 'rerun' || options.policy !== undefined) throw usage('--mode rerun and --policy are not available in this build');
    let budget: ContextBudget | undefined;
    let projector: ContextProjector | undefined;
    try {
      if (options.budget !== undefined) budget = parseContextBudget(parseJson('--budget', options.budget) as ContextBudget);
      if (options.projector !== undefined) {
        const description = ComponentDescriptionSchema.safeParse(parseJson('--projector', options.projector));
        if (!description.success) throw usage(`--projector must be {"name": ..., "settings": {...}}: ${description.error.issues[0]?.message ?? ''}`);
        projector = contextProjectorFromDescription(description.data);
      }
    } catch (error) {
      if (error instanceof CliError) throw error;
      throw usage(error instanceof Error ? error.message.split('\n')[0]! : String(error));
    }
    const whatIf = budget !== undefined || projector !== undefined;
    await withReadLedger(options, async ({ log }, out) => {
      const head = await requireSession(log, sessionId, options.dir);
      const bar = progressBar('replay');
      const result = await replayProjections(log, sessionId, {
        ...(budget ? { budget } : {}),
        ...(projector ? { projector } : {}),
        onProgress: (seq) => bar.update(seq, head),
      });
      bar.finish();
      if (out.json) out.data({ sessionId, whatIf, ...result });
      else if (result.identical) out.line(`replay: identical (${result.steps} steps re-projected${whatIf ? ' with the given settings' : ''})`);
      else {
        const f = result.firstDivergence!;
        out.line(`replay: ${result.divergentSteps} of ${result.steps} steps differ${whatIf ? ' with the given settings' : ''}; first at step ${f.step ?? '?'} (seq ${f.seq}): ${f.fields.join(', ')}`);
      }
      if (!result.identical && !whatIf) throw new CliError(`replay of ${sessionId} diverges from the recording`, 1);
    });
  });
