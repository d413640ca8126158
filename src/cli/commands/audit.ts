// `context-ledger audit SESSION [--item ID] [--from-step N --to-step N]`: what was kept, cleared, dropped and compacted.
import type { Command } from 'commander';
import { auditItem, auditSession, describeApproval, AuditError, type ItemAudit, type SessionAudit } from '../../replay/index.js';
import { printAccountTotals, pricesOption } from '../accounting.js';
import { intOption, requireSession, withCommonOptions, withReadLedger, type CommonOptions } from '../common.js';
import { CliError } from '../errors.js';
import { erasureNote } from '../items.js';
import { num, table, type Output } from '../output.js';
import { progressBar } from '../progress.js';

interface AuditOptions extends CommonOptions {
  readonly item?: string;
  readonly fromStep?: string;
  readonly toStep?: string;
  readonly prices?: string;
}

/** The short audit people read: steps, compactions, what was cleared and dropped, tokens saved. */
export const printAuditSummary = (audit: SessionAudit, out: Output): void => {
  const t = audit.totals;
  const byCompaction = audit.items.filter((i) => i.left?.eventType === 'memory.compacted').length;
  const first = audit.steps[0]?.step;
  const last = audit.steps.at(-1)?.step;
  out.line(`session ${audit.sessionId}: ${num(t.steps)} steps${first !== undefined ? ` (${first}–${last})` : ''}, ${num(t.events)} events read, ${num(t.compactions)} compactions`);
  out.line(`memory:     ${num(t.itemsEntered)} items entered, ${num(t.itemsLeft)} left (${num(byCompaction)} by compaction); ${num(audit.items.filter((i) => !i.left).length)} in memory at the end`);
  out.line(`projection: ${num(t.itemsCleared)} items cleared at some step (tool results as placeholders), ${num(t.itemsTrimmed)} trimmed, ${num(t.itemsDropped)} dropped at some step`);
  out.line(`tokens:     ${num(t.tokensSavedByProjection)} not sent over all steps by projection; ${num(t.tokensSavedByCompaction)} removed from memory by compaction`);
  if (audit.compactions.length > 0) {
    out.line('compactions:');
    const rows = audit.compactions.map((c) => [
      c.seq, c.step ?? '-', c.trigger, c.policy, `${c.items.before} → ${c.items.after}`, `${num(c.tokens.before)} → ${num(c.tokens.after)}`, c.dropped, c.placeholders,
    ]);
    for (const line of table(['SEQ', 'STEP', 'TRIGGER', 'POLICY', 'ITEMS', 'TOKENS', 'DROPPED', 'PLACEHOLDERS'], rows, ['right', 'right', 'left', 'left', 'right', 'right', 'right', 'right'])) out.line(`  ${line}`);
  }
  if (audit.approvals.length > 0) {
    const pending = audit.approvals.filter((a) => a.status === 'pending').length;
    out.line(`approvals:  ${num(audit.approvals.length)} asked, ${num(pending)} pending`);
    for (const approval of audit.approvals) out.line(`  ${describeApproval(approval)}`);
  }
  if (audit.notes.length > 0) {
    out.line('working memory edits:');
    const rows = audit.notes.map((n) => [n.seq, n.step ?? '-', n.block, `${n.previousChars} → ${n.chars}`]);
    for (const line of table(['SEQ', 'STEP', 'BLOCK', 'CHARS'], rows, ['right', 'right', 'left', 'right'])) out.line(`  ${line}`);
  }
  if (audit.recalls.length > 0) out.line(`recalls:    ${num(audit.recalls.length)} (${num(audit.recalls.reduce((n, r) => n + r.ids.length, 0))} item(s) read back)`);
  for (const r of audit.rewinds) {
    out.line(`rewind:     seq ${r.seq} back to seq ${r.toSeq}${r.steps.length ? `; steps ${r.steps.join(', ')} rewound` : ''}${r.reason ? ` (${r.reason})` : ''}`);
  }
};

/** The step a "look further" line should point at: the first that dropped items, else the first compaction's, else the last. */
export const stepWorthShowing = (audit: SessionAudit): number =>
  audit.steps.find((s) => s.fates.dropped > 0)?.step ?? audit.compactions[0]?.step ?? audit.steps.at(-1)?.step ?? 1;

const printItem = (item: ItemAudit, out: Output): void => {
  out.line(`item ${item.id} (${item.kind}): ${item.erased ? erasureNote(item.erased) : item.preview}`);
  if (item.erased) {
    out.line(`erased: at ${item.erased.at}${item.erased.by !== undefined ? ` by ${item.erased.by}` : ''}, recorded by event.erased at seq ${item.erased.seq}; reason: ${item.erased.reason}`);
  }
  out.line(`entered: seq ${item.entered.seq} (${item.entered.eventType})${item.entered.step !== undefined ? ` in step ${item.entered.step}` : ''}${item.replaces ? `, standing for ${item.replaces}` : ''}`);
  if (item.fates.length === 0) out.line('fates: never projected');
  else {
    out.line('fates:');
    for (const line of table(['STEPS', 'FATE', 'RULE'], item.fates.map((f) => [f.fromStep === f.toStep ? String(f.fromStep) : `${f.fromStep}–${f.toStep}`, f.fate, f.rule]))) out.line(`  ${line}`);
  }
  if (item.recalled) out.line(`recalled: ${item.recalled.map((r) => `seq ${r.seq}${r.step !== undefined ? ` (step ${r.step})` : ''}`).join(', ')}`);
  const left = item.left;
  if (!left) out.line('left: still in memory');
  else {
    const how = left.eventType === 'memory.compacted' ? `${left.trigger} compaction by ${left.policy}` : left.eventType;
    const into = [left.summaryId ? `summary ${left.summaryId}` : '', left.placeholderId ? `placeholder ${left.placeholderId}` : ''].filter(Boolean).join(' and ');
    out.line(`left: seq ${left.seq}${left.step !== undefined ? ` (step ${left.step})` : ''}, ${how}${into ? `; replaced by ${into}` : ''}`);
  }
};

export const auditCommand = (program: Command): Command =>
  withCommonOptions(
    program
      .command('audit')
      .description("a session's audit: steps, compactions, what was cleared and dropped; --item ID for one item's life")
      .argument('<session>', 'session id')
      .option('--item <id>', "one item's life (ids as in `memory` and `context`, e.g. 42:0)")
      .option('--from-step <n>', 'first step to report')
      .option('--to-step <n>', 'last step to report')
      .option('--prices <file|json>', 'prices per model per million tokens, e.g. \'{"gpt-4.1":{"input":2,"output":8,"cachedInput":0.5}}\''),
  ).action(async (sessionId: string, options: AuditOptions) => {
    const fromStep = intOption('--from-step', options.fromStep, 0);
    const toStep = intOption('--to-step', options.toStep, 0);
    const prices = await pricesOption(options.prices);
    await withReadLedger(options, async ({ log }, out) => {
      await requireSession(log, sessionId, options.dir);
      const bar = progressBar('audit');
      try {
        if (options.item !== undefined) {
          let item: ItemAudit;
          try {
            item = await auditItem(log, sessionId, options.item);
          } catch (error) {
            if (AuditError.isInstance(error)) throw new CliError(error.message, 2);
            throw error;
          }
          bar.finish();
          return out.json ? out.data(item) : printItem(item, out);
        }
        const audit = await auditSession(log, sessionId, {
          ...(fromStep !== undefined ? { fromStep } : {}),
          ...(toStep !== undefined ? { toStep } : {}),
          ...(prices !== undefined ? { prices } : {}),
          onProgress: (seq, head) => bar.update(seq, head),
        });
        bar.finish();
        if (out.json) return out.data(audit);
        printAuditSummary(audit, out);
        printAccountTotals(audit.account, out);
        const example = audit.items.find((i) => i.left?.eventType === 'memory.compacted') ?? audit.items[0];
        out.line('');
        out.line(`look further: context-ledger context ${sessionId} --step ${stepWorthShowing(audit)}${options.dir !== './.ledger' ? ` --dir ${options.dir}` : ''}`);
        if (example) out.line(`              context-ledger audit ${sessionId} --item ${example.id}${options.dir !== './.ledger' ? ` --dir ${options.dir}` : ''}`);
      } catch (error) {
        bar.finish();
        if (AuditError.isInstance(error)) throw new CliError(error.message, 1);
        throw error;
      }
    });
  });
