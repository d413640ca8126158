// checkProjectorLaws: the design's projection laws 2-7, checked with fast-check against any ContextProjector.
import fc from 'fast-check';
import {
  CLEARED_REASONING_TEXT,
  approxTokenizer,
  itemTokenCount,
  itemTokenLimit,
  projectorTokenizer,
  toolPairGroups,
} from '../context/index.js';
import type { ContextBudget, ContextProjection, ContextProjector, Tokenizer, ToolPairGroups } from '../context/index.js';
import { ContextLedgerError, UnknownComponentError } from '../base/errors.js';
import { ContextReportSchema } from '../events/index.js';
import { deepFreeze } from '../base/index.js';
import { approxChars, callIdsOf, outputCallIdOf } from '../items/index.js';
import type { MemoryItem } from '../items/index.js';
import { arbitraryBudget, arbitraryItems } from './arbitraries.js';

export interface ProjectorLawOptions {
  /** Runs per check (default: fast-check's global `numRuns`). */
  readonly numRuns?: number;
  /** Seed to replay a failure (printed with it). */
  readonly seed?: number;
  /** Path to replay a failure (printed with it). */
  readonly path?: string;
  /** Sessions to project (default {@link arbitraryItems}()). */
  readonly items?: fc.Arbitrary<readonly MemoryItem[]>;
  /** Budgets to project under (default {@link arbitraryBudget}()). */
  readonly budget?: fc.Arbitrary<ContextBudget>;
  /**
   * Tokenizer that `maxTokens` is measured with (with `itemTokenCount`). Default: the one named by
   * `projector.describe().settings.tokenizer`, or `approxTokenizer` when none is named.
   */
  readonly tokenizer?: Tokenizer;
  /**
   * Whether a projected item is an allowed rewrite of a source item (law 3, docs/design.md#laws). Default: the Tier-1 and Tier-2
   * rewrites (a `function_call_output` with the same `call_id` and a `[tool result cleared…]` output; a
   * reasoning item with the same `id` and `output: '[reasoning cleared]'`).
   */
  readonly isRewriteOf?: (projected: MemoryItem, source: MemoryItem) => boolean;
}

/** The Tier-1 and Tier-2 rewrites (docs/projection.md): the only changes law 3 (docs/design.md#laws) allows by default. */
export const isTierRewriteOf = (projected: MemoryItem, source: MemoryItem): boolean => {
  const p = projected as Record<string, unknown>;
  const s = source as Record<string, unknown>;
  if (source.type === 'function_call_output' && projected.type === 'function_call_output') {
    return p['call_id'] === s['call_id'] && typeof p['output'] === 'string' && p['output'].startsWith('[tool result cleared');
  }
  if (source.type === 'reasoning' && projected.type === 'reasoning') {
    return p['id'] === s['id'] && p['output'] === CLEARED_REASONING_TEXT;
  }
  return isClearedInputsOf(projected, source);
};

/** A call's inputs as `clearToolInputs` leaves them: `'{}'` arguments, `{}` for a `tool_use` input. */
const inputsCleared = (item: Record<string, unknown>): Record<string, unknown> => {
  if (item['type'] === 'function_call') return { ...item, arguments: '{}' };
  if (item['type'] !== 'message') return item;
  const out: Record<string, unknown> = { ...item };
  if (Array.isArray(item['tool_calls'])) {
    out['tool_calls'] = item['tool_calls'].map((call: unknown) => {
      if (call === null || typeof call !== 'object') return call;
      const c = call as Record<string, unknown>;
      const fn = c['function'];
      if (fn !== null && typeof fn === 'object' && (fn as Record<string, unknown>)['arguments'] !== undefined) return { ...c, function: { ...(fn as object), arguments: '{}' } };
      return c['arguments'] !== undefined ? { ...c, arguments: '{}' } : c;
    });
  }
  if (Array.isArray(item['content'])) {
    out['content'] = item['content'].map((part: unknown) =>
      part !== null && typeof part === 'object' && (part as Record<string, unknown>)['type'] === 'tool_use' ? { ...(part as object), input: {} } : part,
    );
  }
  return out;
};

/** `clearToolInputs`: the source call with some of its calls' arguments cleared, and nothing else changed. */
const isClearedInputsOf = (projected: MemoryItem, source: MemoryItem): boolean => {
  if (projected.type !== source.type || (source.type !== 'function_call' && source.type !== 'message')) return false;
  const p = projected as Record<string, unknown>;
  const s = source as Record<string, unknown>;
  if (!sameJson(inputsCleared(p), inputsCleared(s))) return false;
  // Every call of the projection keeps its arguments or has them cleared.
  if (source.type === 'function_call') return p['arguments'] === s['arguments'] || p['arguments'] === '{}';
  const pc = Array.isArray(p['tool_calls']) ? p['tool_calls'] : [];
  const sc = Array.isArray(s['tool_calls']) ? s['tool_calls'] : [];
  const argsOf = (call: unknown): unknown => {
    const c = (call ?? {}) as Record<string, unknown>;
    const fn = c['function'] as Record<string, unknown> | undefined;
    return fn !== null && typeof fn === 'object' && fn['arguments'] !== undefined ? fn['arguments'] : c['arguments'];
  };
  if (!pc.every((call, k) => sameJson(argsOf(call), argsOf(sc[k])) || argsOf(call) === '{}')) return false;
  const pp = Array.isArray(p['content']) ? p['content'] : [];
  const sp = Array.isArray(s['content']) ? s['content'] : [];
  return pp.every((part, k) => {
    const input = (part as Record<string, unknown> | null)?.['input'];
    return sameJson(input, (sp[k] as Record<string, unknown> | null)?.['input']) || sameJson(input, {});
  });
};

/** Deep-freezes a JSON value in place and returns it (to prove a function never writes to its input). */
export { deepFreeze };

/**
 * Structural equality of JSON-like values: own enumerable keys whose value is not undefined, arrays element by
 * element, prototypes ignored (fast-check may build records without a prototype; clones have one).
 */
const sameJson = (a: unknown, b: unknown): boolean => {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return Number.isNaN(a) && Number.isNaN(b);
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((value, i) => sameJson(value, b[i]));
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const keysA = Object.keys(ra).filter((key) => ra[key] !== undefined);
  const keysB = Object.keys(rb).filter((key) => rb[key] !== undefined);
  return keysA.length === keysB.length && keysA.every((key) => Object.prototype.hasOwnProperty.call(rb, key) && sameJson(ra[key], rb[key]));
};

interface Limits {
  readonly maxItems: number;
  readonly maxApproxChars: number;
  readonly maxTokens: number;
  readonly pinned: number;
}

const limitOf = (value: number | undefined): number => (value === undefined || value < 0 ? Infinity : value);

const limitsOf = (budget: ContextBudget): Limits => ({
  maxItems: limitOf(budget.maxItems),
  maxApproxChars: limitOf(budget.maxApproxChars),
  // What is left for items once `reserveOutputTokens` is taken off.
  maxTokens: itemTokenLimit(budget.maxTokens, budget.reserveOutputTokens),
  pinned: Math.max(0, budget.pinnedPrefixItems ?? 0),
});

/**
 * A projector breaks a law: `assertProjectorLaws` (on one input) or `checkProjectorLaws` (on generated ones), from
 * `context-ledger/testing`. The message names the law, and from `checkProjectorLaws` the projector and the
 * counterexample.
 */
export class ProjectorLawError extends ContextLedgerError {
  static override readonly code = 'PROJECTOR_LAW_VIOLATED';
  constructor(
    message: string,
    /** The projector's `describe().name`, when known. */
    readonly projectorName: string | undefined = undefined,
    options?: { readonly cause?: unknown },
  ) {
    super(message, options);
  }
}
/** @deprecated use ProjectorLawError.isInstance */ export const isProjectorLawError = (e: unknown): e is ProjectorLawError => ProjectorLawError.isInstance(e);

const fail = (law: string, detail: string): never => {
  throw new ProjectorLawError(`${law}: ${detail}`);
};

const show = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
};

const samePrefixLength = (a: readonly unknown[], b: readonly unknown[]): number => {
  let i = 0;
  while (i < a.length && i < b.length && sameJson(a[i], b[i])) i++;
  return i;
};

const checkSameProjection = (first: ContextProjection, other: ContextProjection, what: string): void => {
  if (!sameJson(first.items, other.items)) {
    const at = samePrefixLength(first.items, other.items);
    fail('law 2 (purity)', `${what} gave different items (first difference at projected index ${at}: ${show(first.items[at])} vs ${show(other.items[at])})`);
  }
  if (!sameJson(first.report, other.report)) {
    fail('law 2 (purity)', `${what} gave a different report: ${show(first.report)} vs ${show(other.report)}`);
  }
};

/** The call ids `item` answers, in every shape: `function_call_output`, a Chat `role:'tool'` message, `tool_result` parts of any message. */
const answeredIds = (item: MemoryItem): string[] => {
  const output = outputCallIdOf(item);
  if (output !== undefined) return [output];
  if (item.type !== 'message') return [];
  const ids: string[] = [];
  const message = item as { role?: unknown; tool_call_id?: unknown; content?: unknown };
  if (message.role === 'tool' && typeof message.tool_call_id === 'string') ids.push(message.tool_call_id);
  if (Array.isArray(message.content)) {
    for (const part of message.content as unknown[]) {
      const p = part as { type?: unknown; tool_use_id?: unknown } | null;
      if (p && p.type === 'tool_result' && typeof p.tool_use_id === 'string') ids.push(p.tool_use_id);
    }
  }
  return ids;
};

/**
 * The call/result pairs among `items` as [call index, result index, id]: each result answers the nearest earlier
 * unanswered call of its id, or, when every call of its id is answered, the latest of them (one call, several results).
 */
const toolPairs = (items: readonly MemoryItem[]): [number, number, string][] => {
  const unanswered = new Map<string, number[]>();
  const latest = new Map<string, number>();
  const pairs: [number, number, string][] = [];
  items.forEach((item, i) => {
    for (const answer of answeredIds(item)) {
      const call = unanswered.get(answer)?.pop() ?? latest.get(answer);
      if (call !== undefined) pairs.push([call, i, answer]);
    }
    for (const id of callIdsOf(item)) {
      const stack = unanswered.get(id);
      if (stack) stack.push(i);
      else unanswered.set(id, [i]);
      latest.set(id, i);
    }
  });
  return pairs;
};

const closureSize = (groups: ToolPairGroups, indices: Iterable<number>): number => {
  const members = new Set<number>();
  for (const i of indices) for (const m of groups.membersOf(i)) members.add(m);
  return members.size;
};

/**
 * Checks one projection of `items` under `budget` against laws 2 to 7 (docs/design.md#laws) and throws an Error naming
 * the first law broken. Useful for example-based tests; {@link checkProjectorLaws} runs it on generated inputs.
 * @example assertProjectorLaws(new DefaultContextProjector(), items, { maxItems: 3 })
 */
export const assertProjectorLaws = (
  projector: ContextProjector,
  items: readonly MemoryItem[],
  budget: ContextBudget,
  options: Pick<ProjectorLawOptions, 'tokenizer' | 'isRewriteOf'> = {},
): void => {
  const tokenizer = options.tokenizer ?? tokenizerOf(projector);
  const isRewriteOf = options.isRewriteOf ?? isTierRewriteOf;
  const n = items.length;

  // Law 2: purity. Nothing written to the input; the same input gives the same output.
  const itemsBefore = structuredClone(items);
  const budgetBefore = structuredClone(budget);
  const projection = projector.project(items, budget);
  if (!sameJson(items, itemsBefore)) fail('law 2 (purity)', 'project() mutated its input items');
  if (!sameJson(budget, budgetBefore)) fail('law 2 (purity)', 'project() mutated its budget');
  let frozenProjection: ContextProjection;
  try {
    frozenProjection = projector.project(deepFreeze(structuredClone(items)), deepFreeze(structuredClone(budget)));
  } catch (error) {
    return fail('law 2 (purity)', `project() threw on deep-frozen input (does it write to its input?): ${String(error)}`);
  }
  checkSameProjection(projection, frozenProjection, 'a deep-frozen copy of the same input');
  checkSameProjection(projection, projector.project(items, budget), 'projecting the same input again');

  const projected = projection.items;
  const report = projection.report;
  const same = (p: MemoryItem, s: MemoryItem): boolean => p === s || sameJson(p, s);
  const matches = (p: MemoryItem, s: MemoryItem): boolean => same(p, s) || isRewriteOf(p, s);

  // Law 3: the projection is a subsequence of the source, up to the allowed rewrites, in source order.
  let cursor = 0;
  for (let j = 0; j < projected.length; j++) {
    const p = projected[j] as MemoryItem;
    while (cursor < n && !matches(p, items[cursor] as MemoryItem)) cursor++;
    if (cursor === n) fail('law 3 (subsequence)', `projected item ${j} ${show(p)} is not a (rewritten) source item in source order`);
    cursor++;
  }

  // Law 5: counts add up and every source item has exactly one fate, consistent with the projected items.
  const parsed = ContextReportSchema.safeParse(report);
  if (!parsed.success) fail('law 5 (report)', `the report does not match ContextReportSchema: ${parsed.error.message}`);
  const expect = (field: string, actual: unknown, expected: unknown): void => {
    if (actual !== expected) fail('law 5 (counts)', `${field} is ${show(actual)}, expected ${show(expected)}`);
  };
  expect('sourceItemCount', report.sourceItemCount, n);
  expect('projectedItemCount', report.projectedItemCount, projected.length);
  expect('droppedItemCount', report.droppedItemCount, n - projected.length);
  expect('sourceApproxChars', report.sourceApproxChars, approxChars(items));
  expect('projectedApproxChars', report.projectedApproxChars, approxChars(projected));
  if (report.sourceTokens !== undefined) {
    expect('sourceTokens', report.sourceTokens, items.reduce((sum, item) => sum + itemTokenCount(item, tokenizer), 0));
  }
  if (report.projectedTokens !== undefined) {
    expect('projectedTokens', report.projectedTokens, projected.reduce((sum, item) => sum + itemTokenCount(item, tokenizer), 0));
  }
  expect('fates.length', report.fates.length, n);
  const fateOf = new Array<string | undefined>(n);
  for (const fate of report.fates) {
    if (fate.index >= n) fail('law 5 (fates)', `fate for index ${fate.index}, but the source has ${n} item(s)`);
    if (fateOf[fate.index] !== undefined) fail('law 5 (fates)', `source item ${fate.index} has more than one fate`);
    fateOf[fate.index] = fate.fate;
  }
  const keptIndices: number[] = [];
  for (let i = 0; i < n; i++) if (fateOf[i] !== 'dropped') keptIndices.push(i);
  expect('number of fates other than dropped', keptIndices.length, projected.length);
  keptIndices.forEach((i, j) => {
    const p = projected[j] as MemoryItem;
    const s = items[i] as MemoryItem;
    const ok = fateOf[i] === 'kept' ? same(p, s) : matches(p, s);
    if (!ok) fail('law 5 (fates)', `fate of source item ${i} is ${String(fateOf[i])}, but projected item ${j} is ${show(p)} and the source item is ${show(s)}`);
  });
  const kept = new Set(keptIndices);

  // Law 7: tool pairing. A call and its output that the source had together are kept or dropped together.
  for (const [call, output, id] of toolPairs(items)) {
    if (kept.has(call) !== kept.has(output)) {
      fail('law 7 (tool pairing)', `call ${JSON.stringify(id)} was sent ${kept.has(call) ? 'without its output' : 'as an output without its call'}`);
    }
  }

  const limits = limitsOf(budget);
  const groups = toolPairGroups(items);
  const anyZero = limits.maxItems === 0 || limits.maxApproxChars === 0 || limits.maxTokens === 0;

  // Law 6: budgets hold. maxItems always; characters and tokens except the first pinned item and the newest item, with their pairs.
  if (projected.length > limits.maxItems) fail('law 6 (budget)', `${projected.length} item(s) sent under maxItems ${limits.maxItems}`);
  const exempt = new Set<number>();
  if (n > 0) {
    if (limits.pinned >= 1) for (const m of groups.membersOf(0)) exempt.add(m);
    for (const m of groups.membersOf(n - 1)) exempt.add(m);
  }
  const spent = (measure: (item: MemoryItem) => number): number =>
    keptIndices.reduce((sum, i, j) => (exempt.has(i) ? sum : sum + measure(projected[j] as MemoryItem)), 0);
  if (anyZero && projected.length > 0) fail('law 6 (budget)', `${projected.length} item(s) sent under a limit of 0`);
  const chars = spent(approxChars);
  if (chars > limits.maxApproxChars) {
    fail('law 6 (budget)', `${chars} approximate characters sent (besides the first pinned and the newest item) under maxApproxChars ${limits.maxApproxChars}`);
  }
  const tokens = spent((item) => itemTokenCount(item, tokenizer));
  if (tokens > limits.maxTokens) {
    fail('law 6 (budget)', `${tokens} tokens sent (besides the first pinned and the newest item) under maxTokens ${limits.maxTokens}`);
  }

  // Law 4: what always survives.
  if (n > 0 && !anyZero) {
    const pinnedEnd = Math.min(limits.pinned, n, limits.maxItems);
    const pinnedRange = Array.from({ length: pinnedEnd }, (_, i) => i);
    if (limits.pinned >= 1 && groups.sizeOf(0) <= limits.maxItems && !kept.has(0)) {
      fail('law 4 (survivors)', 'the first item is pinned but was not sent');
    }
    const newestFits =
      limits.maxItems === Infinity ||
      (pinnedEnd < limits.maxItems && closureSize(groups, [...pinnedRange, n - 1]) <= limits.maxItems);
    if (newestFits && !kept.has(n - 1)) fail('law 4 (survivors)', 'the newest item was not sent, though it (with its pair) fits in maxItems');
  }
  if (n > 0 && limits.maxItems !== 0) {
    const alone: Record<string, number> = {};
    if (budget.maxItems !== undefined) alone['maxItems'] = budget.maxItems;
    if (budget.pinnedPrefixItems !== undefined) alone['pinnedPrefixItems'] = budget.pinnedPrefixItems;
    const pinnedEnd = Math.min(limits.pinned, n, limits.maxItems);
    const pinnedRange = Array.from({ length: pinnedEnd }, (_, i) => i);
    if (closureSize(groups, pinnedRange) <= limits.maxItems) {
      const underItems = projector.project(items, alone);
      const sent = new Set(underItems.report.fates.filter((f) => f.fate !== 'dropped').map((f) => f.index));
      const lost = pinnedRange.find((i) => !sent.has(i));
      if (lost !== undefined) fail('law 4 (survivors)', `under maxItems alone (${show(alone)}) pinned item ${lost} was not sent`);
    }
  }
};

const tokenizerOf = (projector: ContextProjector): Tokenizer => {
  const tokenizer = projectorTokenizer(projector);
  if (tokenizer) return tokenizer;
  const name = projector.describe().settings['tokenizer'];
  if (name === undefined) return approxTokenizer;
  throw new UnknownComponentError('tokenizer', name, ' (named in describe(): pass it as the `tokenizer` option)');
};

/**
 * Runs laws 2 to 7 (docs/design.md#laws) against a projector on generated sessions and budgets, with `fc.assert`.
 * On failure it throws fast-check's report: the shrunk counterexample (items and budget), the law it broke,
 * and the seed and path to replay it (`{ seed, path }` options).
 * @example it('my projector obeys the laws', () => checkProjectorLaws(new MyProjector(), { numRuns: 200 }));
 */
export const checkProjectorLaws = (projector: ContextProjector, options: ProjectorLawOptions = {}): void => {
  const tokenizer = options.tokenizer ?? tokenizerOf(projector);
  const lawOptions = options.isRewriteOf ? { tokenizer, isRewriteOf: options.isRewriteOf } : { tokenizer };
  const property = fc.property(options.items ?? arbitraryItems(), options.budget ?? arbitraryBudget(), (items, budget) => {
    assertProjectorLaws(projector, items, budget, lawOptions);
  });
  try {
    fc.assert(property, {
      ...(options.numRuns === undefined ? {} : { numRuns: options.numRuns }),
      ...(options.seed === undefined ? {} : { seed: options.seed }),
      ...(options.path === undefined ? {} : { path: options.path }),
    });
  } catch (error) {
    // fast-check keeps the property's own error as `cause`; put the broken law first in the message.
    if (error instanceof Error && error.cause instanceof Error) {
      const name = projector.describe().name;
      throw new ProjectorLawError(`${name} breaks ${error.cause.message}\n\n${error.message}`, name, { cause: error.cause });
    }
    throw error;
  }
};
