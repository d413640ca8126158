// `context-ledger checkpoint SESSION`: store a checkpoint at the head, so later opens fold only what follows it.
import type { Command } from 'commander';
import { openSession } from '../../session/index.js';
import { requireSession, withCommonOptions, withWriteLedger, type CommonOptions } from '../common.js';
import { num } from '../output.js';

export const checkpointCommand = (program: Command): Command =>
  withCommonOptions(
    program
      .command('checkpoint')
      .description('store a checkpoint at the head of a session (a session read often and seldom appended to opens from it)')
      .argument('<session>', 'session id'),
  ).action(async (sessionId: string, options: CommonOptions) => {
    await withWriteLedger(options, async ({ log }, out) => {
      await requireSession(log, sessionId, options.dir);
      const session = await openSession(log, { id: sessionId });
      const { seq, taken } = await session.checkpoint();
      if (out.json) out.data({ sessionId, seq, taken, openedFrom: session.opened.from, eventsFolded: session.opened.eventsFolded });
      else out.line(taken ? `${sessionId}: checkpoint stored at seq ${num(seq)} (${num(session.opened.eventsFolded)} events folded to take it)` : `${sessionId}: the head (seq ${num(seq)}) is a checkpoint already`);
    });
  });
