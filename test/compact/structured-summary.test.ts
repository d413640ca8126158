// StructuredSummaryCompactPolicy: the reference's threshold, retention and summary lines, plus facts and bounded nesting.
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_SUMMARY_CHARS,
  SUMMARY_MARKER,
  StructuredSummaryCompactPolicy,
  factLists,
  keepNewestChars,
} from '../../src/compact/index.js';
import { DefaultContextProjector, TypeAwareContextProjector } from '../../src/context/index.js';
import { InvalidOptionsError } from '../../src/base/errors.js';
import type { FactEventType, MemorySnapshot, NewSessionEventOf, RecordedFact } from '../../src/events/index.js';
import { assistantMessage, functionCall, functionCallOutput, systemMessage, userMessage, type MemoryItem } from '../../src/items/index.js';

const turns = (n: number): MemoryItem[] =>
  Array.from({ length: n }, (_, i) => (i % 2 === 0 ? userMessage(`question ${i}`) : assistantMessage(`answer ${i}`)));

const NULL_SNAPSHOT = null as unknown as MemorySnapshot;
const PRESERVED = 'Preserved recent items should be treated as the authoritative working context.';

describe('StructuredSummaryCompactPolicy.shouldCompact', () => {
  const policy = new StructuredSummaryCompactPolicy({ maxItems: 4 });

  it('is false below and at maxItems, true above', () => {
    expect(policy.shouldCompact({ items: turns(3) })).toBe(false);
    expect(policy.shouldCompact({ items: turns(4) })).toBe(false);
    expect(policy.shouldCompact({ items: turns(5) })).toBe(true);
  });

  it('is false for a null or empty snapshot', () => {
    expect(policy.shouldCompact(NULL_SNAPSHOT)).toBe(false);
    expect(policy.shouldCompact(undefined)).toBe(false);
    expect(policy.shouldCompact({ items: [] })).toBe(false);
    expect(new StructuredSummaryCompactPolicy({ maxItems: 0 }).shouldCompact({ items: [] })).toBe(false);
  });

  it('is false without maxItems (or with a negative one, which means unlimited)', () => {
    expect(new StructuredSummaryCompactPolicy().shouldCompact({ items: turns(500) })).toBe(false);
    expect(new StructuredSummaryCompactPolicy({ maxApproxChars: 10 }).shouldCompact({ items: turns(500) })).toBe(false);
    expect(new StructuredSummaryCompactPolicy({ maxItems: -1 }).shouldCompact({ items: turns(500) })).toBe(false);
  });

  it('with compactAbove, triggers above compactAbove, not above maxItems', () => {
    const spaced = new StructuredSummaryCompactPolicy({ maxItems: 4 }, undefined, { compactAbove: 10 });
    expect(spaced.shouldCompact({ items: turns(5) })).toBe(false);
    expect(spaced.shouldCompact({ items: turns(10) })).toBe(false);
    expect(spaced.shouldCompact({ items: turns(11) })).toBe(true);
    // retention is still maxItems
    expect(spaced.compact({ items: turns(11) }).memory?.items).toHaveLength(4);
  });

  it('rejects a compactAbove below maxItems (it would record a compaction that keeps everything at every step)', () => {
    expect(() => new StructuredSummaryCompactPolicy({ maxItems: 10 }, undefined, { compactAbove: 5 })).toThrow('compactAbove: must be at least maxItems (10), got 5');
    expect(() => new StructuredSummaryCompactPolicy({ maxItems: 10 }, undefined, { compactAbove: 10 })).not.toThrow();
    // a negative compactAbove means "not set": the trigger falls back to maxItems
    expect(new StructuredSummaryCompactPolicy({ maxItems: 10 }, undefined, { compactAbove: -1 }).compactAbove).toBe(10);
  });

  it('compactAbove works without maxItems too (trigger only)', () => {
    const triggerOnly = new StructuredSummaryCompactPolicy({ maxApproxChars: 100 }, undefined, { compactAbove: 3 });
    expect(triggerOnly.shouldCompact({ items: turns(3) })).toBe(false);
    expect(triggerOnly.shouldCompact({ items: turns(4) })).toBe(true);
  });
});

describe('StructuredSummaryCompactPolicy.compact', () => {
  it('keeps what the projector keeps (the newest maxItems), the same objects, in order', () => {
    const items = turns(7);
    const result = new StructuredSummaryCompactPolicy({ maxItems: 3 }).compact({ items });
    expect(result.memory?.items).toEqual(items.slice(4));
    result.memory!.items.forEach((item, i) => expect(item).toBe(items[4 + i]));
    expect(result.contextReport).toMatchObject({ sourceItemCount: 7, projectedItemCount: 3, droppedItemCount: 4, itemLimitApplied: true });
    expect(result.contextReport).toEqual(new DefaultContextProjector().project(items, { maxItems: 3 }).report);
  });

  it('writes the reference summary lines, with ", D dropped" only when something was dropped', () => {
    const dropped = new StructuredSummaryCompactPolicy({ maxItems: 3 }).compact({ items: turns(7) });
    expect(dropped.summary).toBe(
      [SUMMARY_MARKER, 'Context projection: 3/7 items retained, 4 dropped.', PRESERVED].join('\n'),
    );
    expect(dropped.memory?.summary).toBe(dropped.summary);

    const nothingDropped = new StructuredSummaryCompactPolicy({ maxItems: 10 }).compact({ items: turns(7) });
    expect(nothingDropped.summary).toBe([SUMMARY_MARKER, 'Context projection: 7/7 items retained.', PRESERVED].join('\n'));
    expect(nothingDropped.summary).not.toContain('dropped');
  });

  it('starts with AI4J_COMPACT_SUMMARY', () => {
    expect(SUMMARY_MARKER).toBe('AI4J_COMPACT_SUMMARY');
    const result = new StructuredSummaryCompactPolicy({ maxItems: 1 }).compact({ items: turns(2) });
    expect(result.summary!.split('\n')[0]).toBe('AI4J_COMPACT_SUMMARY');
  });

  it('handles a null snapshot and an empty snapshot', () => {
    const policy = new StructuredSummaryCompactPolicy({ maxItems: 3 });
    for (const snapshot of [NULL_SNAPSHOT, { items: [] }]) {
      const result = policy.compact(snapshot);
      expect(result.memory?.items).toEqual([]);
      expect(result.summary).toBe([SUMMARY_MARKER, 'Context projection: 0/0 items retained.', PRESERVED].join('\n'));
      expect(result.contextReport).toMatchObject({ sourceItemCount: 0, projectedItemCount: 0, droppedItemCount: 0 });
      expect(result.completed).toEqual([]);
      expect(result.failedCommands).toEqual([]);
    }
  });

  it('keeps a pinned first item (pinnedPrefixItems 1) and carries the previous summary', () => {
    const items = [systemMessage('Summary of earlier work: parser done'), ...turns(9)];
    const result = new StructuredSummaryCompactPolicy({ maxItems: 4, pinnedPrefixItems: 1 }).compact({ items, summary: 'the old summary' });
    expect(result.memory?.items[0]).toBe(items[0]);
    expect(result.memory?.items).toEqual([items[0], ...items.slice(7)]);
    expect(result.summary).toBe(
      [SUMMARY_MARKER, 'Existing summary:', 'the old summary', 'Context projection: 4/10 items retained, 6 dropped.', PRESERVED].join('\n'),
    );
  });

  it('folds a previous summary in under "Existing summary:" with the header once and no repeated line; a blank one is left out', () => {
    const policy = new StructuredSummaryCompactPolicy({ maxItems: 2 });
    const first = policy.compact({ items: turns(4) });
    const second = policy.compact({ items: turns(4), summary: first.summary ?? null });
    expect(second.summary).toBe([SUMMARY_MARKER, 'Existing summary:', 'Context projection: 2/4 items retained, 2 dropped.', PRESERVED].join('\n'));
    let current: string | null = 'a note from the host';
    for (let i = 0; i < 10; i++) current = policy.compact({ items: turns(4 + (i % 3)), summary: current }).summary ?? null;
    const lines = current!.split('\n');
    expect(lines.filter((l) => l === SUMMARY_MARKER)).toHaveLength(1);
    expect(lines.filter((l) => l === 'Existing summary:')).toHaveLength(1);
    expect(lines.filter((l) => l === PRESERVED)).toHaveLength(1);
    expect(new Set(lines).size).toBe(lines.length);
    expect(lines).toEqual([
      SUMMARY_MARKER,
      'Existing summary:',
      'a note from the host',
      'Context projection: 2/4 items retained, 2 dropped.',
      'Context projection: 2/5 items retained, 3 dropped.',
      'Context projection: 2/6 items retained, 4 dropped.',
      PRESERVED,
    ]);
    expect(policy.compact({ items: turns(4), summary: '   ' }).summary).not.toContain('Existing summary:');
    expect(policy.compact({ items: turns(4), summary: null }).summary).not.toContain('Existing summary:');
  });

  it('cuts the carried summary to maxSummaryChars, oldest text first, so nesting stays bounded', () => {
    const policy = new StructuredSummaryCompactPolicy({ maxItems: 2 }, undefined, { maxSummaryChars: 200 });
    const previous = `OLDEST ${'x'.repeat(500)} NEWEST`;
    const summary = policy.compact({ items: turns(4), summary: previous }).summary!;
    const carried = summary.split('\n').slice(2, -2).join('\n');
    // A summary that is not one of ours is carried as it is (cut to maxSummaryChars, oldest first).
    expect(carried).toBe(keepNewestChars(previous, 200));
    expect(carried.length).toBe(200);
    expect(carried.endsWith('NEWEST')).toBe(true);
    expect(carried).not.toContain('OLDEST');

    let current: string | null = null;
    for (let i = 0; i < 50; i++) current = policy.compact({ items: turns(4), summary: current }).summary ?? null;
    const bound = 200 + [SUMMARY_MARKER, 'Existing summary:', 'Context projection: 2/4 items retained, 2 dropped.', PRESERVED].join('\n').length + 4;
    expect(current!.length).toBeLessThanOrEqual(bound);
  });

  it('defaults maxSummaryChars to 4,000', () => {
    expect(DEFAULT_MAX_SUMMARY_CHARS).toBe(4000);
    const policy = new StructuredSummaryCompactPolicy({ maxItems: 1 });
    expect(policy.maxSummaryChars).toBe(4000);
    const summary = policy.compact({ items: turns(2), summary: 'y'.repeat(10_000) }).summary!;
    expect(summary.split('\n').slice(2, -2).join('\n')).toHaveLength(4000);
  });

  it('uses the given projector: Tier-1 rewrites become new items', () => {
    const items = [userMessage('go'), functionCall('c1', 'bash', { cmd: 'ls' }), functionCallOutput('c1', 'a b c '.repeat(20)), functionCall('c2', 'bash', {}), functionCallOutput('c2', 'ok')];
    const policy = new StructuredSummaryCompactPolicy({ maxItems: 10, maxRecentToolResults: 1 }, new TypeAwareContextProjector());
    const result = policy.compact({ items });
    expect(result.memory?.items[2]).toEqual({ type: 'function_call_output', call_id: 'c1', output: '[tool result cleared: bash(c1)]' });
    expect(result.memory?.items[4]).toBe(items[4]);
    expect(policy.describe()).toMatchObject({ name: 'StructuredSummaryCompactPolicy', settings: { projector: { name: 'TypeAwareContextProjector' } } });
  });

  it('describes itself with its budget and settings', () => {
    expect(new StructuredSummaryCompactPolicy({ maxItems: 30, pinnedPrefixItems: 1 }, undefined, { compactAbove: 60 }).describe()).toEqual({
      name: 'StructuredSummaryCompactPolicy',
      settings: {
        budget: { maxItems: 30, pinnedPrefixItems: 1 },
        projector: { name: 'DefaultContextProjector', settings: { tokenizer: 'approx' } },
        compactAbove: 60,
        maxSummaryChars: 4000,
      },
    });
  });

  it('carries the accumulated file lists through unchanged', () => {
    const result = new StructuredSummaryCompactPolicy({ maxItems: 1 }).compact({ items: turns(3), readFiles: ['a.ts'], modifiedFiles: ['b.ts'] });
    expect(result.readFiles).toEqual(['a.ts']);
    expect(result.modifiedFiles).toEqual(['b.ts']);
  });
});

describe('facts fill the structured result', () => {
  /** A fact as the fold keeps it: the event with its seq (no other envelope field). */
  const fact = (seq: number, event: NewSessionEventOf<FactEventType>): RecordedFact => ({ seq, ...event }) as RecordedFact;

  const facts: RecordedFact[] = [
    fact(2, { type: 'command.failed', command: 'npm test', exitCode: 1, error: 'Expected 2, got 3' }),
    fact(3, { type: 'test.result', status: 'failed', suite: 'parser', passed: 10, failed: 2, summary: 'two edge cases' }),
    fact(4, { type: 'approval.recorded', action: 'git push', approved: true, by: 'ana', reason: 'reviewed' }),
    fact(5, { type: 'artifact.changed', path: 'src/b.ts', change: 'renamed', previousPath: 'src/a.ts', summary: 'split module' }),
    fact(6, { type: 'sandbox.state', description: 'node 20 container,\n  2 CPUs' }),
    fact(7, { type: 'command.failed', command: 'tsc', output: 'TS2304' }),
    fact(8, { type: 'test.result', status: 'passed', command: 'vitest run' }),
    fact(9, { type: 'approval.recorded', action: 'rm -rf dist', approved: false }),
    fact(10, { type: 'artifact.changed', path: 'README.md', change: 'modified' }),
  ];

  const expected = {
    failedCommands: ['npm test (exit 1): Expected 2, got 3', 'tsc: TS2304'],
    testResults: ['failed: parser (10 passed, 2 failed) — two edge cases', 'passed: vitest run'],
    userConfirmations: ['approved: git push by ana (reviewed)', 'rejected: rm -rf dist'],
    changedArtifacts: ['renamed src/b.ts (from src/a.ts): split module', 'modified README.md'],
    sandboxState: ['node 20 container, 2 CPUs'],
  };

  it('fills failedCommands, testResults, userConfirmations, changedArtifacts and sandboxState, in recorded order', () => {
    const result = new StructuredSummaryCompactPolicy({ maxItems: 2 }).compact({ items: turns(4), facts });
    expect(result).toMatchObject(expected);
    expect(factLists(facts)).toEqual(expected);
  });

  it('is deterministic', () => {
    const policy = new StructuredSummaryCompactPolicy({ maxItems: 2 });
    const a = policy.compact({ items: turns(4), facts });
    const b = policy.compact({ items: turns(4), facts: [...facts] });
    const { memory: _a, ...ra } = a;
    const { memory: _b, ...rb } = b;
    expect(ra).toEqual(rb);
    expect(JSON.stringify(ra)).toBe(JSON.stringify(rb));
  });

  it('leaves the lists empty without facts, and the semantic lists always empty', () => {
    const result = new StructuredSummaryCompactPolicy({ maxItems: 2 }).compact({ items: turns(4), facts });
    expect(result.completed).toEqual([]);
    expect(result.pending).toEqual([]);
    expect(result.decisions).toEqual([]);
    expect(result.openQuestions).toEqual([]);
    const none = new StructuredSummaryCompactPolicy({ maxItems: 2 }).compact({ items: turns(4) });
    expect(none).toMatchObject({ failedCommands: [], testResults: [], userConfirmations: [], changedArtifacts: [], sandboxState: [] });
  });

  it('clips long fact text to one line of at most 200 characters', () => {
    const [line] = factLists([fact(2, { type: 'command.failed', command: `run ${'a'.repeat(300)}\nnext` })]).failedCommands;
    expect(line!.length).toBe(200);
    expect(line).not.toContain('\n');
    expect(line!.endsWith('…')).toBe(true);
  });
});
