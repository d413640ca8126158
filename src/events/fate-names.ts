// The fates of a projected item and the rules behind them, apart from the schemas: the projector reads them without zod.

export const FATES = ['kept', 'cleared', 'trimmed', 'dropped'] as const;
/**
 * `orphan` (added later, so older events never carry it): the runtime dropped a tool output sent without its call, or a
 * call without its output. `user` and `tier1-short` (added later still): kept as one of the newest `keepUserMessages`
 * user messages; kept its text because its Tier-1 placeholder would not be smaller.
 */
export const FATE_RULES = ['pinned', 'tail', 'maxItems', 'maxApproxChars', 'maxTokens', 'tier1', 'tier2', 'pairing', 'orphan', 'user', 'tier1-short'] as const;
