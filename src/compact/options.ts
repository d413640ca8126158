// The zod schemas of the compaction policies' options (NaN, Infinity, negative sizes and typos are errors).
import { z } from 'zod';
import { objectWithMethods } from '../base/options.js';
import type { ModelClient } from '../model/index.js';

const count = z.number().int().nonnegative();
/** A character budget: 0 carries nothing. */
const size = z.number().int().nonnegative();

/** `true`, or `{ maxChars }`: keep the user's messages of the compacted span as items. */
export const RetainUserMessagesSchema = z.union([z.boolean(), z.strictObject({ maxChars: size })]);

/** The token trigger and what a policy keeps by tokens (`keepTokens` must not pass `compactAboveTokens`). */
const tokenOptions = {
  compactAboveTokens: count.optional(),
  keepTokens: count.optional(),
  retainUserMessages: RetainUserMessagesSchema.optional(),
};

const checkTokens = (o: { compactAboveTokens?: number | undefined; keepTokens?: number | undefined } | undefined, ctx: z.RefinementCtx, path: (string | number)[]): void => {
  if (o?.keepTokens !== undefined && o.compactAboveTokens !== undefined && o.keepTokens > o.compactAboveTokens) {
    ctx.addIssue({ code: 'custom', path: [...path, 'keepTokens'], message: `must be at most compactAboveTokens (${o.compactAboveTokens}), got ${o.keepTokens}` });
  }
};

/** `new LlmCompactPolicy(modelClient, model, maxItems, options)`: the arguments as one object. */
export const LlmCompactPolicyArgsSchema = z
  .object({
    modelClient: objectWithMethods<ModelClient>('a ModelClient', 'create'),
    model: z.string().min(1),
    maxItems: count,
    options: z
      .strictObject({
        compactAbove: count.optional(),
        maxSummaryChars: size.optional(),
        maxItemChars: size.optional(),
        systemPrompt: z.string().optional(),
        ...tokenOptions,
        summarizerMaxTokens: z.number().int().positive().optional(),
      })
      .optional(),
  })
  .superRefine((args, ctx) => {
    checkTokens(args.options, ctx, ['options']);
    const above = args.options?.compactAbove;
    if (above !== undefined && above < args.maxItems) {
      ctx.addIssue({ code: 'custom', path: ['options', 'compactAbove'], message: `must be at least maxItems (${args.maxItems}), got ${above}` });
    }
  });

/** The options of `StructuredSummaryCompactPolicy` (negative `compactAbove` means "no automatic compaction"). */
export const StructuredSummaryOptionsSchema = z
  .strictObject({
    compactAbove: z.number().int().optional(),
    maxSummaryChars: size.optional(),
    ...tokenOptions,
  })
  .superRefine((o, ctx) => checkTokens(o, ctx, []));

/** The options of `FactSummaryCompactPolicy`. */
export const FactSummaryOptionsSchema = z
  .strictObject({
    maxItems: count.optional(),
    compactAbove: count.optional(),
    maxSummaryChars: size.optional(),
    maxRequestChars: size.optional(),
    maxEntries: count.optional(),
    ...tokenOptions,
  })
  .superRefine((o, ctx) => {
    checkTokens(o, ctx, []);
    if (o.compactAbove !== undefined && o.maxItems !== undefined && o.compactAbove < o.maxItems) {
      ctx.addIssue({ code: 'custom', path: ['compactAbove'], message: `must be at least maxItems (${o.maxItems}), got ${o.compactAbove}` });
    }
    if (o.maxItems === undefined && o.keepTokens === undefined) {
      ctx.addIssue({ code: 'custom', path: ['maxItems'], message: 'give maxItems or keepTokens (what the policy keeps)' });
    }
  });
