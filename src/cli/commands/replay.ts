// `context-ledger replay SESSION [--budget JSON] [--projector JSON] [--mode project]`: re-derive every step and compare.
import type { Command } from 'commander';
import { progressBar } from '../progress.js';
import { compactPolicyFromDescription, type CompactPolicy } from '../../compact/index.js';
import { contextProjectorFromDescription, parseContextBudget, type ContextBudget, type ContextProjector } from '../../context/index.js';
import { ComponentDescriptionSchema, type ComponentDescription } from '../../events/index.js';
import { ReplayTargetError, replaySession } from '../../replay/index.js';
import { requireSession, withCommonOptions, withReadLedger, type CommonOptions } from '../common.js';
import { CliError, usage } from '../errors.js';

interface ReplayOptions extends CommonOptions {
  readonly budget?: string;
  readonly projector?: string;
  readonly policy?: string;
  readonly mode: string;
  readonly timeout?: string;
  readonly maxCodeTimeout?: string;
}

/** A positive whole number of milliseconds given to `name`. */
const parseMs = (name: string, text: string | undefined): number | undefined => {
  if (text === undefined) return undefined;
  const ms = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(ms) || ms <= 0 || ms > 2_147_483_647) throw usage(`${name} must be a positive whole number of milliseconds, got ${JSON.stringify(text)}`);
  return ms;
};

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
      .option('--mode <mode>', 'project (re-project recorded memory) or rerun (run the runtime again)', 'project')
      .option('--timeout <ms>', 'stop the replay after this long (exit 2)')
      .option('--max-code-timeout <ms>', 'rerun: cap recorded CodeAct code limits at this (default 30000)'),
  ).action(async (sessionId: string, options: ReplayOptions) => {
    if (options.mode !== 'project' && options.mode !== 'rerun') throw usage(`--mode must be project or rerun, got ${JSON.stringify(options.mode)}`);
    let budget: ContextBudget | undefined;
    let projector: ContextProjector | undefined;
    let policy: CompactPolicy | undefined;
    const description = (name: string, text: string): ComponentDescription => {
      const parsed = ComponentDescriptionSchema.safeParse(parseJson(name, text));
      if (!parsed.success) throw usage(`${name} must be {"name": ..., "settings": {...}}: ${parsed.error.issues[0]?.message ?? ''}`);
      return parsed.data;
    };
    try {
      if (options.budget !== undefined) budget = parseContextBudget(parseJson('--budget', options.budget) as ContextBudget);
      if (options.projector !== undefined) projector = contextProjectorFromDescription(description('--projector', options.projector));
      if (options.policy !== undefined) policy = compactPolicyFromDescription(description('--policy', options.policy));
    } catch (error) {
      if (error instanceof CliError) throw error;
      throw usage(error instanceof Error ? error.message.split('\n')[0]! : String(error));
    }
    const timeoutMs = parseMs('--timeout', options.timeout);
    const maxCodeTimeoutMs = parseMs('--max-code-timeout', options.maxCodeTimeout);
    const whatIf = budget !== undefined || projector !== undefined || policy !== undefined;
    await withReadLedger(options, async ({ log }, out) => {
      await requireSession(log, sessionId, options.dir);
      const bar = out.json ? undefined : progressBar(`replay (${options.mode})`);
      let result;
      try {
        result = await replaySession(log, sessionId, {
          mode: options.mode as 'project' | 'rerun',
          ...(budget ? { budget } : {}),
          ...(projector ? { projector } : {}),
          ...(policy ? { policy } : {}),
          ...(timeoutMs !== undefined ? { signal: AbortSignal.timeout(timeoutMs) } : {}),
          ...(maxCodeTimeoutMs !== undefined ? { maxCodeTimeoutMs } : {}),
          ...(bar ? { onProgress: (done: number, total: number) => bar.update(done, total) } : {}),
        });
      } catch (error) {
        if (ReplayTargetError.isInstance(error)) throw new CliError(error.message, 2);
        if ((error as { name?: unknown } | undefined)?.name === 'TimeoutError') throw new CliError(`replay of ${sessionId} did not finish within ${timeoutMs} ms (--timeout)`, 2);
        throw error;
      } finally {
        bar?.finish();
      }
      const how = result.mode === 'rerun' ? 're-run' : 're-projected';
      if (out.json) out.data({ sessionId, whatIf, ...result });
      else if (result.identical) out.line(`replay: identical (${result.steps} steps ${how}${whatIf ? ' with the given settings' : ''})`);
      else {
        const f = result.firstDivergence;
        out.line(
          `replay: ${result.divergentSteps} of ${result.steps} steps differ${whatIf ? ' with the given settings' : ''}` +
            (f ? `; first at step ${f.step ?? '?'} (seq ${f.seq}, ${f.type}): ${f.fields.join(', ')}` : ''),
        );
        if (f?.context) out.line(`  at that step: ${f.context.added.length} item(s) sent only now, ${f.context.dropped.length} only then, ${f.context.rewritten.length} with another fate; the prompts share ${f.context.commonPrefixItems} leading item(s)`);
      }
      for (const note of result.notes) out.note(`note: ${note}`);
      if (!result.identical && !whatIf) throw new CliError(`replay of ${sessionId} diverges from the recording`, 1);
    });
  });
