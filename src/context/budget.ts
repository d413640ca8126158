// ContextBudget: the zod schema that defines it, parsing with a clear error, and normalisation for the projectors.
import { z } from 'zod';
import { ContextLedgerError } from '../errors.js';
import type { EventIssue } from '../events/index.js';

/**
 * The schema of a {@link ContextBudget}. Every field is optional; unknown fields are rejected so a typo
 * (`maxItem`) is an error rather than a silently ignored limit.
 * @example ContextBudgetSchema.safeParse({ maxTokens: 16_000 }).success // true
 */
export const ContextBudgetSchema = z.strictObject({
  /** Most items to send. Absent or negative: unlimited; 0: nothing. Never exceeded. */
  maxItems: z.number().int().optional(),
  /** Most approximate characters (`approxChars`) to send. Absent or negative: unlimited; 0: nothing. */
  maxApproxChars: z.number().int().optional(),
  /** Most tokens (`itemTokenCount` with the projector's tokenizer) to send. Absent or negative: unlimited; 0: nothing. */
  maxTokens: z.number().int().optional(),
  /** How many leading items are pinned (kept before the tail competes for the budget). Default 0. */
  pinnedPrefixItems: z.number().int().nonnegative().optional(),
  /** Tier-1: how many of the newest tool results keep their text (TypeAware only). Absent or negative: Tier-1 off. */
  maxRecentToolResults: z.number().int().optional(),
  /** Tier-2: clear reasoning before the last user message (TypeAware only). Default false. */
  trimOldReasoning: z.boolean().optional(),
  /** Cache-stable eviction granularity: the tail start and Tier-1 move by multiples of this. Default 1. */
  evictionStep: z.number().int().positive().optional(),
  /** Tokens kept free for the model's answer: subtracted from `maxTokens`. Absent: 0. Not negative, and below a non-negative `maxTokens`. */
  reserveOutputTokens: z.number().int().nonnegative().optional(),
  /** The runtime keeps a safety margin learned from the drift between its counts and the provider's `usage.inputTokens`. Default false. */
  calibrate: z.boolean().optional(),
  /** Tier-1: tools whose results are never cleared (by the name joined from the call). */
  keepToolResultsOf: z.array(z.string()).optional(),
  /** Tier-1: a cleared result's call also loses its arguments (`'{}'`, or `{}` for a `tool_use` input). Default false. */
  clearToolInputs: z.boolean().optional(),
  /** Tier-1 clears only when clearing gains at least this many tokens; otherwise it clears nothing. Absent or negative: off. */
  clearAtLeastTokens: z.number().int().optional(),
  /** Tier-1 runs only while the source items hold more than this many tokens. Absent or negative: off. */
  clearAboveTokens: z.number().int().optional(),
  /** The newest N user messages are kept wherever they stand (rule `user`), counted in the budget, before the tail. Default 0. */
  keepUserMessages: z.number().int().nonnegative().optional(),
}).superRefine((budget, context) => {
  // A reserve that leaves nothing of maxTokens for the request is a mistake, not a budget (0 reserves nothing).
  const { maxTokens, reserveOutputTokens } = budget;
  if (maxTokens !== undefined && maxTokens >= 0 && reserveOutputTokens !== undefined && reserveOutputTokens > 0 && reserveOutputTokens >= maxTokens) {
    context.addIssue({
      code: 'custom',
      path: ['reserveOutputTokens'],
      message: `must be below maxTokens (${maxTokens}), got ${reserveOutputTokens}: it would leave nothing of maxTokens for the request`,
    });
  }
});

/**
 * A context budget: plain object, every field optional.
 * @example const budget: ContextBudget = { maxItems: 40, pinnedPrefixItems: 1, maxRecentToolResults: 5 };
 */
export type ContextBudget = z.infer<typeof ContextBudgetSchema>;

const pathOf = (path: readonly PropertyKey[]): string => path.map((p) => (typeof p === 'symbol' ? p.toString() : String(p))).join('.');

const describeIssue = (issue: z.core.$ZodIssue): EventIssue[] =>
  issue.code === 'unrecognized_keys'
    ? issue.keys.map((key) => ({ path: pathOf([...issue.path, key]), message: 'unknown budget option' }))
    : [{ path: pathOf(issue.path), message: issue.message.replace(/^Invalid input: /, '') }];

/**
 * A context budget does not match its schema ({@link ContextBudgetSchema}); `issues` name each offending field.
 * @example try { parseContextBudget(input) } catch (e) { if (InvalidBudgetError.isInstance(e)) console.error(e.issues) }
 */
export class InvalidBudgetError extends ContextLedgerError {
  static override readonly code = 'INVALID_BUDGET';
  readonly issues: readonly EventIssue[];
  constructor(issues: readonly EventIssue[]) {
    super(`invalid context budget: ${issues.map((i) => `${i.path === '' ? '(root)' : i.path}: ${i.message}`).join('; ')}`);
    this.issues = issues;
  }
}
/** @deprecated use InvalidBudgetError.isInstance */ export const isInvalidBudgetError = (e: unknown): e is InvalidBudgetError => InvalidBudgetError.isInstance(e);

/**
 * Validates a budget (`undefined` is the empty budget) and returns it as a new object.
 * @example parseContextBudget({ maxItems: 'ten' }) // throws InvalidBudgetError: "invalid context budget: maxItems: expected number, received string"
 */
export const parseContextBudget = (input: unknown): ContextBudget => {
  if (input === undefined) return {};
  const result = ContextBudgetSchema.safeParse(input);
  if (result.success) return result.data;
  throw new InvalidBudgetError(result.error.issues.flatMap(describeIssue));
};

/** A budget with defaults applied: `Infinity` for an unlimited limit, `undefined` for an off tier. */
export interface NormalizedBudget {
  readonly maxItems: number;
  readonly maxApproxChars: number;
  readonly maxTokens: number;
  readonly pinnedPrefixItems: number;
  readonly maxRecentToolResults: number | undefined;
  readonly trimOldReasoning: boolean;
  readonly evictionStep: number;
  readonly keepToolResultsOf: ReadonlySet<string> | undefined;
  readonly clearToolInputs: boolean;
  readonly clearAtLeastTokens: number | undefined;
  readonly clearAboveTokens: number | undefined;
  readonly keepUserMessages: number;
}

/**
 * A budget limit as docs/projection.md reads it: absent or negative sets none (`undefined`); 0 and up is the limit (0: nothing).
 * @example budgetLimit(-1) // undefined; budgetLimit(0) // 0
 */
export const budgetLimit = (value: number | undefined): number | undefined => (value === undefined || value < 0 ? undefined : value);

const limit = (value: number | undefined): number => budgetLimit(value) ?? Infinity;

/**
 * The tokens left for items under `maxTokens` once `reserveOutputTokens` (and `overheadTokens`, what the request
 * carries besides its items) are taken off: `Infinity` when `maxTokens` sets no limit, 0 when it is 0, and at least 1
 * otherwise (so the first pinned item and the newest item, which are always sent, still are).
 * @example itemTokenLimit(16_000, 4_000, 1_200) // 10_800
 */
export const itemTokenLimit = (maxTokens: number | undefined, reserveOutputTokens?: number, overheadTokens = 0): number => {
  const max = budgetLimit(maxTokens);
  if (max === undefined) return Infinity;
  if (max === 0) return 0;
  return Math.max(1, max - (budgetLimit(reserveOutputTokens) ?? 0) - Math.max(0, overheadTokens));
};

/** Validates and applies the defaults of docs/projection.md ("negative or absent limit means unlimited; 0 means empty"). */
export const normalizeBudget = (input: unknown): NormalizedBudget => {
  const budget = parseContextBudget(input);
  return {
    maxItems: limit(budget.maxItems),
    maxApproxChars: limit(budget.maxApproxChars),
    maxTokens: itemTokenLimit(budget.maxTokens, budget.reserveOutputTokens),
    pinnedPrefixItems: budget.pinnedPrefixItems ?? 0,
    maxRecentToolResults: budgetLimit(budget.maxRecentToolResults),
    trimOldReasoning: budget.trimOldReasoning ?? false,
    evictionStep: budget.evictionStep ?? 1,
    keepToolResultsOf: budget.keepToolResultsOf !== undefined && budget.keepToolResultsOf.length > 0 ? new Set(budget.keepToolResultsOf) : undefined,
    clearToolInputs: budget.clearToolInputs ?? false,
    clearAtLeastTokens: budgetLimit(budget.clearAtLeastTokens),
    clearAboveTokens: budgetLimit(budget.clearAboveTokens),
    keepUserMessages: budget.keepUserMessages ?? 0,
  };
};
