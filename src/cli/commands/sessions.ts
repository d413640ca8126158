// `context-ledger sessions`: every session in the ledger with its event count and time span.
import type { Command } from 'commander';
import { withCommonOptions, withReadLedger, type CommonOptions } from '../common.js';
import { num, table } from '../output.js';

export const sessionsCommand = (program: Command): Command =>
  withCommonOptions(program.command('sessions').description('list the sessions in the ledger')).action(async (options: CommonOptions) => {
    await withReadLedger(options, async ({ log }, out) => {
      const rows: { sessionId: string; events: number; firstAt: string | null; lastAt: string | null }[] = [];
      for await (const sessionId of log.sessions()) {
        const events = await log.head(sessionId);
        let firstAt: string | null = null;
        let lastAt: string | null = null;
        for await (const e of log.read(sessionId, { fromSeq: 1, toSeq: 1 })) firstAt = e.at;
        for await (const e of log.read(sessionId, { fromSeq: events, toSeq: events })) lastAt = e.at;
        rows.push({ sessionId, events, firstAt, lastAt });
      }
      if (out.json) return out.data(rows);
      if (rows.length === 0) return out.line(`no sessions in ${options.dir}`);
      for (const line of table(['SESSION', 'EVENTS', 'FIRST EVENT', 'LAST EVENT'], rows.map((r) => [r.sessionId, num(r.events), r.firstAt ?? '-', r.lastAt ?? '-']), ['left', 'right', 'left', 'left'])) out.line(line);
    });
  });
