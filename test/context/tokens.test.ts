import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  DefaultContextProjector,
  ITEM_TOKEN_OVERHEAD,
  TypeAwareContextProjector,
  approxTokenizer,
  contextProjectorFromDescription,
  itemTokenCount,
  openAiTokenizer,
  tokenizerFromName,
} from '../../src/context/index.js';
import type { Tokenizer } from '../../src/context/index.js';
import { assistantMessage, functionCall, functionCallOutput, reasoning, userMessage } from '../../src/items/index.js';
import type { MemoryItem } from '../../src/items/index.js';

/** A tokenizer that counts characters and records every text it was asked about. */
const spyTokenizer = (): Tokenizer & { seen: string[] } => {
  const seen: string[] = [];
  return { name: 'spy', seen, count: (text) => (seen.push(text), text.length) };
};

describe('tokenizers', () => {
  it('approxTokenizer counts characters / 4, rounded up', () => {
    expect(approxTokenizer.name).toBe('approx');
    expect(approxTokenizer.count('')).toBe(0);
    expect(approxTokenizer.count('abcd')).toBe(1);
    expect(approxTokenizer.count('hello world')).toBe(3);
  });

  it('openAiTokenizer counts exact o200k tokens, one shared instance per encoding', () => {
    const o200k = openAiTokenizer();
    expect(o200k.name).toBe('openai:o200k_base');
    expect(openAiTokenizer('o200k_base')).toBe(o200k);
    expect(o200k.count('')).toBe(0);
    expect(o200k.count('hello world')).toBe(2);
    expect(o200k.count('The quick brown fox jumps over the lazy dog.')).toBe(10);
    expect(openAiTokenizer('cl100k_base').count('hello world')).toBe(2);
    expect(() => openAiTokenizer('nope' as never)).toThrow('unknown OpenAI encoding');
  });

  it('counts special-token text as ordinary text instead of throwing', () => {
    const o200k = openAiTokenizer();
    expect(o200k.count('<|endoftext|>')).toBeGreaterThan(1);
    expect(o200k.count('a <|im_start|>system b')).toBeGreaterThan(3);
  });

  it('loads the encoding on the first count, not on import', () => {
    const script = `
      import { createRequire } from 'node:module';
      const { openAiTokenizer } = await import(${JSON.stringify(new URL('../../src/context/index.ts', import.meta.url).pathname)});
      const cache = createRequire(import.meta.url).cache;
      const loaded = () => Object.keys(cache).some((key) => key.includes('bpeRanks'));
      const tokenizer = openAiTokenizer();
      const before = loaded();
      tokenizer.count('hi');
      console.log(JSON.stringify({ before, after: loaded() }));`;
    const output = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(JSON.parse(output.trim())).toEqual({ before: false, after: true });
  });

  it('is found again by name', () => {
    expect(tokenizerFromName('approx')).toBe(approxTokenizer);
    expect(tokenizerFromName('openai:o200k_base')).toBe(openAiTokenizer());
    expect(tokenizerFromName('openai:cl100k_base')).toBe(openAiTokenizer('cl100k_base'));
    expect(tokenizerFromName('openai:nope')).toBeUndefined();
    expect(tokenizerFromName('words')).toBeUndefined();
  });
});

describe('itemTokenCount', () => {
  it('counts what a provider is sent, plus a per-item overhead', () => {
    const count = (item: MemoryItem): string[] => {
      const spy = spyTokenizer();
      const total = itemTokenCount(item, spy);
      expect(total).toBe(ITEM_TOKEN_OVERHEAD + spy.seen.reduce((sum, text) => sum + text.length, 0));
      return spy.seen;
    };
    expect(ITEM_TOKEN_OVERHEAD).toBe(4);
    expect(count(userMessage('hello'))).toEqual(['hello']);
    expect(count({ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'a' }, { type: 'input_text', text: 'b' }] })).toEqual(['a', 'b']);
    expect(count(assistantMessage('ok', [{ id: 'c1', type: 'function', function: { name: 'grep', arguments: '{"q":1}' } }]))).toEqual([
      'ok',
      'grep',
      '{"q":1}',
    ]);
    expect(count(functionCall('c1', 'read_file', { path: 'a' }))).toEqual(['read_file', '{"path":"a"}']);
    expect(count(functionCallOutput('c1', 'file text'))).toEqual(['file text']);
    expect(count({ type: 'reasoning', id: 'r', summary: [{ type: 'summary_text', text: 'plan' }] })).toEqual(['plan']);
    expect(count({ type: 'reasoning', id: 'r', output: '[reasoning cleared]' })).toEqual(['[reasoning cleared]']);
    expect(count({ type: 'message', role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'search', input: { q: 'x' } }] })).toEqual([
      'search',
      '{"q":"x"}',
    ]);
    // other types count their canonical JSON (sorted keys), so key order never changes a count
    expect(count({ type: 'web_search_call', id: 'ws', status: 'completed' })).toEqual(['{"id":"ws","status":"completed","type":"web_search_call"}']);
    expect(itemTokenCount(userMessage(''), approxTokenizer)).toBe(ITEM_TOKEN_OVERHEAD);
  });

  it('is memoized per tokenizer by item identity', () => {
    const spy = spyTokenizer();
    const item = Object.freeze(reasoning('r1', 'some reasoning text'));
    expect(itemTokenCount(item, spy)).toBe(itemTokenCount(item, spy));
    expect(spy.seen).toEqual(['some reasoning text']);
    const other = spyTokenizer();
    itemTokenCount(item, other);
    expect(other.seen).toHaveLength(1);
    itemTokenCount({ ...item }, spy);
    expect(spy.seen).toHaveLength(2);
  });

  it('lets projecting every turn tokenize history at most once', () => {
    const spy = spyTokenizer();
    const projector = new DefaultContextProjector({ tokenizer: spy });
    const history: MemoryItem[] = Array.from({ length: 50 }, (_, k) => Object.freeze(userMessage(`turn ${k}`)));
    projector.project(history, {});
    const afterFirst = spy.seen.length;
    expect(afterFirst).toBe(50);
    const grown = [...history, Object.freeze(userMessage('new'))];
    projector.project(grown, { maxTokens: 100 });
    expect(spy.seen.length).toBe(afterFirst + 1);
    projector.project(grown, { maxTokens: 10 });
    expect(new Set(spy.seen).size).toBe(spy.seen.length);
  });

  it('gives maxTokens exact o200k budgets', () => {
    const o200k = openAiTokenizer();
    const items = Array.from({ length: 40 }, (_, k) => userMessage(`message number ${k} with a few more words`));
    const { items: sent, report } = new DefaultContextProjector({ tokenizer: o200k }).project(items, { maxTokens: 100 });
    const spent = sent.reduce((sum, item) => sum + itemTokenCount(item, o200k), 0);
    expect(spent).toBeLessThanOrEqual(100);
    expect(spent + itemTokenCount(items[0] as MemoryItem, o200k)).toBeGreaterThan(100);
    expect(report.projectedTokens).toBe(spent);
    expect(report.notes).toEqual(['maxTokens applied: 100']);
  });
});

describe('describe and rebuild', () => {
  it('round-trips both projectors with their tokenizer', () => {
    for (const projector of [
      new DefaultContextProjector(),
      new TypeAwareContextProjector({ tokenizer: openAiTokenizer() }),
    ]) {
      const rebuilt = contextProjectorFromDescription(projector.describe());
      expect(rebuilt.describe()).toEqual(projector.describe());
      expect(rebuilt.constructor).toBe(projector.constructor);
    }
    expect(new TypeAwareContextProjector({ tokenizer: openAiTokenizer() }).describe()).toEqual({
      name: 'TypeAwareContextProjector',
      settings: { tokenizer: 'openai:o200k_base', tokenizerLibrary: 'gpt-tokenizer@4.0.0', tier1Rules: 2 },
    });
  });

  it('rejects unknown names', () => {
    expect(() => contextProjectorFromDescription({ name: 'Mine', settings: {} })).toThrow('unknown projector: "Mine"');
    expect(() => contextProjectorFromDescription({ name: 'DefaultContextProjector', settings: { tokenizer: 'words' } })).toThrow(
      'unknown tokenizer',
    );
  });
});
