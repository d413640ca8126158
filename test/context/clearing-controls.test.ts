// Tier-1 under pressure: the note's count, results shorter than their placeholder, and the clearing controls; keepUserMessages.
import { describe, expect, it } from 'vitest';
import { TypeAwareContextProjector, DefaultContextProjector, approxChars, itemTokenCount, approxTokenizer, contextProjectorFromDescription } from '../../src/index.js';
import { assistantMessage, functionCall, functionCallOutput, userMessage } from '../../src/items/index.js';
import type { MemoryItem } from '../../src/items/index.js';
import { assertProjectorLaws } from '../../src/testing/index.js';

const projector = new TypeAwareContextProjector();
const long = (k: number): string => `contents of file ${k} `.repeat(20);
const rounds = (count: number, output: (k: number) => string = long, name = 'read_file'): MemoryItem[] =>
  Array.from({ length: count }, (_, k) => [functionCall(`c${k}`, name, { path: `f${k}.ts` }), functionCallOutput(`c${k}`, output(k))]).flat();
const cleared = (items: readonly MemoryItem[]): number => items.filter((i) => i.type === 'function_call_output' && String((i as { output: unknown }).output).startsWith('[tool result cleared')).length;

describe('Tier-1 note', () => {
  it('gives the number of results that kept their text under evictionStep (regression: said the configured 5 while 6 kept it)', () => {
    const items = [userMessage('go'), ...rounds(12)];
    const { items: sent, report } = projector.project(items, { maxRecentToolResults: 5, evictionStep: 2 });
    expect(cleared(sent)).toBe(6);
    expect(report.notes).toEqual(['tier1 microcompact: cleared 6 old tool result(s), kept recent 6']);
  });

  it('keeps the old note for recordings made before the change (tier1Rules 1)', () => {
    const items = [userMessage('go'), ...rounds(12)];
    const legacy = contextProjectorFromDescription({ name: 'TypeAwareContextProjector', settings: { tokenizer: 'approx' } });
    expect(legacy.project(items, { maxRecentToolResults: 5, evictionStep: 2 }).report.notes).toEqual(['tier1 microcompact: cleared 6 old tool result(s), kept recent 5']);
  });
});

describe('Tier-1 never adds tokens', () => {
  it('keeps a result shorter than its placeholder (fate kept, rule tier1-short, a note) (regression: it was replaced by a longer placeholder)', () => {
    const items = [userMessage('go'), functionCall('c0', 'bash', { cmd: 'true' }), functionCallOutput('c0', 'ok'), ...rounds(2).map((i) => i)];
    const { items: sent, report } = projector.project(items, { maxRecentToolResults: 0 });
    expect(sent[2]).toBe(items[2]);
    expect(report.fates[2]).toEqual({ index: 2, fate: 'kept', rule: 'tier1-short' });
    expect(report.notes).toEqual([
      'tier1 microcompact: cleared 2 old tool result(s), kept recent 1',
      'tier1 microcompact: kept 1 tool result(s) shorter than their placeholder',
    ]);
    expect(report.projectedApproxChars).toBeLessThanOrEqual(report.sourceApproxChars);
    for (let i = 0; i < items.length; i++) {
      expect(approxChars(sent[i] as MemoryItem)).toBeLessThanOrEqual(approxChars(items[i] as MemoryItem));
      expect(itemTokenCount(sent[i] as MemoryItem, approxTokenizer)).toBeLessThanOrEqual(itemTokenCount(items[i] as MemoryItem, approxTokenizer));
    }
  });
});

describe('clearing controls', () => {
  it('keepToolResultsOf: those tools are never cleared, and do not count among the newest N', () => {
    const items = [userMessage('go'), ...rounds(2, long, 'read_file'), functionCall('b0', 'bash', {}), functionCallOutput('b0', long(9)), functionCall('b1', 'bash', {}), functionCallOutput('b1', long(10))];
    const { items: sent, report } = projector.project(items, { maxRecentToolResults: 1, keepToolResultsOf: ['read_file'] });
    expect(sent[2]).toBe(items[2]);
    expect(sent[4]).toBe(items[4]);
    expect((sent[6] as { output: string }).output).toBe('[tool result cleared: bash(b0)]');
    expect(sent[8]).toBe(items[8]);
    expect(report.notes).toEqual(['tier1 microcompact: cleared 1 old tool result(s), kept recent 3', 'tier1 microcompact: kept 2 tool result(s) of read_file']);
  });

  it('clearToolInputs: the cleared results lose their calls\' arguments in every call shape, fate cleared', () => {
    const args = JSON.stringify({ path: 'src/a/very/long/path/to/some/file.ts', pattern: 'x'.repeat(80) });
    const items: MemoryItem[] = [
      userMessage('go'),
      functionCall('f1', 'grep', args),
      functionCallOutput('f1', long(1)),
      assistantMessage('', [{ id: 'n1', type: 'function', function: { name: 'grep', arguments: args } }, { id: 'n2', type: 'function', function: { name: 'grep', arguments: args } }]),
      functionCallOutput('n1', long(2)),
      functionCallOutput('n2', long(3)),
      assistantMessage('', [{ id: 'l1', type: 'function', name: 'grep', arguments: args }]),
      functionCallOutput('l1', long(4)),
      { type: 'message', role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'grep', input: { args } }] },
      functionCallOutput('t1', long(5)),
      functionCall('keep', 'grep', args),
      functionCallOutput('keep', long(6)),
    ];
    const { items: sent, report } = projector.project(items, { maxRecentToolResults: 2, clearToolInputs: true });
    expect(sent[1]).toEqual({ ...items[1], arguments: '{}' });
    expect((sent[3] as unknown as { tool_calls: unknown[] }).tool_calls).toEqual([
      { id: 'n1', type: 'function', function: { name: 'grep', arguments: '{}' } },
      { id: 'n2', type: 'function', function: { name: 'grep', arguments: '{}' } },
    ]);
    expect((sent[6] as unknown as { tool_calls: unknown[] }).tool_calls).toEqual([{ id: 'l1', type: 'function', name: 'grep', arguments: '{}' }]);
    expect(sent[8]).toBe(items[8]);
    expect(sent[10]).toBe(items[10]);
    expect(report.fates[1]).toEqual({ index: 1, fate: 'cleared', rule: 'tier1' });
    expect(report.fates[3]).toEqual({ index: 3, fate: 'cleared', rule: 'tier1' });
    expect(report.notes).toEqual(['tier1 microcompact: cleared 4 old tool result(s), kept recent 2', 'tier1 microcompact: cleared the inputs of 3 tool call(s)']);
    // With 3 kept, n2's result is among them: only n1 of that message loses its arguments.
    expect((projector.project(items, { maxRecentToolResults: 4, clearToolInputs: true }).items[3] as unknown as { tool_calls: unknown[] }).tool_calls).toEqual([
      { id: 'n1', type: 'function', function: { name: 'grep', arguments: '{}' } },
      { id: 'n2', type: 'function', function: { name: 'grep', arguments: args } },
    ]);
    const tooled = projector.project(items, { maxRecentToolResults: 1, clearToolInputs: true });
    expect((tooled.items[8] as { content: { input: unknown }[] }).content[0]?.input).toEqual({});
    assertProjectorLaws(projector, items, { maxRecentToolResults: 1, clearToolInputs: true, maxTokens: 200 });
  });

  it('clearToolInputs leaves a call whose arguments are already no longer than {}', () => {
    const items = [userMessage('go'), functionCall('c', 'ls', ''), functionCallOutput('c', long(1)), userMessage('next')];
    const { items: sent } = projector.project(items, { maxRecentToolResults: 0, clearToolInputs: true });
    expect(sent[1]).toBe(items[1]);
    expect(cleared(sent)).toBe(1);
  });

  it('clearAtLeastTokens: clears nothing until clearing gains that many tokens', () => {
    const items = [userMessage('go'), ...rounds(3)];
    const gain = projector.project(items, { maxRecentToolResults: 1 });
    const saved = (gain.report.sourceTokens ?? 0) - (gain.report.projectedTokens ?? 0);
    const below = projector.project(items, { maxRecentToolResults: 1, clearAtLeastTokens: saved + 1 });
    expect(below.items).toEqual(items);
    expect(below.report.notes).toEqual([`tier1 microcompact: skipped, clearing would gain ${saved} token(s), below clearAtLeastTokens ${saved + 1}`]);
    expect(cleared(projector.project(items, { maxRecentToolResults: 1, clearAtLeastTokens: saved }).items)).toBe(2);
  });

  it('clearAboveTokens: Tier-1 runs only while the source holds more tokens than that', () => {
    const items = [userMessage('go'), ...rounds(3)];
    const total = projector.project(items).report.sourceTokens ?? 0;
    const off = projector.project(items, { maxRecentToolResults: 1, clearAboveTokens: total });
    expect(off.items).toEqual(items);
    expect(off.report.notes).toEqual([`tier1 microcompact: skipped, ${total} source token(s) not above clearAboveTokens ${total}`]);
    expect(cleared(projector.project(items, { maxRecentToolResults: 1, clearAboveTokens: total - 1 }).items)).toBe(2);
  });
});

describe('keepUserMessages', () => {
  const session = (): MemoryItem[] => [
    userMessage('requirement: never touch the db'),
    ...rounds(3),
    userMessage('and use tabs'),
    ...rounds(4),
    assistantMessage('done'),
  ];

  it('keeps the newest N user messages wherever they stand, rule user, under maxItems', () => {
    const items = session();
    const { items: sent, report } = new DefaultContextProjector().project(items, { maxItems: 5, keepUserMessages: 2 });
    expect(sent).toHaveLength(5);
    expect(sent[0]).toBe(items[0]);
    expect(sent[1]).toBe(items[7]);
    expect(sent.at(-1)).toBe(items.at(-1));
    expect(report.fates[0]).toEqual({ index: 0, fate: 'kept', rule: 'user' });
    expect(report.fates[7]).toEqual({ index: 7, fate: 'kept', rule: 'user' });
    // Without it the request is gone.
    expect(new DefaultContextProjector().project(items, { maxItems: 5 }).items).not.toContain(items[0]);
  });

  it('counts them in the token budget, before the tail competes', () => {
    const items = session();
    const tokens = (item: MemoryItem): number => itemTokenCount(item, approxTokenizer);
    const budget = tokens(items[0] as MemoryItem) + tokens(items.at(-1) as MemoryItem) + 10;
    const { items: sent, report } = new DefaultContextProjector().project(items, { maxTokens: budget, keepUserMessages: 1 });
    expect(sent).toContain(items[7]);
    expect(report.projectedTokens).toBeLessThanOrEqual(budget);
    const first = new DefaultContextProjector().project(items, { maxTokens: budget + 200, keepUserMessages: 2 });
    expect(first.items).toContain(items[0]);
    assertProjectorLaws(new DefaultContextProjector(), items, { maxTokens: budget, keepUserMessages: 2, evictionStep: 3 });
  });

  it('does not take a user message that carries tool results, and gives way to the pinned prefix and the newest item', () => {
    const items: MemoryItem[] = [
      userMessage('task'),
      { type: 'message', role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'x', input: {} }] },
      { type: 'message', role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'r' }] },
      assistantMessage('ok'),
    ];
    const { report } = new DefaultContextProjector().project(items, { maxItems: 2, keepUserMessages: 1 });
    expect(report.fates.filter((f) => f.rule === 'user').map((f) => f.index)).toEqual([0]);
    expect(new DefaultContextProjector().project(items, { maxItems: 1, keepUserMessages: 1 }).items).toEqual([items[3]]);
  });
});
