// Tool pairing (law 7): no call or result is sent without its partner, whatever the budget, with several results per
// call, reused call ids, and a policy that drops calls (the runtime's orphan guard).
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { LlmCompactPolicy, findStepBoundaryCut, findTurnBoundaryCut, type CompactPolicy } from '../../src/compact/index.js';
import {
  DefaultContextProjector,
  TypeAwareContextProjector,
  approxTokenizer,
  toolPairGroups,
  type ContextBudget,
  type ContextProjector,
} from '../../src/context/index.js';
import { itemTokenCount } from '../../src/context/measure/items.js';
import { dropOrphans, projectForModel } from '../../src/context/orphans.js';
import { fatesOf, type SessionEvent } from '../../src/events/index.js';
import {
  approxChars,
  assistantMessage,
  callIdsOf,
  functionCall,
  functionCallOutput,
  isFunctionCall,
  outputCallIdOf,
  systemMessage,
  userMessage,
} from '../../src/items/index.js';
import type { MemoryItem } from '../../src/items/index.js';
import { openMemoryLog } from '../../src/log/index.js';
import { ScriptedModelClient, type ModelResult } from '../../src/model/index.js';
import { replaySession } from '../../src/replay/index.js';
import { Agents, defineTool } from '../../src/runtime/index.js';
import { arbitraryItems, assertProjectorLaws, checkProjectorLaws } from '../../src/testing/index.js';
import { checkSessionLaws } from '../../src/testing/runtime-laws.js';

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

// Law 7 with several results per call: every result of a call, in every shape and however many, travels with its call.
const call = functionCall('d', 'read_file', { path: 'a.ts' });
const userResult = (text: string): MemoryItem => ({ type: 'message', role: 'user', content: [{ type: 'tool_result', tool_use_id: 'd', content: text }] });
const assistantResult = (text: string): MemoryItem => ({ type: 'message', role: 'assistant', content: [{ type: 'tool_result', tool_use_id: 'd', content: text }] });
const chatResult = (text: string): MemoryItem => ({ type: 'message', role: 'tool', tool_call_id: 'd', content: text });

/** Whether `item` answers call d, in any shape. */
const answersD = (item: MemoryItem): boolean => {
  const i = item as { type: string; call_id?: string; role?: string; tool_call_id?: string; content?: unknown };
  if (i.type === 'function_call_output') return i.call_id === 'd';
  if (i.role === 'tool' && i.tool_call_id === 'd') return true;
  return Array.isArray(i.content) && (i.content as { type?: string; tool_use_id?: string }[]).some((p) => p.type === 'tool_result' && p.tool_use_id === 'd');
};

const projectors: [string, ContextProjector][] = [
  ['DefaultContextProjector', new DefaultContextProjector()],
  ['TypeAwareContextProjector', new TypeAwareContextProjector()],
];

const cases: [string, MemoryItem[], ContextBudget][] = [
  ['two outputs, maxItems 2', [call, functionCallOutput('d', 'one'), functionCallOutput('d', 'two')], { maxItems: 2 }],
  ['two outputs, maxTokens 1', [call, functionCallOutput('d', 'one'), functionCallOutput('d', 'two')], { maxTokens: 1 }],
  ['a user tool_result then an output, maxApproxChars 300', [call, userResult('partial'), functionCallOutput('d', 'x'.repeat(300))], { maxApproxChars: 300 }],
  ['an assistant message carrying a tool_result', [userMessage('go'), call, functionCallOutput('d', 'one'), assistantResult('again')], { maxItems: 2 }],
  ['a Chat role:tool result', [userMessage('go'), call, chatResult('x'.repeat(500))], { maxItems: 1 }],
  ['three results in three shapes', [call, chatResult('a'), userResult('b'), functionCallOutput('d', 'c')], { maxApproxChars: 10 }],
];

describe('every result of a call is in its pairing group', () => {
  it('the groups join every shape and every repeat to the call', () => {
    const items = [call, functionCallOutput('d', 'one'), userResult('b'), assistantResult('c'), chatResult('e'), functionCallOutput('d', 'two')];
    expect(toolPairGroups(items).membersOf(5)).toEqual([0, 1, 2, 3, 4, 5]);
    // A reused id still pairs each output with its own turn's call; a later repeat joins the latest call.
    const reused = [call, functionCallOutput('d', 'turn 1'), call, functionCallOutput('d', 'turn 2'), functionCallOutput('d', 'turn 2 again')];
    expect(toolPairGroups(reused).membersOf(0)).toEqual([0, 1]);
    expect(toolPairGroups(reused).membersOf(4)).toEqual([2, 3, 4]);
  });

  for (const [name, projector] of projectors) {
    for (const [what, items, budget] of cases) {
      it(`${name}: ${what}: no result is sent without its call`, () => {
        const { items: sent } = projector.project(items, budget);
        if (sent.some(answersD)) expect(sent).toContainEqual(call);
        assertProjectorLaws(projector, items, budget);
        // The runtime's guard then finds nothing to drop.
        expect(projectForModel(projector, items, budget).items).toEqual(sent);
      });
    }
  }

  it('a compaction cut never separates a later result from its call', () => {
    const items = [userMessage('one'), call, functionCallOutput('d', 'first'), userMessage('two'), chatResult('second'), userMessage('three')];
    const cut = findTurnBoundaryCut(items, 3);
    expect(cut <= 1 || cut > 4).toBe(true);
  });

  it('dropOrphans keeps a second result of a call that is sent', () => {
    const items = [call, functionCallOutput('d', 'one'), functionCallOutput('d', 'two'), chatResult('three')];
    const projection = new DefaultContextProjector().project(items);
    expect(dropOrphans(projection)).toBe(projection);
    const alone = new DefaultContextProjector().project(items.slice(1));
    expect(dropOrphans(alone).items).toEqual([]);
  });

  it('the law check catches a projector that sends a second result without its call', () => {
    // Sends only the newest item: a second result of call d, without the call.
    const keepsNewest: ContextProjector = {
      project: (items) => {
        const projection = new DefaultContextProjector().project(items);
        const last = items.length - 1;
        return {
          items: [items[last]!],
          report: {
            ...projection.report,
            projectedItemCount: 1,
            droppedItemCount: items.length - 1,
            projectedApproxChars: approxChars(items[last]!),
            projectedTokens: itemTokenCount(items[last]!, approxTokenizer),
            fates: projection.report.fates.map((f) => (f.index === last ? f : { ...f, fate: 'dropped', rule: 'maxItems' })),
          },
        };
      },
      describe: () => ({ name: 'KeepsNewest', settings: {} }),
    };
    expect(() => assertProjectorLaws(keepsNewest, [call, functionCallOutput('d', 'one'), chatResult('two')], {})).toThrow(/law 7/);
  });

  for (const [name, projector] of projectors) {
    it(`checkProjectorLaws(${name}) holds on sessions with several results per call, in every shape`, () => {
      checkProjectorLaws(projector, { items: arbitraryItems({ maxTurns: 4 }), numRuns: 150 });
    });
  }
});

// Fault: a model that reuses one call id every turn (`call_0`) made pairing join the whole history into one group.
/** A request, then 30 turns that all use `call_0`, each with a long output. */
const history = (): MemoryItem[] => {
  const items: MemoryItem[] = [userMessage('Fix the failing date parser test.')];
  for (let turn = 0; turn < 30; turn++) {
    items.push(functionCall('call_0', 'bash', { command: `cat src/file-${turn}.ts` }));
    items.push(functionCallOutput('call_0', `// file ${turn}\n${'export const value = 1;\n'.repeat(40)}`));
  }
  return items.map((i) => Object.freeze(i));
};

describe('a model that reuses one call id every turn', () => {
  it('pairs each output with the nearest earlier unanswered call of that id', () => {
    const items = history();
    const groups = toolPairGroups(items);
    expect(groups.membersOf(1)).toEqual([1, 2]);
    expect(groups.membersOf(60)).toEqual([59, 60]);
    expect(groups.sizeOf(0)).toBe(1);
  });

  it('maxTokens: 1000 sends at most 1000 tokens, the newest turns', () => {
    const projection = new DefaultContextProjector().project(history(), { maxTokens: 1000 });
    expect(projection.report.projectedTokens).toBeLessThanOrEqual(1000);
    expect(projection.items.length).toBeGreaterThanOrEqual(2);
    expect(projection.items.at(-1)).toMatchObject({ type: 'function_call_output', output: expect.stringContaining('file 29') });
    assertProjectorLaws(new DefaultContextProjector(), history(), { maxTokens: 1000 });
  });

  it('maxItems: 10 sends the newest 10 items, not only the first message', () => {
    const items = history();
    const projection = new DefaultContextProjector().project(items, { maxItems: 10 });
    expect(projection.items).toEqual(items.slice(-10));
    assertProjectorLaws(new DefaultContextProjector(), items, { maxItems: 10, pinnedPrefixItems: 1 });
  });

  it('compaction cuts between turns instead of summarising nothing', async () => {
    const items = history();
    expect(findStepBoundaryCut(items, 41)).toBe(41);
    const client = new ScriptedModelClient([{ outputText: '{"goal": "fix the parser", "completed": ["read 20 files"]}', items: [] }]);
    const result = await new LlmCompactPolicy(client, 'm', 10).compact({ items });
    expect(result.memory?.items.length).toBeLessThanOrEqual(11);
    expect(client.requests).toHaveLength(1);
  });
});

// Fault: a custom policy that keeps a tool output but drops its call made the runtime send that orphan output on every request.
const final = (text: string): ModelResult => ({ outputText: text, items: [assistantMessage(text)] });
const echo = defineTool({ name: 'echo', description: 'Echo', parameters: z.object({ text: z.string() }), execute: ({ text }) => `echo: ${text}` });

describe('the runtime never sends a tool output without its call', () => {
  it('a policy that keeps an output but drops its call: the output is dropped from every request with rule orphan and a note', async () => {
    // Drops every function_call, keeps everything else (a buggy custom policy).
    const dropCalls: CompactPolicy = {
      shouldCompact: (s) => s.items.some((i) => isFunctionCall(i)),
      compact: (s) => ({
        completed: [], pending: [], decisions: [], changedArtifacts: [], failedCommands: [], testResults: [],
        userConfirmations: [], sandboxState: [], openQuestions: [], readFiles: [], modifiedFiles: [],
        memory: { items: s.items.filter((i) => !isFunctionCall(i)), summary: null },
      }),
      describe: () => ({ name: 'DropCalls', settings: {} }),
    };
    const log = await openMemoryLog();
    const model = new ScriptedModelClient([{ items: [functionCall('c1', 'echo', { text: 'a' })] }, final('done'), final('again')]);
    let n = 0;
    const session = await Agents.react({ modelClient: model, model: 'm', tools: [echo], log, compactPolicy: dropCalls, ids: () => `o-${++n}` }).newSession();
    await session.run('go');
    await session.run('more');
    // Memory holds the orphan output…
    expect(session.memory.getItems().some((i) => i.type === 'function_call_output')).toBe(true);
    // …but no request after the compaction carries it.
    for (const request of model.requests.slice(1)) {
      expect(request.items.some((i) => i.type === 'function_call_output')).toBe(false);
    }
    const events: SessionEvent[] = [];
    for await (const e of log.read(session.id)) events.push(e);
    const projected = events.filter((e) => e.type === 'context.projected').at(-1);
    if (projected?.type !== 'context.projected') throw new Error('no projection');
    expect(fatesOf(projected).filter((f) => f.rule === 'orphan').map(({ fate, rule }) => ({ fate, rule }))).toEqual([{ fate: 'dropped', rule: 'orphan' }]);
    expect(projected.report.notes.at(-1)).toBe('orphan: dropped 1 tool item(s) sent without their call or output');
    expect(projected.report.droppedItemCount).toBe(1);
    expect(checkSessionLaws(events)).toEqual([]);
    // A replay re-projects as the runtime did, orphan rule included.
    expect((await replaySession(log, session.id, { mode: 'project' })).identical).toBe(true);
  });

  it('dropOrphans leaves a paired projection alone and drops outputs before their call and calls without an output', () => {
    const projector = new DefaultContextProjector();
    const paired = projector.project([userMessage('u'), functionCall('a', 'ls'), functionCallOutput('a', 'x')]);
    expect(dropOrphans(paired)).toBe(paired);
    const items = [functionCallOutput('b', 'early'), functionCall('b', 'ls'), userMessage('u'), functionCall('c', 'ls')];
    const result = dropOrphans(projector.project(items));
    expect(result.items).toEqual([userMessage('u')]);
    expect(result.report.fates.map((f) => `${f.index}:${f.fate}:${f.rule}`)).toEqual(['0:dropped:orphan', '1:dropped:orphan', '2:kept:tail', '3:dropped:orphan']);
    expect(result.report.projectedItemCount + result.report.droppedItemCount).toBe(result.report.sourceItemCount);
  });
});
