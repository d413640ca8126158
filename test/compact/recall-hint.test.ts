// The recall hint line: FactSummaryCompactPolicy and LlmCompactPolicy end their summary with it when the agent has a recall tool.
import { describe, expect, it } from 'vitest';
import { FactSummaryCompactPolicy, LlmCompactPolicy, isRecallHintLine, recallHintLine } from '../../src/compact/index.js';
import { assistantMessage, functionCall, functionCallOutput, userMessage, type MemoryItem } from '../../src/items/index.js';
import { ScriptedModelClient } from '../../src/model/index.js';

const items: MemoryItem[] = [
  userMessage('fix the parser'),
  functionCall('c1', 'read_file', { path: 'src/parser.ts' }),
  functionCallOutput('c1', 'export const parse = () => {}'),
  assistantMessage('read it'),
  userMessage('now the tests'),
  assistantMessage('on it'),
];

const lines = (summary: string | null | undefined): string[] => (summary ?? '').split('\n');

describe('FactSummaryCompactPolicy and the recall hint', () => {
  it('ends the summary with recallHintLine(name) when options.recallTool is given, and not otherwise', () => {
    const policy = new FactSummaryCompactPolicy({ maxItems: 2 });
    const withHint = policy.compact({ items }, { recallTool: 'lookup' });
    expect(lines(withHint.summary).at(-1)).toBe(recallHintLine('lookup'));
    expect(withHint.memory?.summary).toBe(withHint.summary);
    const without = policy.compact({ items });
    expect(without.summary).not.toContain('read back from the log');
    expect(withHint.summary).toBe(`${without.summary}\n\n${recallHintLine('lookup')}`);
  });

  it('a second compaction carries one hint, last, never as an entry of a section', () => {
    const policy = new FactSummaryCompactPolicy({ maxItems: 2 });
    const first = policy.compact({ items }, { recallTool: 'recall' });
    const second = policy.compact({ items: [...items, userMessage('and the docs'), assistantMessage('done')], summary: first.summary }, { recallTool: 'recall' });
    const all = lines(second.summary);
    expect(all.filter(isRecallHintLine)).toEqual([recallHintLine('recall')]);
    expect(all.at(-1)).toBe(recallHintLine('recall'));
    expect(all.some((line) => line.startsWith('- ') && isRecallHintLine(line.slice(2)))).toBe(false);
    // without the tool any more, the old hint is not carried
    const third = policy.compact({ items: [...items, userMessage('more'), assistantMessage('ok')], summary: second.summary });
    expect(lines(third.summary).some(isRecallHintLine)).toBe(false);
  });

  it('the hint counts toward maxSummaryChars', () => {
    const policy = new FactSummaryCompactPolicy({ maxItems: 2, maxSummaryChars: 200 });
    const long = Array.from({ length: 12 }, (_, i) => [userMessage(`request number ${i} with some words`), assistantMessage(`ok ${i}`)]).flat();
    const result = policy.compact({ items: long }, { recallTool: 'recall' });
    expect(result.summary!.length).toBeLessThanOrEqual(200);
    expect(lines(result.summary).at(-1)).toBe(recallHintLine('recall'));
  });
});

describe('LlmCompactPolicy and the recall hint', () => {
  const answer = '{"goal":"fix the parser","completed":["read the parser"]}';

  it('ends the summary with recallHintLine(name) when options.recallTool is given, and not otherwise', async () => {
    const withTool = await new LlmCompactPolicy(new ScriptedModelClient([{ outputText: answer, items: [] }]), 's', 2).compact({ items }, { recallTool: 'lookup' });
    expect(lines(withTool.summary).at(-1)).toBe(recallHintLine('lookup'));
    expect(withTool.memory?.summary).toBe(withTool.summary);
    const without = await new LlmCompactPolicy(new ScriptedModelClient([{ outputText: answer, items: [] }]), 's', 2).compact({ items });
    expect(lines(without.summary).some(isRecallHintLine)).toBe(false);
    expect(withTool.summary).toBe(`${without.summary}\n\n${recallHintLine('lookup')}`);
  });
});
