// ContextBudgetSchema: the zod schema that defines a budget (the main entry exports it; the projection path
// validates budgets without loading zod: see budget.ts).
import { z } from 'zod';
import { budgetSchemaOf, useBudgetSchema } from './budget.js';

/**
 * The schema of a `ContextBudget`. Every field is optional; unknown fields are rejected so a typo
 * (`maxItem`) is an error rather than a silently ignored limit.
 * @example ContextBudgetSchema.safeParse({ maxTokens: 16_000 }).success // true
 */
export const ContextBudgetSchema = budgetSchemaOf(z);
// parseContextBudget reports its errors with this schema rather than loading a second copy of zod.
useBudgetSchema(ContextBudgetSchema);
