// Recovery from a provider's context overflow: the tighter budget a retry is projected within.
import type { ContextBudget } from '../context/index.js';

/** How many times a step recovers from a context overflow before the run fails (agent option `overflowRetries`). */
export const DEFAULT_OVERFLOW_RETRIES = 2;

/**
 * The budget a step's retry after a context overflow is projected within: what was sent, scaled by the limit over the
 * request when the provider gave both (at most 0.9 of it), else by 0.75. With a token count of what was sent (or a
 * `maxTokens`), it bounds `maxTokens`; otherwise `maxItems`. Each retry starts from the last one, so they compound.
 * @example tighterBudgetAfterOverflow({ maxTokens: 10_000 }, overflow, projection) // { maxTokens: 7500 } without counts
 */
export const tighterBudgetAfterOverflow = (
  budget: ContextBudget,
  overflow: { readonly requestTokens?: number | undefined; readonly limitTokens?: number | undefined },
  sent: { readonly report: { readonly projectedTokens?: number | undefined; readonly projectedItemCount: number } },
): ContextBudget => {
  const { requestTokens, limitTokens } = overflow;
  const ratio = requestTokens !== undefined && limitTokens !== undefined && requestTokens > 0 ? limitTokens / requestTokens : 1;
  const factor = Math.min(0.75, 0.9 * ratio);
  const tokens = sent.report.projectedTokens ?? (budget.maxTokens !== undefined && budget.maxTokens > 0 ? budget.maxTokens : undefined);
  if (tokens !== undefined) return { ...budget, maxTokens: Math.max(1, Math.floor(Math.min(tokens, budget.maxTokens ?? Infinity) * factor)) };
  const items = Math.min(sent.report.projectedItemCount, budget.maxItems !== undefined && budget.maxItems >= 0 ? budget.maxItems : Infinity);
  return { ...budget, maxItems: Math.max(1, Math.floor(items * factor)) };
};
