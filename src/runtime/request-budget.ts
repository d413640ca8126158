// Projecting for a whole request: the items within what maxTokens leaves after the request's overhead, the per-message framing of the items sent, and the count providers are compared with.
import {
  effectiveBudget,
  itemTokenCount,
  projectForModel,
  REQUEST_PRIMING_TOKENS,
  type ContextBudget,
  type ContextProjection,
  type ContextProjector,
  type RequestAllowance,
  type Tokenizer,
} from '../context/index.js';
import { itemTokenLimit, withReportFields } from '../context/index.js';
import { approxChars, type MemoryItem } from '../items/index.js';
import { workingMemoryIndex, type MemoryState } from '../memory/index.js';
import { itemFramingTokens } from '../providers/request-tokens.js';

/** The tokenizer a projector counts with (its own, else approx-like fallbacks are the caller's business). */
const framingOf = (items: readonly MemoryItem[], tokenizer: Tokenizer): number => {
  let total = 0;
  for (const item of items) total += itemFramingTokens(item, tokenizer);
  return total;
};

const MAX_PASSES = 6;

/** Options of {@link projectRequest}. */
export interface ProjectRequestOptions {
  /**
   * The index among the items of the working-memory item (`workingMemoryIndex`): it is sent whatever the limits, and
   * its tokens (text and framing) are counted like the system prompt's, taken off `maxTokens` before the other items
   * compete. Absent (or -1): every item competes (a recording made before this rule projects so again).
   */
  readonly workingMemoryIndex?: number | undefined;
}

/**
 * The options a recorded whole-request projection is re-projected with: the working-memory item sent as overhead when
 * the recording says it was (`context.projected.request.workingMemoryTokens`, v4), as it competed otherwise.
 * @example projectRequest(projector, items, budget, event.request, tokenizer, recordedRequestOptions(event.request, state))
 */
export const recordedRequestOptions = (request: { readonly workingMemoryTokens?: number | undefined }, state: MemoryState): ProjectRequestOptions =>
  request.workingMemoryTokens !== undefined ? { workingMemoryIndex: workingMemoryIndex(state) } : {};

/** A whole-request projection, and the tokens of the working-memory item counted as overhead when it was sent so. */
export type RequestProjection = ContextProjection & { readonly workingMemoryTokens?: number };

/**
 * Projects for a whole request: `maxTokens` bounds the items, the request's overhead (`allowance.overheadTokens`:
 * system prompt, tools, priming), the per-message framing of the items sent ({@link itemFramingTokens}) and the
 * margin, less `reserveOutputTokens`. The projector is given {@link effectiveBudget}; when the framing of what it
 * sent does not fit, it projects again with the excess taken off too (a few passes at most). The report gets
 * `overheadTokens` (overhead plus framing of the items sent); when the token limit dropped something, the note
 * `request overhead: …` follows the limits' notes, and the `maxTokens applied` note names the configured `maxTokens`. Pure and deterministic: replay calls it with the recorded allowance.
 * @example projectRequest(projector, memory.getItems(), { maxTokens: 16_000, reserveOutputTokens: 2_000 }, { overheadTokens: 900 }, tokenizer)
 */
export const projectRequest = (
  projector: ContextProjector,
  items: readonly MemoryItem[],
  budget: ContextBudget,
  allowance: RequestAllowance,
  tokenizer: Tokenizer,
  options: ProjectRequestOptions = {},
): RequestProjection => {
  const index = options.workingMemoryIndex ?? -1;
  // 0 means nothing: an empty limit sends no item, the working memory neither.
  const empty = budget.maxItems === 0 || budget.maxApproxChars === 0 || budget.maxTokens === 0;
  if (index < 0 || index >= items.length || empty) return projectItemsOfRequest(projector, items, budget, allowance, tokenizer, 0);
  return projectWithWorkingMemory(projector, items, budget, allowance, tokenizer, index);
};

/**
 * The working-memory item sent whatever the limits, counted like the system prompt: the other items are projected
 * (one item fewer under `maxItems`, the pinned prefix less it) within what `maxTokens` leaves once its tokens and
 * framing are taken off too; it goes back in at its place, `kept` by rule `pinned`, its tokens in `projectedTokens`
 * and its framing in `overheadTokens`.
 */
const projectWithWorkingMemory = (
  projector: ContextProjector,
  items: readonly MemoryItem[],
  budget: ContextBudget,
  allowance: RequestAllowance,
  tokenizer: Tokenizer,
  index: number,
): RequestProjection => {
  const block = items[index]!;
  const rest = [...items.slice(0, index), ...items.slice(index + 1)];
  const tokens = itemTokenCount(block, tokenizer);
  const framing = itemFramingTokens(block, tokenizer);
  const pinned = budget.pinnedPrefixItems ?? 0;
  const inner: ContextBudget = {
    ...budget,
    ...(pinned > index ? { pinnedPrefixItems: pinned - 1 } : {}),
    ...(budget.maxItems !== undefined && budget.maxItems > 0 ? { maxItems: budget.maxItems - 1 } : {}),
  };
  const projected = projectItemsOfRequest(projector, rest, inner, { ...allowance, overheadTokens: allowance.overheadTokens + tokens + framing }, tokenizer, tokens + framing);
  const { report } = projected;
  let position = 0;
  for (const fate of report.fates) if (fate.index < index && fate.fate !== 'dropped') position += 1;
  const chars = approxChars(block);
  return {
    items: [...projected.items.slice(0, position), block, ...projected.items.slice(position)],
    report: {
      ...report,
      sourceItemCount: report.sourceItemCount + 1,
      projectedItemCount: report.projectedItemCount + 1,
      sourceApproxChars: report.sourceApproxChars + chars,
      projectedApproxChars: report.projectedApproxChars + chars,
      ...(report.sourceTokens !== undefined ? { sourceTokens: report.sourceTokens + tokens } : {}),
      ...(report.projectedTokens !== undefined ? { projectedTokens: report.projectedTokens + tokens } : {}),
      // The block's text is an item's (projectedTokens); its framing stays in the overhead, as every item's does.
      ...(report.overheadTokens !== undefined ? { overheadTokens: report.overheadTokens - tokens } : {}),
      fates: [
        ...report.fates.filter((f) => f.index < index),
        { index, fate: 'kept', rule: 'pinned' },
        ...report.fates.filter((f) => f.index >= index).map((f) => ({ ...f, index: f.index + 1 })),
      ],
    },
    workingMemoryTokens: tokens + framing,
  };
};

/** {@link projectRequest} of items that all compete; `workingMemoryTokens` (in `allowance.overheadTokens`) named apart in the note. */
const projectItemsOfRequest = (
  projector: ContextProjector,
  items: readonly MemoryItem[],
  budget: ContextBudget,
  allowance: RequestAllowance,
  tokenizer: Tokenizer,
  workingMemoryTokens: number,
): ContextProjection => {
  const base = effectiveBudget(budget, allowance);
  const limited = base.maxTokens !== undefined && base.maxTokens >= 0;
  const whole = limited ? itemTokenLimit(budget.maxTokens, budget.reserveOutputTokens) - Math.max(0, allowance.marginTokens ?? 0) : Infinity;
  let itemLimit = base.maxTokens ?? -1;
  let projection = projectForModel(projector, items, base);
  let framing = framingOf(projection.items, tokenizer);
  for (let pass = 1; limited && pass < MAX_PASSES && itemLimit > 1; pass++) {
    const excess = (projection.report.projectedTokens ?? 0) + allowance.overheadTokens + framing - whole;
    if (excess <= 0) break;
    itemLimit = Math.max(1, itemLimit - excess);
    projection = projectForModel(projector, items, { ...base, maxTokens: itemLimit });
    framing = framingOf(projection.items, tokenizer);
  }
  const overheadTokens = allowance.overheadTokens + framing;
  const configured = budget.maxTokens;
  const notes = projection.report.notes.map((note) => (note.startsWith('maxTokens applied: ') && configured !== undefined ? `maxTokens applied: ${configured}` : note));
  if (limited && projection.report.tokenLimitApplied === true) {
    const reserve = Math.max(0, budget.reserveOutputTokens ?? 0);
    const margin = Math.max(0, allowance.marginTokens ?? 0);
    const prompt = allowance.overheadTokens - workingMemoryTokens;
    notes.push(
      `request overhead: ${overheadTokens} token(s) (${prompt} prompt and tools, ${workingMemoryTokens > 0 ? `${workingMemoryTokens} working memory, ` : ''}${framing} framing)` +
        `${reserve > 0 ? `, ${reserve} reserved for output` : ''}${margin > 0 ? `, ${margin} calibration margin` : ''}; items had ${itemLimit} of maxTokens ${String(configured)}`,
    );
  }
  return { items: projection.items, report: withReportFields(projection.report, { notes, overheadTokens }) };
};
