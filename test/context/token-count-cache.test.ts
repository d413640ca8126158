// Token counts exported beside a checkpoint and imported after a resume: the restored items project as the
// originals do without being counted again; bad snapshots are refused with the offending field.
import { describe, expect, it } from 'vitest';
import {
  DefaultContextProjector,
  InvalidTokenCountSnapshotError,
  exportTokenCounts,
  importTokenCounts,
  itemTokenCount,
  openAiTokenizer,
  tokenCountKey,
} from '../../src/context/index.js';
import type { Tokenizer } from '../../src/context/index.js';
import { assistantMessage, functionCall, functionCallOutput, userMessage } from '../../src/items/index.js';
import type { MemoryItem } from '../../src/items/index.js';

const spy = (): Tokenizer & { seen: string[] } => {
  const seen: string[] = [];
  return { name: 'spy', seen, count: (text) => (seen.push(text), text.split(' ').length) };
};

const session = (turns: number): MemoryItem[] =>
  Array.from({ length: turns }, (_, k) => [
    userMessage(`question ${k} about the code`),
    functionCall(`c${k}`, 'grep', { pattern: `needle ${k}` }),
    functionCallOutput(`c${k}`, `match ${k}: ${'word '.repeat(k % 17)}`),
    assistantMessage(`answer ${k}`),
  ]).flat().map((item) => Object.freeze(item));

/** The items as a resume rebuilds them: the same JSON, new objects. */
// Frozen as memory's items are: the projection caches remember frozen items only (src/context/caches.ts).
const restored = (items: readonly MemoryItem[]): MemoryItem[] => (JSON.parse(JSON.stringify(items)) as MemoryItem[]).map((item) => Object.freeze(item));

describe('token count snapshots', () => {
  it('let the first projection after a resume count nothing already counted, with the same outcome', () => {
    const tokenizer = spy();
    const projector = new DefaultContextProjector({ tokenizer });
    const items = session(60).map((item) => Object.freeze(item));
    const budget = { maxTokens: 300, pinnedPrefixItems: 1 };
    const before = projector.project(items, budget);
    const counted = tokenizer.seen.length;
    expect(counted).toBeGreaterThan(0);
    const snapshot = JSON.parse(JSON.stringify(exportTokenCounts(items, tokenizer))) as unknown;
    expect(tokenizer.seen.length).toBe(counted);

    const resumed = restored(items);
    expect(importTokenCounts(resumed, snapshot, tokenizer)).toBe(Object.keys((snapshot as { counts: object }).counts).length);
    const after = projector.project(resumed, budget);
    expect(tokenizer.seen.length).toBe(counted);
    expect(after).toEqual(before);
  });

  it('exports only what was counted, keyed by the texts an item is counted for (not its id)', () => {
    const tokenizer = openAiTokenizer();
    const items = [userMessage('one two'), userMessage('three')].map((item) => Object.freeze(item));
    expect(exportTokenCounts(items, tokenizer).counts).toEqual({});
    itemTokenCount(items[0] as MemoryItem, tokenizer);
    const snapshot = exportTokenCounts(items, tokenizer);
    expect(snapshot).toEqual({ version: 1, tokenizer: 'openai:o200k_base', counts: { [tokenCountKey(items[0] as MemoryItem)]: itemTokenCount(items[0] as MemoryItem, tokenizer) } });
    expect(tokenCountKey(userMessage('one two'))).toBe(tokenCountKey({ ...userMessage('one two'), id: 'm1' } as MemoryItem));
    expect(tokenCountKey(userMessage('one two'))).not.toBe(tokenCountKey(userMessage('one  two')));
    // Text boundaries are part of the key: ("ab", "c") and ("a", "bc") differ.
    expect(tokenCountKey(functionCall('c', 'ab', 'c'))).not.toBe(tokenCountKey(functionCall('c', 'a', 'bc')));
  });

  it('refuses a snapshot of another tokenizer or of the wrong shape, naming the field', () => {
    const items = session(2);
    const tokenizer = spy();
    const key = tokenCountKey(items[0] as MemoryItem);
    const attempt = (snapshot: unknown): unknown => importTokenCounts(items, snapshot, tokenizer);
    expect(() => attempt({ version: 1, tokenizer: 'openai:o200k_base', counts: {} })).toThrow(
      'invalid token count snapshot: tokenizer: the snapshot was made with "openai:o200k_base", not "spy"',
    );
    expect(() => attempt({ version: 2, tokenizer: 'spy', counts: {} })).toThrow(InvalidTokenCountSnapshotError);
    expect(() => attempt({ version: 1, tokenizer: 'spy', counts: { [key]: 2 } })).toThrow(`invalid token count snapshot: counts.${key}:`);
    expect(() => attempt({ version: 1, tokenizer: 'spy', counts: { [key]: 7.5 } })).toThrow(`counts.${key}`);
    expect(() => attempt({ version: 1, tokenizer: 'spy', counts: { __proto__x: 9 } })).toThrow('counts.__proto__x');
    expect(() => attempt(null)).toThrow('invalid token count snapshot: (root)');
    expect(() => attempt({ version: 1, tokenizer: 'spy', counts: {}, extra: true })).toThrow(InvalidTokenCountSnapshotError);
    expect(tokenizer.seen).toEqual([]);
  });

  it('leaves counts an item already has, and ignores keys of items it is not given', () => {
    const tokenizer = spy();
    const items = session(3);
    const counted = items[0] as MemoryItem;
    const own = itemTokenCount(counted, tokenizer);
    const stranger = tokenCountKey(userMessage('not in this session'));
    const snapshot = { version: 1, tokenizer: 'spy', counts: { [tokenCountKey(counted)]: own + 100, [stranger]: 5 } };
    expect(importTokenCounts(items, snapshot, tokenizer)).toBe(0);
    expect(itemTokenCount(counted, tokenizer)).toBe(own);
  });
});
