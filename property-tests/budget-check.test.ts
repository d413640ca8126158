// parseContextBudget checks budgets without zod and asks the schema only for what it does not accept at once: for any
// input, its result (the budget, or the error and its issues) is the schema's.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ContextBudgetSchema, parseContextBudget } from '../src/context/index.js';

const FIELDS = [
  'maxItems',
  'maxApproxChars',
  'maxTokens',
  'pinnedPrefixItems',
  'maxRecentToolResults',
  'trimOldReasoning',
  'evictionStep',
  'reserveOutputTokens',
  'calibrate',
  'keepToolResultsOf',
  'clearToolInputs',
  'clearAtLeastTokens',
  'clearAboveTokens',
  'keepUserMessages',
] as const;

/** Values that are right for some field and wrong for others, and the edge cases of numbers. */
const value: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer({ min: -5, max: 50_000 }),
  fc.constantFrom(0, -0, 1.5, -2.5, NaN, Infinity, -Infinity, 2 ** 53, -(2 ** 53), 1e300, Number.MAX_SAFE_INTEGER),
  fc.boolean(),
  fc.constantFrom(null, undefined, '3', '', 'ten'),
  fc.array(fc.oneof(fc.string({ maxLength: 5 }), fc.integer(), fc.constant(null)), { maxLength: 3 }),
  fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
  fc.constantFrom({}, [], new Date(0), Object(3)),
);

const budgetLike: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: fc.dictionary(fc.constantFrom(...FIELDS), value, { maxKeys: 6 }) },
  { weight: 2, arbitrary: fc.dictionary(fc.oneof(fc.constantFrom(...FIELDS), fc.constantFrom('maxItem', 'budget', 'toString')), value, { maxKeys: 4 }) },
  { weight: 1, arbitrary: value },
);

type Outcome = { readonly ok: true; readonly budget: unknown } | { readonly ok: false; readonly code: unknown; readonly issues: unknown; readonly message: unknown };

const ours = (input: unknown): Outcome => {
  try {
    return { ok: true, budget: parseContextBudget(input) };
  } catch (error) {
    const { code, issues, message } = error as { code?: unknown; issues?: unknown; message?: unknown };
    return { ok: false, code, issues, message };
  }
};

describe('parseContextBudget agrees with ContextBudgetSchema', () => {
  it('accepts what the schema accepts (the same budget) and refuses the rest with the schema issues', () => {
    fc.assert(
      fc.property(budgetLike, (input) => {
        const outcome = ours(input);
        if (input === undefined) {
          expect(outcome).toEqual({ ok: true, budget: {} });
          return;
        }
        const schema = ContextBudgetSchema.safeParse(input);
        expect(outcome.ok).toBe(schema.success);
        if (outcome.ok && schema.success) {
          expect(outcome.budget).toEqual(schema.data);
          // A new object, never the caller's (the schema copies too).
          expect(outcome.budget).not.toBe(input);
        } else if (!outcome.ok) {
          expect(outcome.code).toBe('INVALID_BUDGET');
          expect((outcome.issues as unknown[]).length).toBeGreaterThan(0);
        }
      }),
    );
  });

  it('reads inherited keys as the schema does', () => {
    const inherited = Object.create({ maxTokens: 'x' }) as object;
    expect(ours(inherited).ok).toBe(false);
    expect(ContextBudgetSchema.safeParse(inherited).success).toBe(false);
    const inheritedValid = Object.assign(Object.create({ maxTokens: 10 }) as object, { maxItems: 2 });
    expect(ours(inheritedValid)).toEqual({ ok: true, budget: ContextBudgetSchema.parse(inheritedValid) });
  });
});
