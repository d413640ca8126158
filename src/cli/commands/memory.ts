// `context-ledger memory SESSION [--at SEQ | --step N]`: what the agent remembered at a point of the session.
import type { Command } from 'commander';
import { approxTokenizer, itemTokenCount } from '../../context/index.js';
import { visibleEntries } from '../../memory/index.js';
import { intOption, requireSession, withCommonOptions, withReadLedger, type CommonOptions } from '../common.js';
import { usage } from '../errors.js';
import { num, table } from '../output.js';
import { ReplayTargetError, memoryAt } from '../../replay/index.js';
import { CliError } from '../errors.js';
import { itemKind, itemPreview } from '../items.js';

interface MemoryOptions extends CommonOptions {
  readonly at?: string;
  readonly step?: string;
}

export const memoryCommand = (program: Command): Command =>
  withCommonOptions(
    program
      .command('memory')
      .description("a session's memory: at the end, after a seq (--at), or at the start of a step (--step)")
      .argument('<session>', 'session id')
      .option('--at <seq>', 'after the event at this seq')
      .option('--step <n>', 'at the start of this step'),
  ).action(async (sessionId: string, options: MemoryOptions) => {
    if (options.at !== undefined && options.step !== undefined) throw usage('give --at or --step, not both');
    const at = intOption('--at', options.at, 0);
    const step = intOption('--step', options.step, 1);
    await withReadLedger(options, async ({ log }, out) => {
      const head = await requireSession(log, sessionId, options.dir);
      let state;
      try {
        state = await memoryAt(log, sessionId, step !== undefined ? { step } : { seq: at ?? head });
      } catch (error) {
        if (ReplayTargetError.isInstance(error) || error instanceof RangeError) throw new CliError(error.message, 2);
        throw error;
      }
      const entries = visibleEntries(state.memory);
      if (out.json) {
        return out.data({
          sessionId,
          seq: state.seq,
          summary: state.memory.summary,
          items: entries.map((e) => ({ id: e.id, item: e.item })),
          facts: state.memory.facts.length,
        });
      }
      const tokens = entries.map((e) => itemTokenCount(e.item, approxTokenizer));
      out.line(`session ${sessionId} after seq ${state.seq}: ${entries.length} items, ~${num(tokens.reduce((a, b) => a + b, 0))} tokens (approx), ${state.memory.facts.length} facts since the last compaction`);
      for (const line of table(['ID', 'KIND', 'TOKENS', 'TEXT'], entries.map((e, i) => [e.id, itemKind(e.item, e.id === state.memory.summaryId), tokens[i] ?? 0, itemPreview(e.item, 70)]), ['left', 'left', 'right', 'left'])) out.line(line);
    });
  });
