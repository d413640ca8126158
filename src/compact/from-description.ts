// compactPolicyFromDescription: a policy rebuilt from what it recorded (`describe()`), built-in or registered.
import { z } from 'zod';
import {
  ContextBudgetSchema,
  UnknownComponentError,
  checkedDescription,
  contextProjectorFromDescription,
  type ProjectorRegistry,
} from '../context/index.js';
import { ComponentDescriptionSchema, type ComponentDescription } from '../events/index.js';
import { InvalidOptionsError } from '../base/errors.js';
import type { ModelClient } from '../model/index.js';
import { LlmCompactPolicy } from './llm.js';
import { FactSummaryCompactPolicy } from './fact-summary.js';
import { RetainUserMessagesSchema } from './options.js';
import { StructuredSummaryCompactPolicy } from './structured-summary.js';
import { ProviderCompactPolicy, ProviderCompactSettingsSchema, modelClientCompactor } from './provider.js';
import type { CompactPolicy } from './types.js';

/** What a registered policy factory is given besides its recorded settings. */
export interface PolicyFactoryContext {
  /** The model a model-based policy summarises with (in a re-run: one that answers from the recording). */
  readonly summarizer?: ModelClient | undefined;
  readonly registry: ComponentRegistry;
}

/**
 * Users' own projectors, tokenizers and policies by the names they record, so a replay can rebuild them.
 * @example const registry: ComponentRegistry = { policies: { KeepLast: (settings) => new KeepLast(settings.n as number) } }
 */
export interface ComponentRegistry extends ProjectorRegistry {
  readonly policies?: Readonly<Record<string, (settings: Record<string, unknown>, context: PolicyFactoryContext) => CompactPolicy>>;
}

export interface PolicyFromDescriptionOptions {
  readonly summarizer?: ModelClient | undefined;
  readonly registry?: ComponentRegistry | undefined;
}

const TokenSettings = {
  compactAboveTokens: z.number().int().nonnegative().optional(),
  keepTokens: z.number().int().nonnegative().optional(),
  retainUserMessages: RetainUserMessagesSchema.optional(),
};

/** The recorded token settings that are present, as options. */
const tokenOptions = (s: { compactAboveTokens?: number | undefined; keepTokens?: number | undefined; retainUserMessages?: z.infer<typeof RetainUserMessagesSchema> | undefined }) => ({
  ...(s.compactAboveTokens !== undefined ? { compactAboveTokens: s.compactAboveTokens } : {}),
  ...(s.keepTokens !== undefined ? { keepTokens: s.keepTokens } : {}),
  ...(s.retainUserMessages !== undefined ? { retainUserMessages: s.retainUserMessages } : {}),
});

const FactSettings = z.object({
  maxItems: z.number().int().nonnegative().optional(),
  compactAbove: z.number().int().nonnegative().optional(),
  maxSummaryChars: z.number().int().nonnegative().optional(),
  maxRequestChars: z.number().int().nonnegative().optional(),
  maxEntries: z.number().int().nonnegative().optional(),
  ...TokenSettings,
});

const StructuredSettings = z.object({
  budget: ContextBudgetSchema.optional(),
  projector: ComponentDescriptionSchema.optional(),
  compactAbove: z.number().int().optional(),
  maxSummaryChars: z.number().int().nonnegative().optional(),
  ...TokenSettings,
});

const LlmSettings = z.object({
  model: z.string(),
  maxItems: z.number().int().nonnegative(),
  compactAbove: z.number().int().optional(),
  maxSummaryChars: z.number().int().nonnegative().optional(),
  maxItemChars: z.number().int().positive().optional(),
  systemPrompt: z.string().optional(),
  summarizerMaxTokens: z.number().int().positive().optional(),
  ...TokenSettings,
});

const settingsOf = <T extends z.ZodType>(schema: T, description: ComponentDescription): z.output<T> => {
  const parsed = schema.safeParse(description.settings);
  if (!parsed.success) {
    throw new InvalidOptionsError(`${description.name} (its recorded settings)`, [{ path: '', message: z.prettifyError(parsed.error).replace(/\n/g, '; ') }]);
  }
  return parsed.data;
};

/**
 * Rebuilds a compaction policy from its recorded description (`memory.compacted.policy`): a registered one by
 * name first, then the built-ins. `LlmCompactPolicy` needs `summarizer`. Throws `UnknownComponentError` for
 * an unknown name, and `InvalidOptionsError` (with the path) for a description that is not `{ name, settings? }`.
 * @example compactPolicyFromDescription(event.policy, { summarizer: recordedAnswers })
 */
export const compactPolicyFromDescription = (description: ComponentDescription, options: PolicyFromDescriptionOptions = {}): CompactPolicy => {
  const checked = checkedDescription('compactPolicyFromDescription', description);
  const registry = options.registry ?? {};
  const factory = Object.prototype.hasOwnProperty.call(registry.policies ?? {}, checked.name) ? registry.policies![checked.name] : undefined;
  if (factory) return factory(checked.settings, { summarizer: options.summarizer, registry });
  switch (checked.name) {
    case 'StructuredSummaryCompactPolicy': {
      const s = settingsOf(StructuredSettings, checked);
      const projector = s.projector ? contextProjectorFromDescription(s.projector, registry) : undefined;
      return new StructuredSummaryCompactPolicy(s.budget ?? {}, projector, {
        ...(s.compactAbove !== undefined ? { compactAbove: s.compactAbove } : {}),
        ...(s.maxSummaryChars !== undefined ? { maxSummaryChars: s.maxSummaryChars } : {}),
        ...tokenOptions(s),
      });
    }
    case 'FactSummaryCompactPolicy': {
      const s = settingsOf(FactSettings, checked);
      return new FactSummaryCompactPolicy({
        ...(s.maxItems !== undefined ? { maxItems: s.maxItems } : {}),
        ...(s.compactAbove !== undefined ? { compactAbove: s.compactAbove } : {}),
        ...(s.maxSummaryChars !== undefined ? { maxSummaryChars: s.maxSummaryChars } : {}),
        ...(s.maxRequestChars !== undefined ? { maxRequestChars: s.maxRequestChars } : {}),
        ...(s.maxEntries !== undefined ? { maxEntries: s.maxEntries } : {}),
        ...tokenOptions(s),
      });
    }
    case 'LlmCompactPolicy': {
      const s = settingsOf(LlmSettings, checked);
      if (!options.summarizer) {
        throw new InvalidOptionsError('compactPolicyFromDescription', [{ path: 'summarizer', message: 'LlmCompactPolicy needs a summarizer (a ModelClient) to be rebuilt' }]);
      }
      return new LlmCompactPolicy(options.summarizer, s.model, s.maxItems, {
        ...(s.compactAbove !== undefined ? { compactAbove: s.compactAbove } : {}),
        ...(s.maxSummaryChars !== undefined ? { maxSummaryChars: s.maxSummaryChars } : {}),
        ...(s.maxItemChars !== undefined ? { maxItemChars: s.maxItemChars } : {}),
        ...(s.systemPrompt !== undefined ? { systemPrompt: s.systemPrompt } : {}),
        ...(s.summarizerMaxTokens !== undefined ? { summarizerMaxTokens: s.summarizerMaxTokens } : {}),
        ...tokenOptions(s),
      });
    }
    case 'ProviderCompactPolicy': {
      // The compaction call is the summarizer's: in a re-run, one that answers each compaction from the recording.
      const s = settingsOf(ProviderCompactSettingsSchema, description);
      if (!options.summarizer) {
        throw new InvalidOptionsError('compactPolicyFromDescription', [
          { path: 'summarizer', message: `ProviderCompactPolicy needs a summarizer (a ModelClient that compacts for ${s.provider}, or a replay's recorded answers) to be rebuilt` },
        ]);
      }
      return new ProviderCompactPolicy(modelClientCompactor(options.summarizer, s.provider), {
        model: s.model,
        ...(s.maxItems !== undefined ? { maxItems: s.maxItems } : {}),
        ...(s.compactAbove !== undefined ? { compactAbove: s.compactAbove } : {}),
        ...(s.compactAboveTokens !== undefined ? { compactAboveTokens: s.compactAboveTokens } : {}),
        ...(s.keepTokens !== undefined ? { keepTokens: s.keepTokens } : {}),
        ...(s.instructions !== undefined ? { instructions: s.instructions } : {}),
      });
    }
    default:
      throw new UnknownComponentError('policy', checked.name, ' (pass it in registry.policies)');
  }
};
