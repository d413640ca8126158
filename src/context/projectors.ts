// ContextProjector: the extension point, its two built-in implementations, and rebuilding one from its description.
import { UnknownComponentError } from '../errors.js';
import type { ComponentDescription } from '../events/index.js';
import type { MemoryItem } from '../items/index.js';
import type { ContextBudget } from './budget.js';
import { projectContext } from './project.js';
import type { ContextProjection } from './project.js';
import { approxTokenizer, tokenizerFromName } from './tokenizer.js';
import type { Tokenizer } from './tokenizer.js';

/**
 * Decides what the model is sent this turn. Must be pure and synchronous, must not mutate `items`, and should
 * satisfy the laws checked by `checkProjectorLaws` from `context-ledger/testing`.
 * @example const projection = projector.project(memory.getItems(), { maxTokens: 16_000 });
 */
export interface ContextProjector {
  project(items: readonly MemoryItem[], budget?: ContextBudget): ContextProjection;
  /** Name and settings (including the tokenizer's name), recorded so a replay can rebuild the projector. */
  describe(): ComponentDescription;
}

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
    return { name: 'DefaultContextProjector', settings: { tokenizer: this.tokenizer.name } };
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
  constructor(options: ContextProjectorOptions = {}) {
    this.tokenizer = options.tokenizer ?? approxTokenizer;
  }
  project(items: readonly MemoryItem[], budget?: ContextBudget): ContextProjection {
    return projectContext(items, budget, { tokenizer: this.tokenizer, tiers: true });
  }
  describe(): ComponentDescription {
    return { name: 'TypeAwareContextProjector', settings: { tokenizer: this.tokenizer.name } };
  }
}

/**
 * Rebuilds a built-in projector from its `describe()` output (as recorded in `context.projected`).
 * Throws for an unknown projector or tokenizer name.
 * @example contextProjectorFromDescription({ name: 'TypeAwareContextProjector', settings: { tokenizer: 'openai:o200k_base' } })
 */
export const contextProjectorFromDescription = (description: ComponentDescription): ContextProjector => {
  const tokenizerName = description.settings['tokenizer'];
  let tokenizer: Tokenizer = approxTokenizer;
  if (tokenizerName !== undefined) {
    const found = typeof tokenizerName === 'string' ? tokenizerFromName(tokenizerName) : undefined;
    if (!found) throw new UnknownComponentError('tokenizer', String(tokenizerName));
    tokenizer = found;
  }
  switch (description.name) {
    case 'DefaultContextProjector':
      return new DefaultContextProjector({ tokenizer });
    case 'TypeAwareContextProjector':
      return new TypeAwareContextProjector({ tokenizer });
    default:
      throw new UnknownComponentError('context projector', description.name);
  }
};
