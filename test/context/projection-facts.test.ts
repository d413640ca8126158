// Projection facts attached by position: the restored items project as the originals did without being measured
// again, bounds proven before the save hold for questions asked only after it, and facts that do not fit are ignored
// with the reason.
import { describe, expect, it } from 'vitest';
import {
  DefaultContextProjector,
  TypeAwareContextProjector,
  attachProjectionFacts,
  openAiTokenizer,
  projectionFactsOf,
} from '../../src/context/index.js';
import type { ContextProjection, ProjectionFacts, Tokenizer } from '../../src/context/index.js';
import { itemTokenMemo, knownApproxChars } from '../../src/context/measure/items.js';
import { assistantMessage, functionCall, functionCallOutput, userMessage } from '../../src/items/index.js';
import type { MemoryItem } from '../../src/items/index.js';
import { deepFreeze } from '../../src/testing/index.js';

const spy = (name = 'spy'): Tokenizer & { seen: string[] } => {
  const seen: string[] = [];
  return { name, seen, count: (text) => (seen.push(text), text.split(' ').length) };
};

const session = (turns: number, outputWords = (k: number) => k % 17): MemoryItem[] =>
  deepFreeze(
    Array.from({ length: turns }, (_, k) => [
      userMessage(`question ${k} about the code`),
      functionCall(`c${k}`, 'grep', { pattern: `needle ${k}` }),
      functionCallOutput(`c${k}`, `match ${k}: ${'word '.repeat(outputWords(k))}`),
      assistantMessage(`answer ${k}`),
    ]).flat(),
  );

/** The items as a resume rebuilds them: the same JSON, new objects, deep-frozen as the fold leaves them. */
const restored = (items: readonly MemoryItem[]): MemoryItem[] => deepFreeze(JSON.parse(JSON.stringify(items)) as MemoryItem[]);
const asStored = (facts: ProjectionFacts): ProjectionFacts => JSON.parse(JSON.stringify(facts)) as ProjectionFacts;
const plain = (projection: ContextProjection): unknown => JSON.parse(JSON.stringify(projection));

describe('projection facts', () => {
  it('let the first projection after a resume measure nothing already measured, with the same outcome', () => {
    const tokenizer = spy();
    const projector = new TypeAwareContextProjector({ tokenizer });
    const items = session(60);
    const budget = { maxTokens: 300, pinnedPrefixItems: 1, maxRecentToolResults: 5 };
    const before = projector.project(items, budget);
    projector.project(items, budget);
    const counted = tokenizer.seen.length;
    const facts = asStored(projectionFactsOf(items, tokenizer));
    expect(tokenizer.seen.length).toBe(counted); // nothing is counted for the save
    expect(facts.tokens?.exact.filter((count) => count > 0).length).toBeGreaterThan(0);

    const resumed = restored(items);
    const attached = attachProjectionFacts(resumed, facts, tokenizer);
    expect(attached).toEqual({ items: resumed.length, tokenCounts: facts.tokens?.exact.filter((count) => count > 0).length });
    const after = projector.project(resumed, budget);
    // Tier-1 placeholders are new objects of the restored items: counting them is the only work left.
    const countedAfter = tokenizer.seen.slice(counted);
    expect(countedAfter.length).toBeGreaterThan(0);
    expect(countedAfter.every((text) => text.startsWith('[tool result cleared: grep('))).toBe(true);
    expect(plain(after)).toEqual(plain(before));
    for (const [i, item] of resumed.entries()) expect(knownApproxChars(item)).toBe(knownApproxChars(items[i] as MemoryItem));
  });

  it('keep bounds proven before the save true for a budget first asked after it', () => {
    const tokenizer = openAiTokenizer();
    const projector = new DefaultContextProjector({ tokenizer });
    // Only large tool steps under a tight budget: the newest (small) item leaves room that no older step fits,
    // so the scan of each older output stops at a partial bound (atLeast).
    const items = deepFreeze([
      userMessage('the task'),
      ...Array.from({ length: 40 }, (_, k) => [
        functionCall(`c${k}`, 'read_file', { path: `src/file_${k}.ts` }),
        functionCallOutput(`c${k}`, `line ${k}: ${'const value = compute(input, options);\n'.repeat(20 + 7 * (k % 9))}`),
      ]).flat(),
      assistantMessage('done'),
    ]);
    projector.project(items, { maxTokens: 300, pinnedPrefixItems: 1 });
    const facts = asStored(projectionFactsOf(items, tokenizer));
    expect(facts.tokens?.atLeast.filter((bound) => bound > 0).length).toBeGreaterThan(10);

    const resumed = restored(items);
    attachProjectionFacts(resumed, facts, tokenizer);
    for (const budget of [{ maxTokens: 6_000, pinnedPrefixItems: 1 }, { maxTokens: 300, pinnedPrefixItems: 1 }, { maxTokens: 2_500, evictionStep: 4 }]) {
      const fresh = JSON.parse(JSON.stringify(items)) as MemoryItem[];
      expect(plain(projector.project(resumed, budget))).toEqual(plain(projector.project(fresh, budget)));
    }
  });

  it('without a tokenizer carry characters, pairing and bounds; counts only go to a tokenizer of the same name', () => {
    const items = session(5);
    const bare = asStored(projectionFactsOf(items));
    expect(bare.tokens).toBeUndefined();
    expect(bare.groups).toEqual(items.map((item) => (item.type === 'function_call_output' ? 1 : 0)));
    expect(bare.unanswered).toEqual([]);
    expect(attachProjectionFacts(restored(items), bare, spy())).toEqual({ items: items.length, tokenCounts: 0 });

    const tokenizer = spy('words');
    new DefaultContextProjector({ tokenizer }).project(items, { maxTokens: 50 });
    const counted = asStored(projectionFactsOf(items, tokenizer));
    const other = spy('other');
    const resumed = restored(items);
    expect(attachProjectionFacts(resumed, counted, other)).toEqual({
      items: items.length,
      tokenCounts: 0,
      ignored: 'token counts were made with "words", not "other"',
    });
    expect(resumed.every((item) => itemTokenMemo(other).known(item) === undefined)).toBe(true);
  });

  it('remember a call left unanswered at the save, so its output after the resume joins it', () => {
    const items = deepFreeze([userMessage('go'), functionCall('c1', 'ls', {}), assistantMessage('waiting')]);
    const facts = asStored(projectionFactsOf(items));
    expect(facts.unanswered).toEqual([['c1', 1]]);
    const resumed = restored(items);
    attachProjectionFacts(resumed, facts);
    const grown = [...resumed, ...deepFreeze([functionCallOutput('c1', 'a.txt'), userMessage('next')])];
    const projection = new DefaultContextProjector().project(grown, { maxItems: 2 });
    // The output cannot go without its call: both are dropped, as for items never saved.
    expect(projection.report.fates.map((f) => f.fate)).toEqual(['dropped', 'dropped', 'kept', 'dropped', 'kept']);
    expect(plain(projection)).toEqual(plain(new DefaultContextProjector().project(JSON.parse(JSON.stringify(grown)) as MemoryItem[], { maxItems: 2 })));
  });

  it('that do not fit the items are ignored with the reason, and nothing is attached', () => {
    const items = session(3);
    const facts = asStored(projectionFactsOf(items, spy()));
    const attempt = (data: unknown, target: readonly MemoryItem[] = restored(items)) => {
      const result = attachProjectionFacts(target, data, spy());
      if (result.items === 0) expect(target.every((item) => knownApproxChars(item) === undefined)).toBe(true);
      return result;
    };
    const ignored = (reason: string) => ({ items: 0, tokenCounts: 0, ignored: reason });
    expect(attempt(facts, restored(items.slice(1)))).toEqual(ignored(`the facts describe ${items.length} items, memory has ${items.length - 1}`));
    expect(attempt({ ...facts, chars: facts.chars.slice(1) })).toEqual(ignored(`not valid projection facts (chars: has ${items.length - 1} entries for ${items.length} items)`));
    expect(attempt({ ...facts, tokens: { ...facts.tokens, exact: facts.tokens!.exact.map((c, i) => (i === 2 ? 3 : c)) } })).toEqual(
      ignored('not valid projection facts (tokens.exact.2: 3 is neither 0 (unknown) nor a token count (at least 4))'),
    );
    expect(attempt({ ...facts, chars: facts.chars.map((c, i) => (i === 0 ? -1 : c)) }).ignored).toMatch(/^not valid projection facts \(chars\.0: /);
    expect(attempt({ ...facts, chars: facts.chars.map((c, i) => (i === 0 ? 1.5 : c)) }).ignored).toMatch(/^not valid projection facts \(chars\.0: /);
    // A count beyond the safe integers could never be exact (nor summed exactly into a report).
    expect(attempt({ ...facts, tokens: { ...facts.tokens, exact: facts.tokens!.exact.map((c, i) => (i === 1 ? 2 ** 60 : c)) } }).ignored).toMatch(
      /^not valid projection facts \(tokens\.exact\.1: /,
    );
    expect(attempt({ ...facts, version: 2 }).ignored).toMatch(/^not valid projection facts \(version: /);
    expect(attempt({ ...facts, extra: 1 }).ignored).toMatch(/^not valid projection facts \(\(root\): /);
    expect(attempt(null).ignored).toMatch(/^not valid projection facts \(\(root\): /);
    // A member pointing past its own index, or at an item that is not its group's first.
    expect(attempt({ ...facts, groups: facts.groups.map((g, i) => (i === 0 ? 1 : g)) })).toEqual(ignored('the tool pairing is not a grouping of the items'));
    expect(attempt({ ...facts, groups: facts.groups.map((g, i) => (i === 3 ? 1 : g)) })).toEqual(ignored('the tool pairing is not a grouping of the items'));
    expect(attempt({ ...facts, unanswered: [['c9', items.length]] })).toEqual(ignored('the tool pairing is not a grouping of the items'));
    // Items a caller still owns are never cached, so nothing can be attached to them.
    const unfrozen = JSON.parse(JSON.stringify(items)) as MemoryItem[];
    expect(attempt(facts, unfrozen)).toEqual(ignored('the items are not frozen (only frozen items are cached)'));
  });
});
