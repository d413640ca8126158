// ContextBudget: validation with a clear error (zod only for the error, and loaded then), and normalisation for the projectors.
import { createRequire } from 'node:module';
import type { z } from 'zod';
import { ContextLedgerError } from '../base/errors.js';
import type { EventIssue } from '../events/errors.js';

/**
 * The budget schema built with a given zod (the ESM zod of the main entry, or the one loaded for an error when only
 * `context-ledger/context` is loaded): one definition for both.
 */
export const budgetSchemaOf = (zod: typeof z) =>
  zod.strictObject({
    /** Most items to send. Absent or negative: unlimited; 0: nothing. Never exceeded. */
    maxItems: zod.number().int().optional(),
    /** Most approximate characters (`approxChars`) to send. Absent or negative: unlimited; 0: nothing. */
    maxApproxChars: zod.number().int().optional(),
    /** Most tokens (`itemTokenCount` with the projector's tokenizer) to send. Absent or negative: unlimited; 0: nothing. */
    maxTokens: zod.number().int().optional(),
    /** How many leading items are pinned (kept before the tail competes for the budget). Default 0. */
    pinnedPrefixItems: zod.number().int().nonnegative().optional(),
    /** Tier-1: how many of the newest tool results keep their text (TypeAware only). Absent or negative: Tier-1 off. */
    maxRecentToolResults: zod.number().int().optional(),
    /** Tier-2: clear reasoning before the last user message (TypeAware only). Default false. */
    trimOldReasoning: zod.boolean().optional(),
    /** Cache-stable eviction granularity: the tail start and Tier-1 move by multiples of this. Default 1. */
    evictionStep: zod.number().int().positive().optional(),
    /** Tokens kept free for the model's answer: subtracted from `maxTokens`. Absent: 0. Not negative, and below a non-negative `maxTokens`. */
    reserveOutputTokens: zod.number().int().nonnegative().optional(),
    /** The runtime keeps a safety margin learned from the drift between its counts and the provider's `usage.inputTokens`. Default false. */
    calibrate: zod.boolean().optional(),
    /** Tier-1: tools whose results are never cleared (by the name joined from the call). */
    keepToolResultsOf: zod.array(zod.string()).optional(),
    /** Tier-1: a cleared result's call also loses its arguments (`'{}'`, or `{}` for a `tool_use` input). Default false. */
    clearToolInputs: zod.boolean().optional(),
    /** Tier-1 clears only when clearing gains at least this many tokens; otherwise it clears nothing. Absent or negative: off. */
    clearAtLeastTokens: zod.number().int().optional(),
    /** Tier-1 runs only while the source items hold more than this many tokens. Absent or negative: off. */
    clearAboveTokens: zod.number().int().optional(),
    /** The newest N user messages are kept wherever they stand (rule `user`), counted in the budget, before the tail. Default 0. */
    keepUserMessages: zod.number().int().nonnegative().optional(),
  }).superRefine((budget, context) => {
    // A reserve that leaves nothing of maxTokens for the request is a mistake, not a budget (0 reserves nothing).
    if (reservesAllOf(budget)) {
      context.addIssue({
        code: 'custom',
        path: ['reserveOutputTokens'],
        message: `must be below maxTokens (${budget.maxTokens}), got ${budget.reserveOutputTokens}: it would leave nothing of maxTokens for the request`,
      });
    }
  });

/** Whether a positive `reserveOutputTokens` takes all of a non-negative `maxTokens`. */
const reservesAllOf = ({ maxTokens, reserveOutputTokens }: { readonly maxTokens?: number | undefined; readonly reserveOutputTokens?: number | undefined }): boolean =>
  maxTokens !== undefined && maxTokens >= 0 && reserveOutputTokens !== undefined && reserveOutputTokens > 0 && reserveOutputTokens >= maxTokens;

type BudgetSchema = ReturnType<typeof budgetSchemaOf>;

/**
 * A context budget: plain object, every field optional.
 * @example const budget: ContextBudget = { maxItems: 40, pinnedPrefixItems: 1, maxRecentToolResults: 5 };
 */
export type ContextBudget = z.infer<BudgetSchema>;
let budgetSchema: BudgetSchema | undefined;

/** The schema parseContextBudget reports errors with (registered by budget-schema.ts when the main entry loads it). */
export const useBudgetSchema = (schema: BudgetSchema): void => {
  budgetSchema ??= schema;
};

/**
 * The schema, loading zod (a peer dependency) on first use when no module registered one: only a budget that the
 * check below does not accept at once gets here, so the projection path loads zod only to explain an error.
 */
const schemaForErrors = (): BudgetSchema => {
  if (budgetSchema === undefined) {
    const zod = createRequire(import.meta.url)('zod') as { z: typeof z };
    budgetSchema = budgetSchemaOf(zod.z);
  }
  return budgetSchema;
};

const pathOf = (path: readonly PropertyKey[]): string => path.map((p) => (typeof p === 'symbol' ? p.toString() : String(p))).join('.');

const describeIssue = (issue: z.core.$ZodIssue): EventIssue[] =>
  issue.code === 'unrecognized_keys'
    ? issue.keys.map((key) => ({ path: pathOf([...issue.path, key]), message: 'unknown budget option' }))
    : [{ path: pathOf(issue.path), message: issue.message.replace(/^Invalid input: /, '') }];

/**
 * A budget that does not match `ContextBudgetSchema`; `issues` name each offending field.
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
  const accepted = acceptedBudget(input);
  if (accepted !== undefined) return accepted;
  const result = schemaForErrors().safeParse(input);
  if (result.success) return result.data;
  throw new InvalidBudgetError(result.error.issues.flatMap(describeIssue));
};

// What each field must be, as the schema says (a check that accepts only what the schema accepts).
const INTEGER = 0;
const NON_NEGATIVE = 1;
const POSITIVE = 2;
const BOOLEAN = 3;
const STRINGS = 4;
const FIELD_KINDS: ReadonlyMap<string, number> = new Map([
  ['maxItems', INTEGER],
  ['maxApproxChars', INTEGER],
  ['maxTokens', INTEGER],
  ['pinnedPrefixItems', NON_NEGATIVE],
  ['maxRecentToolResults', INTEGER],
  ['trimOldReasoning', BOOLEAN],
  ['evictionStep', POSITIVE],
  ['reserveOutputTokens', NON_NEGATIVE],
  ['calibrate', BOOLEAN],
  ['keepToolResultsOf', STRINGS],
  ['clearToolInputs', BOOLEAN],
  ['clearAtLeastTokens', INTEGER],
  ['clearAboveTokens', INTEGER],
  ['keepUserMessages', NON_NEGATIVE],
]);

const fieldAccepts = (kind: number, value: unknown): boolean => {
  switch (kind) {
    case BOOLEAN:
      return typeof value === 'boolean';
    case STRINGS:
      if (!Array.isArray(value)) return false;
      for (let i = 0; i < value.length; i++) if (typeof value[i] !== 'string') return false;
      return true;
    default:
      // z.number().int(): a safe integer (NaN, infinities and unsafe integers are refused).
      if (typeof value !== 'number' || !Number.isSafeInteger(value)) return false;
      return kind === INTEGER || (kind === NON_NEGATIVE ? value >= 0 : value > 0);
  }
};

/**
 * The budget as the schema would return it, when every key (own or inherited, as the schema reads them) is a
 * field and every value is of the field's kind; undefined for anything else, which the schema then decides (and
 * explains). Keeps zod off the projection path: a projection validates its budget on every call.
 */
const acceptedBudget = (input: unknown): ContextBudget | undefined => {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return undefined;
  const record = input as Record<string, unknown>;
  for (const key in record) if (!FIELD_KINDS.has(key)) return undefined;
  const budget: Record<string, unknown> = {};
  for (const [key, kind] of FIELD_KINDS) {
    const value = record[key];
    if (value === undefined) continue;
    if (!fieldAccepts(kind, value)) return undefined;
    budget[key] = kind === STRINGS ? (value as string[]).slice() : value;
  }
  if (reservesAllOf(budget as ContextBudget)) return undefined;
  return budget as ContextBudget;
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
