// Per-item projection facts (characters, tool pairing, token lower bounds and counts) saved with a checkpoint and attached to the restored items by position.
import { z } from 'zod';
import type { MemoryItem } from '../items/index.js';
import { allFrozen } from './caches.js';
import { TokenKnowledge } from './measure/costs.js';
import { historyOf, seedHistory } from './history.js';
import {
  ITEM_TOKEN_OVERHEAD,
  hasBpeLowerBound,
  itemTokenMemo,
  knownTokenLowerBound,
  rememberApproxChars,
  rememberTokenLowerBound,
} from './measure/items.js';
import type { Tokenizer } from './measure/tokenizer.js';
import { ToolPairing } from './tool-pairs.js';

/**
 * What a projection derives from each item that can be saved beside the items and given back to them after a
 * resume, so the first projection costs about what a warm one does. Columns are indexed by position in the
 * list of items they were taken from (a checkpoint's memory as a prompt carries it: the summary message first),
 * and only ever attached to that same list: nothing here says which item it belongs to, the position does.
 * Counts only hold what was known when the facts were taken: 0 means "not known" (every item costs at least
 * {@link ITEM_TOKEN_OVERHEAD} tokens, so 0 is never a count).
 */
export interface ProjectionFacts {
  readonly version: 1;
  /** How many items the columns describe. */
  readonly items: number;
  /** `approxChars` of each item. */
  readonly chars: readonly number[];
  /** For each item, how far back the first item of its tool-pair group is (0: it is the first, or alone). */
  readonly groups: readonly number[];
  /** Calls that have no output yet, as `[call id, index]`, by index (what a later output can still join). */
  readonly unanswered: ReadonlyArray<readonly [string, number]>;
  /** The latest call of each answered id, as `[call id, index]`, by index (what a further answer joins); facts without it are not used. */
  readonly answered?: ReadonlyArray<readonly [string, number]>;
  /** The token lower bound of each item for the OpenAI encodings (`itemTokenLowerBound`), 0 where not computed. */
  readonly tokenLowerBounds: readonly number[];
  /** What one tokenizer knows of each item, by its name: exact counts and proven lower bounds (0: nothing). */
  readonly tokens?: {
    readonly tokenizer: string;
    readonly exact: readonly number[];
    readonly atLeast: readonly number[];
  };
}

const count = z.number().int().nonnegative();
const column = z.array(count);

/** The schema of {@link ProjectionFacts}: every column as long as `items`, every token figure 0 or at least the per-item overhead. */
export const ProjectionFactsSchema = z
  .strictObject({
    version: z.literal(1),
    items: count,
    chars: column,
    groups: column,
    unanswered: z.array(z.tuple([z.string(), count])),
    answered: z.array(z.tuple([z.string(), count])).optional(),
    tokenLowerBounds: column,
    tokens: z.strictObject({ tokenizer: z.string().min(1), exact: column, atLeast: column }).optional(),
  })
  .superRefine((facts, context) => {
    const columns: Array<[string, readonly number[]]> = [
      ['chars', facts.chars],
      ['groups', facts.groups],
      ['tokenLowerBounds', facts.tokenLowerBounds],
      ...(facts.tokens ? ([['tokens.exact', facts.tokens.exact], ['tokens.atLeast', facts.tokens.atLeast]] as Array<[string, readonly number[]]>) : []),
    ];
    for (const [path, values] of columns) {
      if (values.length !== facts.items) {
        context.addIssue({ code: 'custom', path: path.split('.'), message: `has ${values.length} entries for ${facts.items} items` });
        continue;
      }
      if (path === 'chars' || path === 'groups') continue;
      for (let i = 0; i < values.length; i++) {
        const value = values[i] as number;
        if (value !== 0 && value < ITEM_TOKEN_OVERHEAD) {
          context.addIssue({ code: 'custom', path: [...path.split('.'), i], message: `${value} is neither 0 (unknown) nor a token count (at least ${ITEM_TOKEN_OVERHEAD})` });
          return;
        }
      }
    }
  });

/**
 * The facts a projection has derived from `items` so far, as plain JSON: characters and tool pairing (computed
 * now where not known yet: they do not depend on a tokenizer), token lower bounds where computed, and, with a
 * tokenizer, the counts it has made (nothing is counted for this).
 * @example const facts = projectionFactsOf(session.memory.getItems(), openAiTokenizer());
 */
export const projectionFactsOf = (items: readonly MemoryItem[], tokenizer?: Tokenizer): ProjectionFacts => {
  const n = items.length;
  const history = historyOf(items);
  const charValues = history.charColumn().values;
  const chars = new Array<number>(n);
  for (let i = 0; i < n; i++) chars[i] = charValues[i] as number;
  const { groups, unanswered, answered } = history.pairingOfItems().toFacts(history.items);
  const tokenLowerBounds = new Array<number>(n);
  for (let i = 0; i < n; i++) tokenLowerBounds[i] = knownTokenLowerBound(items[i] as MemoryItem) ?? 0;
  const facts: ProjectionFacts = { version: 1, items: n, chars, groups, unanswered, answered, tokenLowerBounds };
  if (!tokenizer) return facts;
  const memo = itemTokenMemo(tokenizer);
  const knowledge = history.knownTokens(tokenizer);
  const known = knowledge ? Math.min(n, knowledge.exact.length) : 0;
  const exact = new Array<number>(n);
  const atLeast = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const counted = i < known ? ((knowledge as TokenKnowledge).exact[i] as number) : 0;
    exact[i] = counted !== 0 ? counted : (memo.known(items[i] as MemoryItem) ?? 0);
    atLeast[i] = exact[i] === 0 && i < known ? ((knowledge as TokenKnowledge).atLeast[i] as number) : 0;
  }
  return { ...facts, tokens: { tokenizer: tokenizer.name, exact, atLeast } };
};

/** What {@link attachProjectionFacts} gave the items. */
export interface AttachedProjectionFacts {
  /** Items that got their characters, token lower bounds and tool pairing (0 when the facts were ignored). */
  readonly items: number;
  /** Items that got an exact token count for the tokenizer. */
  readonly tokenCounts: number;
  /** Why the facts, or their token counts, were not attached. */
  readonly ignored?: string;
}

const issueText = (error: z.ZodError): string => {
  const issue = error.issues[0];
  const path = issue ? issue.path.map(String).join('.') : '';
  return `${path === '' ? '(root)' : path}: ${issue?.message ?? 'invalid'}`;
};

/**
 * Gives `items` the facts {@link projectionFactsOf} took of the same list (by position): characters, lower
 * bounds and tool pairing, and the token counts when `tokenizer` has the name they were made with. Facts that do
 * not match their schema, or describe another number of items, or items that are not frozen (only frozen items
 * are cached), are ignored (the result says why). Only attach facts to the very list they
 * were taken from (a checkpoint vouches for both): a count at the wrong position would be believed.
 * @example attachProjectionFacts(restoredItems, checkpoint.projection, openAiTokenizer()) // { items: 3812, tokenCounts: 3790 }
 */
export const attachProjectionFacts = (items: readonly MemoryItem[], data: unknown, tokenizer?: Tokenizer): AttachedProjectionFacts => {
  const parsed = ProjectionFactsSchema.safeParse(data);
  if (!parsed.success) return { items: 0, tokenCounts: 0, ignored: `not valid projection facts (${issueText(parsed.error)})` };
  const facts = parsed.data;
  const n = items.length;
  if (facts.items !== n) return { items: 0, tokenCounts: 0, ignored: `the facts describe ${facts.items} items, memory has ${n}` };
  if (!allFrozen(items)) return { items: 0, tokenCounts: 0, ignored: 'the items are not frozen (only frozen items are cached)' };
  if (facts.answered === undefined) return { items: 0, tokenCounts: 0, ignored: 'the facts predate pairing every result of a call with it (no `answered`)' };
  const pairing = ToolPairing.fromFacts(facts.groups, facts.unanswered, facts.answered);
  if (!pairing) return { items: 0, tokenCounts: 0, ignored: 'the tool pairing is not a grouping of the items' };
  for (let i = 0; i < n; i++) {
    const item = items[i] as MemoryItem;
    rememberApproxChars(item, facts.chars[i] as number);
    const bound = facts.tokenLowerBounds[i] as number;
    if (bound !== 0) rememberTokenLowerBound(item, bound);
  }
  const tokens = facts.tokens;
  let tokenCounts = 0;
  let ignored: string | undefined;
  let knowledge: TokenKnowledge | undefined;
  if (tokens && tokenizer && tokens.tokenizer === tokenizer.name) {
    const memo = itemTokenMemo(tokenizer);
    const bounded = hasBpeLowerBound(tokenizer);
    knowledge = new TokenKnowledge();
    knowledge.ensure(n);
    for (let i = 0; i < n; i++) {
      const exact = tokens.exact[i] as number;
      if (exact !== 0) {
        memo.remember(items[i] as MemoryItem, exact);
        knowledge.exact[i] = exact;
        tokenCounts += 1;
      } else knowledge.atLeast[i] = tokens.atLeast[i] as number;
      // The fixed lower bound of a bounded tokenizer is the BPE bound; others use the overhead, computed for free.
      if (bounded) knowledge.lower[i] = facts.tokenLowerBounds[i] as number;
    }
  } else if (tokens && tokenizer) {
    ignored = `token counts were made with ${JSON.stringify(tokens.tokenizer)}, not ${JSON.stringify(tokenizer.name)}`;
  }
  const attachedKnowledge = knowledge;
  seedHistory(items, (history) =>
    history.seed(items, { pairing, chars: facts.chars, ...(tokenizer && attachedKnowledge ? { tokenizer, knowledge: attachedKnowledge } : {}) }),
  );
  return { items: n, tokenCounts, ...(ignored !== undefined ? { ignored } : {}) };
};
