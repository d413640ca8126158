// `context-ledger context SESSION --step N`: what the model saw at a step (each item's fate and rule) and what was dropped.
import type { Command } from 'commander';
import { approvalsOf, auditSession, auditUsageDrift, describeApproval, type StepDrift } from '../../replay/index.js';
import { accountLine, pricesOption } from '../accounting.js';
import { contextAtStep } from '../context-at.js';
import { intOption, requireSession, withCommonOptions, withReadLedger, type CommonOptions } from '../common.js';
import { CliError, usage } from '../errors.js';
import { erasureNotes, itemKind, itemPreview } from '../items.js';
import { num, table } from '../output.js';

interface ContextOptions extends CommonOptions {
  readonly step?: string;
  readonly prices?: string;
}

export const contextCommand = (program: Command): Command =>
  withCommonOptions(
    program
      .command('context')
      .description('what the model saw at a step: every item sent with its fate and rule, and what was dropped')
      .argument('<session>', 'session id')
      .requiredOption('--step <n>', 'the step')
      .option('--prices <file|json>', 'prices per model per million tokens (JSON file or object), to show the call\'s cost'),
  ).action(async (sessionId: string, options: ContextOptions) => {
    const driftLine = (d: StepDrift): string =>
      `usage: counted ${num(d.countedTokens)} tokens sent (${num(d.itemTokens)} items + ${num(d.overheadTokens)} overhead)` +
      (d.inputTokens === undefined
        ? '; the provider reported no input tokens'
        : `; the provider reported ${num(d.inputTokens)}: drift ${d.drift! >= 0 ? '+' : ''}${num(d.drift!)}${d.driftRatio !== undefined ? ` (${d.driftRatio >= 0 ? '+' : ''}${(d.driftRatio * 100).toFixed(1)}%)` : ''}`) +
      (d.marginTokens !== undefined ? `; calibration margin ${num(d.marginTokens)}` : '');
    const step = intOption('--step', options.step, 1);
    if (step === undefined) throw usage('--step is required');
    const prices = await pricesOption(options.prices);
    await withReadLedger(options, async ({ log }, out) => {
      await requireSession(log, sessionId, options.dir);
      const at = await contextAtStep(log, sessionId, step);
      const drift = (await auditUsageDrift(log, sessionId, { fromStep: step, toStep: step })).find((d) => d.seq === at.seq);
      const approvals = await approvalsOf(log, sessionId, { step });
      // The figures come from the audit, as the report's do: one source for every number shown.
      const audited = await auditSession(log, sessionId, { fromStep: step, toStep: step });
      const figures = audited.steps.find((s) => s.step === step);
      const placeholderFor = new Map(audited.items.filter((i) => i.replaces !== undefined).map((i) => [i.id, i.replaces!]));
      const fateShown = (e: (typeof at.entries)[number]): string => (placeholderFor.has(e.id) && e.fate.fate === 'kept' ? 'placeholder' : e.fate.fate);
      const kindShown = (e: (typeof at.entries)[number]): string => {
        const replaced = placeholderFor.get(e.id);
        return replaced !== undefined ? `placeholder of ${replaced}` : itemKind(e.item, e.id.endsWith(':summary'));
      };
      const account = (await auditSession(log, sessionId, { fromStep: step, toStep: step, ...(prices !== undefined ? { prices } : {}) })).steps.find((s) => s.step === step)?.account;
      const sentEntries = at.entries.filter((e) => e.fate.fate !== 'dropped');
      const dropped = at.entries.filter((e) => e.fate.fate === 'dropped');
      const report = at.projected.report;
      const erasures = await erasureNotes(log, sessionId, at.entries.map((e) => e.id));
      // A step that held erased content cannot match its recorded digest: that is reported, not a mismatch.
      const erasedOnly = at.identical === false && erasures.size > 0;
      const mismatch = (): void => {
        if (erasedOnly) return;
        throw new CliError(`step ${step}: re-projecting memory does not give the recording (${at.differences.join(', ')})`, 1);
      };
      if (out.json) {
        out.data({
          sessionId,
          step,
          seq: at.seq,
          identical: at.identical,
          differences: at.differences,
          model: at.request?.model ?? null,
          systemPrompt: at.prompt?.systemPrompt ?? null,
          tools: (at.prompt?.tools ?? []).map((t) => t['name']),
          budget: at.projected.budget,
          report,
          usage: drift
            ? {
                countedTokens: drift.countedTokens,
                itemTokens: drift.itemTokens,
                overheadTokens: drift.overheadTokens,
                inputTokens: drift.inputTokens ?? null,
                drift: drift.drift ?? null,
                ...(drift.marginTokens !== undefined ? { marginTokens: drift.marginTokens } : {}),
              }
            : null,
          figures: figures ? { memory: figures.memory, sent: figures.sent } : null,
          sent: sentEntries.map((e, i) => ({ id: e.id, fate: e.fate.fate, rule: e.fate.rule, ...(placeholderFor.has(e.id) ? { placeholderFor: placeholderFor.get(e.id) } : {}), item: at.sent[i] ?? e.item })),
          dropped: dropped.map((e) => ({ id: e.id, rule: e.fate.rule, item: e.item })),
          approvals,
          account: account ?? null,
          workingMemory: figures?.workingMemory ?? null,
          ...(erasures.size > 0 ? { erased: Object.fromEntries(erasures) } : {}),
        });
        if (at.identical === false) mismatch();
        return;
      }
      const budget = Object.entries(at.projected.budget).map(([k, v]) => `${k} ${typeof v === 'number' ? num(v) : String(v)}`).join(', ');
      out.line(
        `step ${step} of ${sessionId} (seq ${at.seq}): sent ${num(figures?.sent.items ?? report.projectedItemCount)} of ${num(figures?.memory.items ?? report.sourceItemCount)} items` +
          `${figures?.sent.tokens !== undefined ? `, ${num(figures.sent.tokens)} of ${num(figures.memory.tokens)} tokens` : ''}; budget: ${budget || 'none'}`,
      );
      if (at.prompt) out.line(`model ${at.request?.model ?? '?'}; system prompt: ${at.prompt.systemPrompt === undefined ? 'none' : JSON.stringify(itemPreview({ type: 'message', role: 'system', content: at.prompt.systemPrompt }, 70))}; tools: ${at.prompt.tools.map((t) => String(t['name'])).join(', ') || 'none'}`);
      if (report.notes.length > 0) out.line(`notes: ${report.notes.join('; ')}`);
      out.line(accountLine(account, prices !== undefined));
      if (drift) out.line(driftLine(drift));
      out.line(
        at.identical
          ? 'replayed from memory with the recorded projector and budget: identical to the recorded digest'
          : erasedOnly
            ? `erased content: ${erasures.size} item(s) of this step were erased, so the recorded digest cannot be reproduced`
            : `MISMATCH: re-projecting memory does not give what was recorded (${at.differences.join(', ')})`,
      );
      if (figures?.workingMemory) {
        // The blocks the prompt carried at this step (item `seq:memory`), each with its text.
        out.line('');
        out.line(`working memory (${figures.workingMemory.id}, ${figures.workingMemory.blocks.length} block(s)):`);
        for (const block of figures.workingMemory.blocks) {
          out.line(`  ${block.name} (${num(block.chars)}${block.maxChars !== undefined ? ` of ${num(block.maxChars)}` : ''} characters)${block.description !== undefined ? `: ${block.description}` : ''}`);
          for (const line of block.text === '' ? ['(empty)'] : block.text.split('\n')) out.line(`    ${line}`);
        }
      }
      out.line('');
      out.line(`sent (${sentEntries.length}):`);
      for (const line of table(['ID', 'FATE', 'RULE', 'KIND', 'AS SENT'], sentEntries.map((e, i) => [e.id, fateShown(e), e.fate.rule, kindShown(e), erasures.get(e.id) ?? itemPreview(at.sent[i] ?? e.item, 70)]))) out.line(`  ${line}`);
      out.line('');
      out.line(`dropped (${dropped.length}):`);
      if (dropped.length > 0) for (const line of table(['ID', 'RULE', 'KIND', 'TEXT'], dropped.map((e) => [e.id, e.fate.rule, kindShown(e), erasures.get(e.id) ?? itemPreview(e.item, 70)]))) out.line(`  ${line}`);
      if (approvals.length > 0) {
        out.line('');
        out.line(`approvals asked in this step (${approvals.length}):`);
        for (const approval of approvals) out.line(`  ${describeApproval(approval)}`);
      }
      if (at.identical === false) mismatch();
    });
  });
