// The CompactPolicy contract: laws every compaction policy (built-in or yours) keeps, checked over generated sessions.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { CompactPolicy } from '../compact/index.js';
import type { MemorySnapshot } from '../events/index.js';
import { callIdsOf, outputCallIdOf, userMessage, type MemoryItem } from '../items/index.js';
import { arbitraryItems } from './arbitraries.js';
import type { ContractTestApi } from './contract-api.js';
import { deepFreeze } from '../base/index.js';

export interface CompactPolicyHarness {
  /** A fresh policy (called once per generated case, so a scripted summarizer can start over). */
  policy(): CompactPolicy;
  /** The longest summary the policy may write, however often it compacts (default 16,000 characters). */
  readonly maxSummaryChars?: number;
  /** fast-check runs per law (default: fast-check's global setting). */
  readonly numRuns?: number;
}

const RESULT_LISTS = [
  'completed', 'pending', 'decisions', 'changedArtifacts', 'failedCommands', 'testResults',
  'userConfirmations', 'sandboxState', 'openQuestions', 'readFiles', 'modifiedFiles',
] as const;

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** Source items the result kept unchanged must keep their source order. */
const assertKeptInOrder = (source: readonly MemoryItem[], result: readonly MemoryItem[]): void => {
  let cursor = 0;
  for (const item of result) {
    const at = source.findIndex((s, i) => i >= cursor && same(s, item));
    if (at >= 0) cursor = at + 1;
    else if (source.some((s) => same(s, item))) assert.fail(`an item kept from the source is out of order: ${JSON.stringify(item).slice(0, 200)}`);
  }
};

/** A call and its output that were both in the source are both kept or both gone. */
const assertNoOrphan = (source: readonly MemoryItem[], result: readonly MemoryItem[]): void => {
  const calls = (items: readonly MemoryItem[]) => new Set(items.flatMap((i) => callIdsOf(i)));
  const outputs = (items: readonly MemoryItem[]) => new Set(items.map(outputCallIdOf).filter((id): id is string => id !== undefined));
  const [sourceCalls, sourceOutputs, keptCalls, keptOutputs] = [calls(source), outputs(source), calls(result), outputs(result)];
  for (const id of sourceCalls) {
    if (!sourceOutputs.has(id)) continue;
    assert.equal(keptCalls.has(id), keptOutputs.has(id), `call ${id} and its output were separated (call kept: ${keptCalls.has(id)})`);
  }
};

/**
 * Registers the CompactPolicy contract for `name`: compaction never mutates the snapshot, keeps source items in
 * order, never separates a call from its output, returns well-formed result lists, answers `shouldCompact` the
 * same way twice, and keeps the summary bounded however often it compacts.
 * @example describeCompactPolicyContract({ describe, it }, 'structured', { policy: () => new StructuredSummaryCompactPolicy({ maxItems: 6 }) })
 */
export const describeCompactPolicyContract = (api: ContractTestApi, name: string, harness: CompactPolicyHarness): void => {
  const maxSummaryChars = harness.maxSummaryChars ?? 16_000;
  const params = harness.numRuns !== undefined ? { numRuns: harness.numRuns } : {};
  const sessions = arbitraryItems({ maxTurns: 5, maxOutputChars: 400 });

  api.describe(`CompactPolicy contract: ${name}`, () => {
    api.it('compacts without mutating the snapshot, keeps order and pairs, and fills every result list', async () => {
      await fc.assert(
        fc.asyncProperty(sessions, fc.option(fc.string({ maxLength: 200 }), { nil: null }), async (items, summary) => {
          const snapshot: MemorySnapshot = deepFreeze({ items, summary });
          const before = JSON.stringify(snapshot);
          const result = await harness.policy().compact(snapshot);
          assert.equal(JSON.stringify(snapshot), before, 'the snapshot is unchanged');
          for (const key of RESULT_LISTS) {
            const list = result[key];
            assert.ok(Array.isArray(list) && list.every((v) => typeof v === 'string'), `result.${key} is a string array`);
          }
          const kept = result.memory?.items ?? items;
          assertKeptInOrder(items, kept);
          assertNoOrphan(items, kept);
          if (result.summary != null) assert.equal(typeof result.summary, 'string');
        }),
        params,
      );
    });

    api.it('answers shouldCompact the same way for the same snapshot', async () => {
      await fc.assert(
        fc.asyncProperty(sessions, async (items) => {
          const policy = harness.policy();
          if (!policy.shouldCompact) return;
          const snapshot: MemorySnapshot = deepFreeze({ items, summary: null });
          assert.equal(await policy.shouldCompact(snapshot), await policy.shouldCompact(snapshot));
        }),
        params,
      );
    });

    api.it(`keeps the summary within ${maxSummaryChars} characters however often it compacts`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(sessions, { minLength: 2, maxLength: 6 }), async (turns) => {
          const policy = harness.policy();
          let snapshot: MemorySnapshot = { items: [], summary: null };
          for (const [index, items] of turns.entries()) {
            const result = await policy.compact(deepFreeze({ items: [...snapshot.items, userMessage(`turn ${index}`), ...items], summary: snapshot.summary ?? null }));
            const summary = result.memory?.summary ?? result.summary ?? null;
            assert.ok((summary ?? '').length <= maxSummaryChars, `summary grew to ${(summary ?? '').length} characters after ${index + 1} compactions`);
            snapshot = { items: result.memory?.items ?? snapshot.items, summary };
          }
        }),
        params,
      );
    });
  });
};
