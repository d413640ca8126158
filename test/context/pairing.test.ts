import { describe, expect, it } from 'vitest';
import { DefaultContextProjector, TypeAwareContextProjector, toolPairGroups } from '../../src/context/index.js';
import {
  approxChars,
  assistantMessage,
  callIdsOf,
  functionCall,
  functionCallOutput,
  outputCallIdOf,
  systemMessage,
  userMessage,
} from '../../src/items/index.js';
import type { MemoryItem } from '../../src/items/index.js';

const projector = new DefaultContextProjector();
const PAIRING_NOTE = (k: number): string => `pairing: dropped ${k} item(s) to keep tool calls with their results`;

/** Call ids sent without their partner, among those the source had both of. */
const separated = (source: readonly MemoryItem[], sent: readonly MemoryItem[]): string[] => {
  const pairedInSource = new Set(source.flatMap(callIdsOf).filter((id) => source.some((item) => outputCallIdOf(item) === id)));
  const issued = new Set(sent.flatMap(callIdsOf));
  const answered = new Set(sent.map(outputCallIdOf).filter((id): id is string => id !== undefined));
  return [...pairedInSource].filter((id) => issued.has(id) !== answered.has(id));
};

describe('tool pairing', () => {
  it('sends no orphan when the window would split a pair (the bug class of trim_messages and friends)', () => {
    const items = [
      userMessage('list the files'),
      functionCall('c1', 'ls', '{}'),
      functionCallOutput('c1', 'a.ts b.ts'),
      assistantMessage('two files'),
      userMessage('read a.ts'),
      functionCall('c2', 'read_file', { path: 'a.ts' }),
      functionCallOutput('c2', 'export const a = 1;'),
    ];
    // A naive "last 5" window starts at the output of c1, without its call.
    expect(outputCallIdOf(items[items.length - 5] as MemoryItem)).toBe('c1');
    const { items: sent, report } = projector.project(items, { maxItems: 5 });
    expect(separated(items, sent)).toEqual([]);
    expect(sent).toEqual(items.slice(3));
    expect(report.fates[2]).toEqual({ index: 2, fate: 'dropped', rule: 'pairing' });
    expect(report.fates[1]).toEqual({ index: 1, fate: 'dropped', rule: 'maxItems' });
    expect(report.notes).toEqual(['maxItems applied: 5', PAIRING_NOTE(1)]);
  });

  it('keeps an assistant message with several tool_calls together with all its outputs', () => {
    const items = [
      userMessage('check both'),
      assistantMessage('', [
        { id: 'p1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a"}' } },
        { id: 'p2', type: 'function', function: { name: 'read_file', arguments: '{"path":"b"}' } },
      ]),
      functionCallOutput('p1', 'A'),
      functionCallOutput('p2', 'B'),
      userMessage('ok'),
    ];
    expect(toolPairGroups(items).membersOf(3)).toEqual([1, 2, 3]);
    const cut = projector.project(items, { maxItems: 3 });
    expect(cut.items).toEqual([items[4]]);
    expect(cut.report.notes).toEqual(['maxItems applied: 3', PAIRING_NOTE(2)]);
    expect(projector.project(items, { maxItems: 4 }).items).toEqual(items.slice(1));
  });

  it('keeps the newest tool result with its call even when the call is far back', () => {
    const items = [
      userMessage('run the long job'),
      functionCall('job', 'run', '{}'),
      ...Array.from({ length: 6 }, (_, k) => userMessage(`progress ${k}`)),
      functionCallOutput('job', 'finished'),
    ];
    const { items: sent } = projector.project(items, { maxItems: 4 });
    expect(sent).toEqual([items[1], items[6], items[7], items[8]]);
    expect(separated(items, sent)).toEqual([]);
  });

  it('drops the newest item with its pair when the pair cannot fit in maxItems, and never exceeds maxItems', () => {
    const items = [userMessage('hi'), userMessage('go'), functionCall('c', 'ls', '{}'), functionCallOutput('c', 'x')];
    const { items: sent, report } = projector.project(items, { maxItems: 1 });
    expect(sent).toEqual([items[1]]);
    expect(report.fates.slice(2)).toEqual([
      { index: 2, fate: 'dropped', rule: 'pairing' },
      { index: 3, fate: 'dropped', rule: 'pairing' },
    ]);
    expect(report.notes).toEqual(['maxItems applied: 1', PAIRING_NOTE(2)]);
  });

  it('keeps a pinned call with its output, or drops both when they cannot fit', () => {
    const items = [functionCall('boot', 'setup', '{}'), ...Array.from({ length: 5 }, (_, k) => userMessage(`m${k}`)), functionCallOutput('boot', 'ready'), userMessage('last')];
    const fits = projector.project(items, { maxItems: 4, pinnedPrefixItems: 1 });
    expect(fits.items).toEqual([items[0], items[5], items[6], items[7]]);
    const tight = projector.project(items, { maxItems: 1, pinnedPrefixItems: 1 });
    expect(tight.items).toEqual([]);
    expect(tight.report.fates[0]).toEqual({ index: 0, fate: 'dropped', rule: 'pairing' });
  });

  it('drops a pair whole under a character limit, and lets the newest pair exceed it', () => {
    const big = 'x'.repeat(400);
    const items = [
      userMessage('a'),
      functionCall('old', 'read_file', '{}'),
      functionCallOutput('old', big),
      userMessage('b'),
      functionCall('new', 'read_file', '{}'),
      functionCallOutput('new', big),
    ];
    // The newest pair is always sent; the rest of the limit leaves room for the two user messages only.
    const limit = approxChars(items[4]) + approxChars(items[5]) + approxChars(items[0]) + approxChars(items[3]) + 10;
    const { items: sent, report } = projector.project(items, { maxApproxChars: limit });
    expect(sent).toEqual([items[0], items[3], items[4], items[5]]);
    expect(report.fates.slice(1, 3)).toEqual([
      { index: 1, fate: 'dropped', rule: 'maxApproxChars' },
      { index: 2, fate: 'dropped', rule: 'maxApproxChars' },
    ]);
    expect(report.notes).toEqual([`maxApproxChars applied: ${limit}`]);
    const tiny = projector.project(items, { maxApproxChars: 10 });
    expect(tiny.items).toEqual(items.slice(4));
    expect(tiny.report.projectedApproxChars).toBeGreaterThan(10);
  });

  it('passes orphans through as they are', () => {
    const items = [
      functionCallOutput('lost_call', 'output whose call was compacted away'),
      userMessage('u'),
      functionCall('never_answered', 'bash', '{}'),
      userMessage('v'),
    ];
    expect(projector.project(items).items).toEqual(items);
    const { items: sent, report } = projector.project(items, { maxItems: 2 });
    expect(sent).toEqual(items.slice(2));
    expect(report.notes).toEqual(['maxItems applied: 2']);
  });

  it('pairs Anthropic tool_use parts with tool_result parts and with outputs', () => {
    const items: MemoryItem[] = [
      userMessage('q'),
      { type: 'message', role: 'assistant', content: [{ type: 'tool_use', id: 'tu1', name: 'search', input: {} }] },
      { type: 'message', role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu1', content: 'found' }] },
      { type: 'message', role: 'assistant', content: [{ type: 'tool_use', id: 'tu2', name: 'search', input: {} }] },
      functionCallOutput('tu2', 'found again'),
      systemMessage('end'),
    ];
    expect(toolPairGroups(items).membersOf(2)).toEqual([1, 2]);
    expect(projector.project(items, { maxItems: 4 }).items).toEqual(items.slice(3));
    expect(projector.project(items, { maxItems: 5 }).items).toEqual(items.slice(1));
  });

  it('writes the pairing note last, after the tier and limit notes', () => {
    const items = [
      userMessage('u'),
      functionCall('a', 'ls', '{}'),
      functionCallOutput('a', 'x'.repeat(200)),
      functionCall('b', 'ls', '{}'),
      functionCallOutput('b', 'y'),
      userMessage('again'),
    ];
    const { report } = new TypeAwareContextProjector().project(items, { maxRecentToolResults: 1, maxItems: 4, evictionStep: 1 });
    expect(report.notes).toEqual(['tier1 microcompact: cleared 1 old tool result(s), kept recent 1', 'maxItems applied: 4', PAIRING_NOTE(1)]);
  });
});
