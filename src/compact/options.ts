// The zod schemas of the compaction policies' options (NaN, Infinity, negative sizes and typos are errors).
import { z } from 'zod';
import { objectWithMethods } from '../events/options.js';
import type { ModelClient } from '../model/index.js';

const count = z.number().int().nonnegative();
/** A character budget: 0 carries nothing. */
const size = z.number().int().nonnegative();

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
      })
      .optional(),
  })
  .superRefine((args, ctx) => {
    const above = args.options?.compactAbove;
    if (above !== undefined && above < args.maxItems) {
      ctx.addIssue({ code: 'custom', path: ['options', 'compactAbove'], message: `must be at least maxItems (${args.maxItems}), got ${above}` });
    }
  });

/** The options of `StructuredSummaryCompactPolicy` (negative `compactAbove` means "no automatic compaction"). */
export const StructuredSummaryOptionsSchema = z.strictObject({
  compactAbove: z.number().int().optional(),
  maxSummaryChars: size.optional(),
});
