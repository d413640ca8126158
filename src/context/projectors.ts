// ContextProjector: the extension point, its two built-in implementations, and rebuilding one from its description.
import { InvalidOptionsError, UnknownComponentError } from '../base/errors.js';
import type { ComponentDescription } from '../events/index.js';
import type { MemoryItem } from '../items/index.js';
import type { ContextBudget } from './budget.js';
import { projectContext } from './project.js';
import type { ContextProjection } from './project.js';
import { approxTokenizer, tokenizerFromName } from './measure/tokenizer.js';
import type { Tokenizer } from './measure/tokenizer.js';

export { UnknownComponentError, isUnknownComponentError } from '../base/errors.js';

/**
 * Decides what the model is sent this turn. Must be pure and synchronous, must not mutate `items`, and should
 * satisfy the laws checked by `checkProjectorLaws` from `context-ledger/testing`.
 * @example const projection = projector.project(memory.getItems(), { maxTokens: 16_000 });
 */
export interface ContextProjector {
  project(items: readonly MemoryItem[], budget?: ContextBudget): ContextProjection;
  /** Name and settings (including the tokenizer's name), recorded so a replay can rebuild the projector. */
  describe(): ComponentDescription;
  /**
   * The tokenizer the projector counts with (the built-in projectors have one). The runtime, the bridges, replay and
   * the laws count the request's overhead, the orphan rule and the report with it; without it, with the tokenizer
   * `describe().settings.tokenizer` names ({@link projectorTokenizer}).
   */
  readonly tokenizer?: Tokenizer;
}

const isTokenizer = (value: unknown): value is Tokenizer =>
  value !== null && typeof value === 'object' && typeof (value as Tokenizer).name === 'string' && (value as Tokenizer).name !== '' && typeof (value as Tokenizer).count === 'function';

/**
 * The tokenizer a projector counts with: its `tokenizer` member, else (unless `named` is false) the one its
 * description names (`settings.tokenizer`, through {@link tokenizerFromName}); undefined when neither gives one.
 * The one place the library asks a projector this.
 * @example const tokenizer = projectorTokenizer(agent.projector) ?? approxTokenizer;
 */
export const projectorTokenizer = (projector: ContextProjector, { named = true }: { readonly named?: boolean } = {}): Tokenizer | undefined => {
  const own: unknown = (projector as { readonly tokenizer?: unknown }).tokenizer;
  if (isTokenizer(own)) return own;
  if (!named) return undefined;
  const name = projector.describe().settings['tokenizer'];
  return typeof name === 'string' ? tokenizerFromName(name) : undefined;
};

/** A tokenizer as a projector describes it: its name, and the library version that counts when it has one. */
export const tokenizerSettings = (tokenizer: Tokenizer): Record<string, unknown> => ({
  tokenizer: tokenizer.name,
  ...(tokenizer.library !== undefined ? { tokenizerLibrary: tokenizer.library } : {}),
});

export interface ContextProjectorOptions {
  /** Counts tokens for `maxTokens` and the report. Default {@link approxTokenizer}. */
  readonly tokenizer?: Tokenizer;
}

/**
 * Keeps the pinned prefix and the most recent tail under `maxItems`, then `maxApproxChars`, then `maxTokens`,
 * never separating a tool call from its output. Ignores the Tier-1/Tier-2 options.
 * @example new DefaultContextProjector().project(items, { maxItems: 20, pinnedPrefixItems: 1 })
 */
export class DefaultContextProjector implements ContextProjector {
  readonly tokenizer: Tokenizer;
  constructor(options: ContextProjectorOptions = {}) {
    this.tokenizer = options.tokenizer ?? approxTokenizer;
  }
  project(items: readonly MemoryItem[], budget?: ContextBudget): ContextProjection {
    return projectContext(items, budget, { tokenizer: this.tokenizer });
  }
  describe(): ComponentDescription {
    return { name: 'DefaultContextProjector', settings: tokenizerSettings(this.tokenizer) };
  }
}

/**
 * DefaultContextProjector plus Tier-1 (`maxRecentToolResults`: old tool results become placeholders) and
 * Tier-2 (`trimOldReasoning`: reasoning before the last user message is cleared), applied to copies before
 * the limits. With neither tier configured it is exactly DefaultContextProjector.
 * @example new TypeAwareContextProjector({ tokenizer: openAiTokenizer() }).project(items, { maxTokens: 16_000, maxRecentToolResults: 5 })
 */
export class TypeAwareContextProjector implements ContextProjector {
  readonly tokenizer: Tokenizer;
  /** The Tier-1 rules: 2 (default) keeps a result shorter than its placeholder and notes how many kept their text; 1 is the rules of older recordings. */
  readonly tier1Rules: 1 | 2;
  constructor(options: TypeAwareContextProjectorOptions = {}) {
    this.tokenizer = options.tokenizer ?? approxTokenizer;
    this.tier1Rules = options.tier1Rules ?? 2;
  }
  project(items: readonly MemoryItem[], budget?: ContextBudget): ContextProjection {
    return projectContext(items, budget, { tokenizer: this.tokenizer, tiers: true, legacyTier1: this.tier1Rules === 1 });
  }
  describe(): ComponentDescription {
    return { name: 'TypeAwareContextProjector', settings: { ...tokenizerSettings(this.tokenizer), ...(this.tier1Rules === 2 ? { tier1Rules: 2 } : {}) } };
  }
}

export interface TypeAwareContextProjectorOptions extends ContextProjectorOptions {
  /**
   * 2 (default): a tool result whose placeholder would not be smaller keeps its text (rule `tier1-short`), and the note
   * gives how many results kept their text. 1: the rules before that (recorded without `tier1Rules`), for replay.
   */
  readonly tier1Rules?: 1 | 2;
}

/**
 * Users' own components, by the name they record, so a replay can rebuild them. A projector factory gets the
 * recorded settings and the tokenizer they name (already rebuilt).
 * @example const registry: ComponentRegistry = { tokenizers: { words }, projectors: { MyProjector: (settings, tokenizer) => new MyProjector(tokenizer) } }
 */
export interface ProjectorRegistry {
  readonly projectors?: Readonly<Record<string, (settings: Record<string, unknown>, tokenizer: Tokenizer) => ContextProjector>>;
  readonly tokenizers?: Readonly<Record<string, Tokenizer>>;
}


/**
 * The tokenizer a recorded name stands for: the registry's first, then the built-ins. Throws {@link UnknownComponentError}.
 * @example tokenizerFromDescription('openai:o200k_base')
 */
export const tokenizerFromDescription = (name: unknown, registry: ProjectorRegistry = {}): Tokenizer => {
  if (name === undefined) return approxTokenizer;
  const found =
    typeof name === 'string'
      ? (Object.prototype.hasOwnProperty.call(registry.tokenizers ?? {}, name) ? registry.tokenizers![name] : undefined) ?? tokenizerFromName(name)
      : undefined;
  if (!found) throw new UnknownComponentError('tokenizer', name, ' (pass it in registry.tokenizers)');
  return found;
};

/**
 * A component description as recorded (`{ name, settings }`, settings `{}` when absent), checked: anything else (null,
 * no name, settings that are not an object) is an {@link InvalidOptionsError} for `optionsOf`, with the path of what is wrong.
 */
export const checkedDescription = (optionsOf: string, description: unknown): ComponentDescription => {
  // Checked by hand, as ComponentDescriptionSchema would (the projection path loads no zod: context-ledger/context).
  const kind = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value);
  if (description === null || typeof description !== 'object' || Array.isArray(description)) {
    throw new InvalidOptionsError(optionsOf, [{ path: '', message: `a component description must be an object { name, settings }, got ${kind(description)}` }]);
  }
  const { name, settings } = description as { name?: unknown; settings?: unknown };
  if (typeof name !== 'string') throw new InvalidOptionsError(optionsOf, [{ path: 'name', message: `expected string, received ${kind(name)}` }]);
  if (name.length < 1) throw new InvalidOptionsError(optionsOf, [{ path: 'name', message: 'too small: expected string to have >=1 characters' }]);
  if (settings !== undefined && (settings === null || typeof settings !== 'object' || Array.isArray(settings))) {
    throw new InvalidOptionsError(optionsOf, [{ path: 'settings', message: `expected record, received ${kind(settings)}` }]);
  }
  return { name, settings: (settings ?? {}) as Record<string, unknown> };
};

/**
 * Rebuilds a projector from its `describe()` output (as recorded in `context.projected`): a registered one
 * by name first, then the built-ins. Throws {@link UnknownComponentError} for an unknown projector or tokenizer name,
 * and {@link InvalidOptionsError} (with the path) for a description that is not `{ name, settings? }`.
 * @example contextProjectorFromDescription({ name: 'TypeAwareContextProjector', settings: { tokenizer: 'openai:o200k_base' } })
 */
export const contextProjectorFromDescription = (description: ComponentDescription, registry: ProjectorRegistry = {}): ContextProjector => {
  const checked = checkedDescription('contextProjectorFromDescription', description);
  const tokenizer = tokenizerFromDescription(checked.settings['tokenizer'], registry);
  const factory = Object.prototype.hasOwnProperty.call(registry.projectors ?? {}, checked.name) ? registry.projectors![checked.name] : undefined;
  if (factory) return factory(checked.settings, tokenizer);
  switch (checked.name) {
    case 'DefaultContextProjector':
      return new DefaultContextProjector({ tokenizer });
    case 'TypeAwareContextProjector':
      // Recorded without `tier1Rules`: Tier-1 as it was then.
      return new TypeAwareContextProjector({ tokenizer, tier1Rules: checked.settings['tier1Rules'] === 2 ? 2 : 1 });
    default:
      throw new UnknownComponentError('projector', checked.name, ' (pass it in registry.projectors)');
  }
};
