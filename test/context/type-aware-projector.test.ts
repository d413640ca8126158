import { describe, expect, it } from 'vitest';
import { DefaultContextProjector, TypeAwareContextProjector } from '../../src/context/index.js';
import {
  assistantMessage,
  functionCall,
  functionCallOutput,
  reasoning,
  systemMessage,
  userMessage,
} from '../../src/items/index.js';
import type { MemoryItem } from '../../src/items/index.js';
import { deepFreeze } from '../../src/testing/index.js';

const projector = new TypeAwareContextProjector();
const outputsOf = (items: readonly MemoryItem[]): unknown[] =>
  items.filter((item) => item.type === 'function_call_output').map((item) => (item as { output?: unknown }).output);

/** `count` rounds of: call `call_k` to read_file, its output. */
const toolRounds = (count: number): MemoryItem[] =>
  Array.from({ length: count }, (_, k) => [
    functionCall(`call_${k + 1}`, 'read_file', { path: `f${k + 1}.ts` }),
    functionCallOutput(`call_${k + 1}`, `contents of f${k + 1}.ts `.repeat(20)),
  ]).flat();

describe('TypeAwareContextProjector, Tier-1 (maxRecentToolResults)', () => {
  it('replaces all but the newest N tool results by placeholders', () => {
    const items = [userMessage('read the files'), ...toolRounds(5)];
    const { items: sent, report } = projector.project(items, { maxRecentToolResults: 2 });
    expect(sent).toHaveLength(items.length);
    expect(outputsOf(sent)).toEqual([
      '[tool result cleared: read_file(call_1)]',
      '[tool result cleared: read_file(call_2)]',
      '[tool result cleared: read_file(call_3)]',
      (items[8] as { output: string }).output,
      (items[10] as { output: string }).output,
    ]);
    expect(sent[2]).toEqual({ type: 'function_call_output', call_id: 'call_1', output: '[tool result cleared: read_file(call_1)]' });
    expect(report.notes).toEqual(['tier1 microcompact: cleared 3 old tool result(s), kept recent 2']);
    expect(report.fates[2]).toEqual({ index: 2, fate: 'cleared', rule: 'tier1' });
    expect(report.fates[8]).toEqual({ index: 8, fate: 'kept', rule: 'tail' });
    expect(report.projectedApproxChars).toBeLessThan(report.sourceApproxChars);
    expect(report.droppedItemCount).toBe(0);
  });

  it('falls back to the call id when the name cannot be resolved, and to no id at all', () => {
    const items: MemoryItem[] = [
      functionCallOutput('call_gone', 'orphan output '.repeat(10)),
      { type: 'function_call_output', call_id: '', output: 'no id '.repeat(10) },
      { type: 'function_call_output', output: 'no call_id key '.repeat(10) },
      assistantMessage('', [{ id: 'call_anon', type: 'function' }]),
      functionCallOutput('call_anon', 'nameless call '.repeat(10)),
      userMessage('next'),
    ];
    const { items: sent } = projector.project(items, { maxRecentToolResults: 0 });
    expect(outputsOf(sent)).toEqual([
      '[tool result cleared: call_gone]',
      '[tool result cleared]',
      '[tool result cleared]',
      '[tool result cleared: call_anon]',
    ]);
    expect(sent[2]).toEqual({ type: 'function_call_output', output: '[tool result cleared]' });
  });

  it('joins names through nested function.name, flat tool_calls names and tool_use parts', () => {
    const items: MemoryItem[] = [
      assistantMessage('', [{ id: 'c_nested', type: 'function', function: { name: 'grep', arguments: '{}' } }]),
      functionCallOutput('c_nested', 'match '.repeat(20)),
      assistantMessage('', [{ id: 'c_flat', type: 'function', name: 'bash', arguments: '{}' }]),
      functionCallOutput('c_flat', 'ok '.repeat(20)),
      { type: 'message', role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'web_fetch', input: {} }] },
      functionCallOutput('toolu_1', '<html> '.repeat(20)),
      userMessage('thanks'),
    ];
    const { items: sent, report } = projector.project(items, { maxRecentToolResults: 0 });
    expect(outputsOf(sent)).toEqual([
      '[tool result cleared: grep(c_nested)]',
      '[tool result cleared: bash(c_flat)]',
      '[tool result cleared: web_fetch(toolu_1)]',
    ]);
    expect(report.notes).toEqual(['tier1 microcompact: cleared 3 old tool result(s), kept recent 0']);
  });

  it('is off for a negative N and without the option, and writes no note when nothing is cleared', () => {
    const items = [userMessage('go'), ...toolRounds(3)];
    expect(projector.project(items, { maxRecentToolResults: -1 }).items).toEqual(items);
    expect(projector.project(items, {}).items).toEqual(items);
    const { items: sent, report } = projector.project(items, { maxRecentToolResults: 3 });
    expect(sent).toEqual(items);
    expect(report.notes).toEqual([]);
  });

  it('runs before the character limit, so more items survive', () => {
    const items = [userMessage('start'), ...toolRounds(6), userMessage('and now?')];
    const budget = { maxApproxChars: 1_500, maxRecentToolResults: 1 };
    const plain = new DefaultContextProjector().project(items, budget);
    const tiered = projector.project(items, budget);
    expect(tiered.items.length).toBeGreaterThan(plain.items.length);
    expect(tiered.report.notes[0]).toBe('tier1 microcompact: cleared 5 old tool result(s), kept recent 1');
    expect(tiered.report.projectedApproxChars).toBeLessThanOrEqual(1_500);
  });

  it('rewrites copies: the source array and its objects are untouched (deep-frozen input)', () => {
    const items = deepFreeze([userMessage('go'), ...toolRounds(4), reasoning('rs_1', 'thinking'), userMessage('more')]);
    const before = structuredClone(items);
    const { items: sent, report } = projector.project(items, { maxRecentToolResults: 1, trimOldReasoning: true, maxItems: 8 });
    expect(items).toEqual(before);
    const rewrittenIndices = report.fates.filter((f) => f.fate === 'cleared' || f.fate === 'trimmed').map((f) => f.index);
    expect(rewrittenIndices).toEqual([4, 6, 9]);
    const sentIndices = report.fates.filter((f) => f.fate !== 'dropped').map((f) => f.index);
    sent.forEach((item, j) => {
      const index = sentIndices[j] as number;
      if (rewrittenIndices.includes(index)) expect(item).not.toBe(items[index]);
      else expect(item).toBe(items[index]);
    });
  });
});

describe('TypeAwareContextProjector, Tier-2 (trimOldReasoning)', () => {
  it('clears reasoning before the last user message only, keeping type, id and other keys', () => {
    const items: MemoryItem[] = [
      userMessage('first'),
      { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'plan' }], encrypted_content: 'enc', status: 'done' },
      assistantMessage('answer 1'),
      userMessage('second'),
      reasoning('rs_2', 'current thinking'),
      assistantMessage('answer 2'),
    ];
    const { items: sent, report } = projector.project(items, { trimOldReasoning: true });
    expect(sent[1]).toEqual({ type: 'reasoning', id: 'rs_1', encrypted_content: 'enc', status: 'done', output: '[reasoning cleared]' });
    expect(sent[4]).toBe(items[4]);
    expect(report.notes).toEqual(['tier2 reasoning-trim: cleared 1 reasoning item(s)']);
    expect(report.fates[1]).toEqual({ index: 1, fate: 'trimmed', rule: 'tier2' });
    expect(report.fates[4]).toEqual({ index: 4, fate: 'kept', rule: 'tail' });
  });

  it('drops summary, content and text', () => {
    const items: MemoryItem[] = [
      { type: 'reasoning', id: 'a', content: [{ type: 'reasoning_text', text: 'x' }] },
      { type: 'reasoning', id: 'b', text: 'y' },
      userMessage('now'),
    ];
    const { items: sent } = projector.project(items, { trimOldReasoning: true });
    expect(sent.slice(0, 2)).toEqual([
      { type: 'reasoning', id: 'a', output: '[reasoning cleared]' },
      { type: 'reasoning', id: 'b', output: '[reasoning cleared]' },
    ]);
  });

  it('trims every reasoning item when there is no user message', () => {
    const items = [systemMessage('sys'), reasoning('r1', 'a'), assistantMessage('x'), reasoning('r2', 'b')];
    const { items: sent, report } = projector.project(items, { trimOldReasoning: true });
    expect(sent.filter((item) => item.type === 'reasoning')).toEqual([
      { type: 'reasoning', id: 'r1', output: '[reasoning cleared]' },
      { type: 'reasoning', id: 'r2', output: '[reasoning cleared]' },
    ]);
    expect(report.notes).toEqual(['tier2 reasoning-trim: cleared 2 reasoning item(s)']);
  });

  it('is off by default and with trimOldReasoning: false', () => {
    const items = [reasoning('r1', 'a'), userMessage('u')];
    expect(projector.project(items).items).toEqual(items);
    expect(projector.project(items, { trimOldReasoning: false }).items).toEqual(items);
  });
});

describe('TypeAwareContextProjector, with the limits', () => {
  it('writes the notes of the reference: tiers first, then the limits', () => {
    const items = [
      systemMessage('summary'),
      ...Array.from({ length: 12 }, (_, k) => [
        userMessage(`ask ${k}`),
        reasoning(`rs_${k}`, 'think'),
        functionCall(`call_${k}`, 'read', '{}'),
        functionCallOutput(`call_${k}`, 'data '.repeat(20)),
      ]).flat(),
    ];
    const { report } = projector.project(items, { maxItems: 40, pinnedPrefixItems: 1, maxRecentToolResults: 5, trimOldReasoning: true });
    expect(report.notes).toEqual([
      'tier1 microcompact: cleared 7 old tool result(s), kept recent 5',
      'tier2 reasoning-trim: cleared 11 reasoning item(s)',
      'maxItems applied: 40',
    ]);
    expect(report.projectedItemCount).toBeLessThanOrEqual(40);
  });

  it('behaves exactly like DefaultContextProjector with neither tier configured', () => {
    const items = [systemMessage('s'), userMessage('u'), ...toolRounds(5), reasoning('r', 'x'), userMessage('v')];
    const budget = { maxItems: 6, maxApproxChars: 900, pinnedPrefixItems: 1, maxRecentToolResults: -1, trimOldReasoning: false };
    expect(projector.project(items, budget)).toEqual(new DefaultContextProjector().project(items, budget));
  });

  it('returns the same rewritten copies turn after turn (items frozen, as memory\'s are)', () => {
    const items = [userMessage('go'), ...toolRounds(3)].map((item) => Object.freeze(item));
    const first = projector.project(items, { maxRecentToolResults: 1 });
    const second = projector.project([...items, userMessage('next')], { maxRecentToolResults: 1 });
    expect(second.items[2]).toBe(first.items[2]);
    expect(Object.isFrozen(first.items[2])).toBe(true);
  });

  it('describes itself', () => {
    expect(projector.describe()).toEqual({ name: 'TypeAwareContextProjector', settings: { tokenizer: 'approx', tier1Rules: 2 } });
    // Recorded before tier1Rules: rebuilt with the rules of then.
    expect(new TypeAwareContextProjector({ tier1Rules: 1 }).describe()).toEqual({ name: 'TypeAwareContextProjector', settings: { tokenizer: 'approx' } });
  });
});
