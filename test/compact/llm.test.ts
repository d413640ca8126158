// LlmCompactPolicy: threshold, turn and step cuts, the summary prompt, forgiving parse, failures (content-free answers among
// them), file lists and the audit record.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LLM_COMPACT_SYSTEM_PROMPT, LlmCompactPolicy, isContentFree, keepNewestChars, renderSummary } from '../../src/compact/index.js';
import { InvalidOptionsError } from '../../src/base/errors.js';
import type { MemorySnapshot, SessionEvent, SessionEventOf } from '../../src/events/index.js';
import {
  assistantMessage,
  functionCall,
  functionCallOutput,
  outputCallIdOf,
  callIdsOf,
  isUserMessage,
  textOf,
  userMessage,
  type MemoryItem,
} from '../../src/items/index.js';
import { openMemoryLog, type SessionEventLog } from '../../src/log/index.js';
import { foldMemory } from '../../src/memory/index.js';
import { ScriptedModelClient, type ModelRequest, type ModelResult } from '../../src/model/index.js';
import { Agents } from '../../src/runtime/index.js';
import { openSession } from '../../src/session/index.js';

const answer = (text: string): ModelResult => ({ outputText: text, items: [assistantMessage(text)] });
const promptOf = (request: ModelRequest | undefined): string => textOf(request?.items[0]);
const NULL_SNAPSHOT = null as unknown as MemorySnapshot;

/** u0 a0 u1 a1 ... : `n` user/assistant turns. */
const turns = (n: number): MemoryItem[] =>
  Array.from({ length: n }, (_, i) => [userMessage(`question ${i}`), assistantMessage(`answer ${i}`)]).flat();

const readAll = async (log: SessionEventLog, id: string): Promise<SessionEvent[]> => {
  const out: SessionEvent[] = [];
  for await (const e of log.read(id)) out.push(e);
  return out;
};

const FULL_JSON = JSON.stringify({
  goal: 'Fix the parser',
  completed: ['read the grammar', 'wrote a failing test'],
  pending: ['handle escapes'],
  decisions: ['use a hand-written lexer'],
  errors: ['npm test failed: 2 failures'],
  testResults: ['parser.test.ts: 10 passed, 2 failed'],
  openQuestions: ['is unicode in scope?'],
});

const RENDERED_FULL = [
  '## Goal\nFix the parser',
  '## Progress\n- read the grammar\n- wrote a failing test',
  '## Pending\n- handle escapes',
  '## Key Decisions\n- use a hand-written lexer',
  '## Errors\n- npm test failed: 2 failures',
  '## Test Results\n- parser.test.ts: 10 passed, 2 failed',
  '## Open Questions\n- is unicode in scope?',
].join('\n\n');

describe('LlmCompactPolicy.shouldCompact', () => {
  const policy = new LlmCompactPolicy(new ScriptedModelClient([]), 'm', 4);

  it('is false below and at maxItems, true above', () => {
    expect(policy.shouldCompact({ items: [...turns(1), userMessage('x')] })).toBe(false);
    expect(policy.shouldCompact({ items: turns(2) })).toBe(false);
    expect(policy.shouldCompact({ items: [...turns(2), userMessage('x')] })).toBe(true);
  });

  it('is false for a null or empty snapshot', () => {
    expect(policy.shouldCompact(NULL_SNAPSHOT)).toBe(false);
    expect(policy.shouldCompact({ items: [] })).toBe(false);
  });

  it('with compactAbove, triggers above compactAbove and keeps maxItems', () => {
    const spaced = new LlmCompactPolicy(new ScriptedModelClient([]), 'm', 10, { compactAbove: 30 });
    expect(spaced.compactAbove).toBe(30);
    expect(spaced.shouldCompact({ items: turns(15) })).toBe(false);
    expect(spaced.shouldCompact({ items: [...turns(15), userMessage('x')] })).toBe(true);
    expect(policy.compactAbove).toBe(4);
  });

  it('rejects a compactAbove below maxItems, a negative maxItems and a missing client', () => {
    expect(() => new LlmCompactPolicy(new ScriptedModelClient([]), 'm', 10, { compactAbove: 5 })).toThrow('options.compactAbove: must be at least maxItems (10), got 5');
    expect(() => new LlmCompactPolicy(new ScriptedModelClient([]), 'm', -1)).toThrow(/maxItems: Too small/);
    expect(() => new LlmCompactPolicy(null as unknown as ScriptedModelClient, 'm', 1)).toThrow(InvalidOptionsError);
  });
});

describe('LlmCompactPolicy.compact', () => {
  it('asks for the JSON keys and back-fills the structured result', async () => {
    const client = new ScriptedModelClient([answer(FULL_JSON)]);
    const items = turns(4);
    const result = await new LlmCompactPolicy(client, 'summary-model', 4).compact({ items });
    expect(client.requests).toHaveLength(1);
    const request = client.requests[0]!;
    expect(request.model).toBe('summary-model');
    expect(request.systemPrompt).toBe(LLM_COMPACT_SYSTEM_PROMPT);
    expect(request.items).toHaveLength(1);
    expect(request.items[0]).toMatchObject({ type: 'message', role: 'user' });
    const prompt = promptOf(request);
    for (const key of ['goal', 'completed', 'pending', 'decisions', 'errors', 'testResults', 'openQuestions']) expect(prompt).toContain(`"${key}"`);
    expect(prompt).toContain('Carry forward from the previous summary its goal, and every pending item, decision, error and open question');
    expect(prompt).toContain('Items to summarise (4):');
    expect(prompt).toContain('[1] user: question 0');
    expect(prompt).toContain('[4] assistant: answer 1');
    expect(prompt).not.toContain('question 2');

    expect(result).toMatchObject({
      goal: 'Fix the parser',
      completed: ['read the grammar', 'wrote a failing test'],
      pending: ['handle escapes'],
      decisions: ['use a hand-written lexer'],
      failedCommands: ['npm test failed: 2 failures'],
      testResults: ['parser.test.ts: 10 passed, 2 failed'],
      openQuestions: ['is unicode in scope?'],
      changedArtifacts: [],
      userConfirmations: [],
      sandboxState: [],
    });
    expect(result.summary).toBe(RENDERED_FULL);
    expect(result.memory).toEqual({ items: items.slice(4), summary: RENDERED_FULL });
    result.memory!.items.forEach((item, i) => expect(item).toBe(items[4 + i]));
    expect(result.summarizer).toEqual({ request, rawAnswer: FULL_JSON });
  });

  it('renders the headings in order and leaves empty sections out', () => {
    expect(renderSummary({ goal: 'g', completed: [], pending: ['p'], decisions: [], errors: ['e'], testResults: [], openQuestions: [] })).toBe(
      '## Goal\ng\n\n## Pending\n- p\n\n## Errors\n- e',
    );
    expect(renderSummary({ completed: ['c'], pending: [], decisions: ['d'], errors: [], testResults: ['t'], openQuestions: ['q'] })).toBe(
      '## Progress\n- c\n\n## Key Decisions\n- d\n\n## Test Results\n- t\n\n## Open Questions\n- q',
    );
  });

  it('accepts JSON in a ```json fence', async () => {
    const fenced = '```json\n{"goal":"g","completed":["a"],"pending":["b"]}\n```';
    const result = await new LlmCompactPolicy(new ScriptedModelClient([answer(fenced)]), 'm', 2).compact({ items: turns(2) });
    expect(result.summary).toBe('## Goal\ng\n\n## Progress\n- a\n\n## Pending\n- b');
    expect(result.completed).toEqual(['a']);
    expect(result.summarizer?.rawAnswer).toBe(fenced);
  });

  it('accepts prose around the JSON (first { to last })', async () => {
    const text = 'Sure! Here is the summary you asked for:\n{"completed":["x"],"decisions":["y {braced}"]}\nLet me know if you need more.';
    const result = await new LlmCompactPolicy(new ScriptedModelClient([answer(text)]), 'm', 2).compact({ items: turns(2) });
    expect(result.completed).toEqual(['x']);
    expect(result.decisions).toEqual(['y {braced}']);
    expect(result.summary).toBe('## Progress\n- x\n\n## Key Decisions\n- y {braced}');
  });

  it('takes a string where a list was asked as a one-element list', async () => {
    const text = '{"goal":"g","completed":"only one thing","errors":"boom","openQuestions":""}';
    const result = await new LlmCompactPolicy(new ScriptedModelClient([answer(text)]), 'm', 2).compact({ items: turns(2) });
    expect(result.completed).toEqual(['only one thing']);
    expect(result.failedCommands).toEqual(['boom']);
    expect(result.openQuestions).toEqual([]);
    expect(result.summary).toBe('## Goal\ng\n\n## Progress\n- only one thing\n\n## Errors\n- boom');
  });

  it('makes a prose-only answer the summary as is, with empty lists', async () => {
    const prose = 'We read the parser and fixed two bugs. Next: escapes.';
    const items = turns(3);
    const result = await new LlmCompactPolicy(new ScriptedModelClient([answer(`  ${prose}\n`)]), 'm', 2).compact({ items });
    expect(result.summary).toBe(prose);
    expect(result.memory).toEqual({ items: items.slice(4), summary: prose });
    expect(result).toMatchObject({ completed: [], pending: [], decisions: [], failedCommands: [], testResults: [], openQuestions: [] });
    expect(result.goal).toBeUndefined();
  });

  it('treats invalid JSON between braces as prose', async () => {
    const text = 'Done {not json} really';
    const result = await new LlmCompactPolicy(new ScriptedModelClient([answer(text)]), 'm', 2).compact({ items: turns(2) });
    expect(result.summary).toBe(text);
  });

  it('reads the answer from the last assistant message when there is no outputText', async () => {
    const client = new ScriptedModelClient([{ items: [assistantMessage('first'), assistantMessage('{"pending":["later"]}')] }]);
    const result = await new LlmCompactPolicy(client, 'm', 2).compact({ items: turns(2) });
    expect(result.pending).toEqual(['later']);
  });

  it('throws when the model throws, and when the answer is empty or blank', async () => {
    await expect(new LlmCompactPolicy(new ScriptedModelClient([new Error('rate limited')]), 'm', 2).compact({ items: turns(2) })).rejects.toThrow(
      'rate limited',
    );
    await expect(new LlmCompactPolicy(new ScriptedModelClient([answer('')]), 'm', 2).compact({ items: turns(2) })).rejects.toThrow(/empty summary/);
    await expect(new LlmCompactPolicy(new ScriptedModelClient([answer(' \n\t ')]), 'm', 2).compact({ items: turns(2) })).rejects.toThrow(/empty summary/);
    await expect(new LlmCompactPolicy(new ScriptedModelClient([{ items: [] }]), 'm', 2).compact({ items: turns(2) })).rejects.toThrow(/empty summary/);
  });

  it('makes no model call when there is nothing to summarise', async () => {
    const client = new ScriptedModelClient([]);
    const policy = new LlmCompactPolicy(client, 'm', 4);
    for (const snapshot of [NULL_SNAPSHOT, { items: [] }, { items: turns(1) }, { items: turns(2), summary: 'kept' }]) {
      const result = await policy.compact(snapshot);
      expect(result.memory?.items).toEqual(snapshot?.items ?? []);
      expect(result.summary).toBe(snapshot?.summary ?? null);
      expect(result.summarizer).toBeUndefined();
    }
    expect(client.requests).toHaveLength(0);
  });

  it('feeds the previous summary back (Previous summary:), cut to maxSummaryChars oldest first', async () => {
    const client = new ScriptedModelClient([answer('{"completed":["x"]}'), answer('{"completed":["y"]}')]);
    await new LlmCompactPolicy(client, 'm', 2).compact({ items: turns(2), summary: '## Pending\n- handle escapes' });
    expect(promptOf(client.requests[0])).toContain('Previous summary:\n## Pending\n- handle escapes\n');

    const long = `OLD ${'z'.repeat(300)} NEW`;
    await new LlmCompactPolicy(client, 'm', 2, { maxSummaryChars: 100 }).compact({ items: turns(2), summary: long });
    const prompt = promptOf(client.requests[1]);
    expect(prompt).toContain(`Previous summary:\n${keepNewestChars(long, 100)}\n`);
    expect(prompt).not.toContain('OLD');
  });

  it('leaves "Previous summary:" out when there is none', async () => {
    const client = new ScriptedModelClient([answer('{"goal": "g"}')]);
    await new LlmCompactPolicy(client, 'm', 2).compact({ items: turns(2), summary: null });
    expect(promptOf(client.requests[0])).not.toContain('Previous summary:');
  });

  it('moves the cut back to the nearest user message', async () => {
    // u0 a0 u1 a1 u2 a2: keeping 3 would start at a1; the cut moves back to u1 and 4 are kept
    const items = turns(3);
    const client = new ScriptedModelClient([answer('{"goal": "g"}')]);
    const result = await new LlmCompactPolicy(client, 'm', 3).compact({ items });
    expect(result.memory?.items).toEqual(items.slice(2));
    expect(promptOf(client.requests[0])).toContain('Items to summarise (2):');
  });

  it('merges the model errors and recorded facts into failedCommands and testResults', async () => {
    const facts = [
      { sessionId: 's', seq: 2, at: 'x', v: 1, prevHash: '', hash: '', type: 'command.failed', command: 'npm test', exitCode: 1 },
      { sessionId: 's', seq: 3, at: 'x', v: 1, prevHash: '', hash: '', type: 'test.result', status: 'failed', suite: 'parser' },
      { sessionId: 's', seq: 4, at: 'x', v: 1, prevHash: '', hash: '', type: 'sandbox.state', description: 'docker' },
    ] as unknown as MemorySnapshot['facts'];
    const text = '{"errors":["npm test (exit 1)","lexer crashed"],"testResults":["all green"]}';
    const result = await new LlmCompactPolicy(new ScriptedModelClient([answer(text)]), 'm', 2).compact({ items: turns(2), facts });
    expect(result.failedCommands).toEqual(['npm test (exit 1)', 'lexer crashed']);
    expect(result.testResults).toEqual(['all green', 'failed: parser']);
    expect(result.sandboxState).toEqual(['docker']);
  });

  it('describes itself (model, limits and the summarizer system prompt, not the client)', () => {
    expect(new LlmCompactPolicy(new ScriptedModelClient([]), 'gpt-x', 10, { compactAbove: 30 }).describe()).toEqual({
      name: 'LlmCompactPolicy',
      settings: { model: 'gpt-x', maxItems: 10, compactAbove: 30, maxSummaryChars: 4000, maxItemChars: 2000, systemPrompt: LLM_COMPACT_SYSTEM_PROMPT },
    });
  });

  it('cuts each item in the prompt to maxItemChars', async () => {
    const client = new ScriptedModelClient([answer('{"goal": "g"}')]);
    await new LlmCompactPolicy(client, 'm', 1, { maxItemChars: 10 }).compact({ items: [userMessage('a'.repeat(50)), userMessage('b')] });
    expect(promptOf(client.requests[0])).toContain(`[1] user: ${'a'.repeat(10)}… [40 more chars]`);
  });
});

describe('file tracking in LlmCompactPolicy', () => {
  it('lists the files read and modified by the summarised items in the prompt and the result', async () => {
    const items: MemoryItem[] = [
      userMessage('fix it'),
      functionCall('c1', 'read_file', { path: 'src/a.ts' }),
      functionCallOutput('c1', '...'),
      functionCall('c2', 'edit_file', { path: 'src/b.ts' }),
      functionCallOutput('c2', 'ok'),
      userMessage('now the docs'),
      functionCall('c3', 'write_file', { path: 'docs/kept.md' }),
      functionCallOutput('c3', 'ok'),
    ];
    const client = new ScriptedModelClient([answer('{"goal": "g"}')]);
    const result = await new LlmCompactPolicy(client, 'm', 3).compact({ items, readFiles: ['README.md'], modifiedFiles: ['src/b.ts'] });
    const prompt = promptOf(client.requests[0]);
    expect(prompt).toContain('Files read: README.md, src/a.ts');
    expect(prompt).toContain('Files modified: src/b.ts');
    expect(result.readFiles).toEqual(['README.md', 'src/a.ts']);
    expect(result.modifiedFiles).toEqual(['src/b.ts']);
    // the kept items are not scanned: they are still in memory
    expect(result.modifiedFiles).not.toContain('docs/kept.md');
  });

  it('accumulates the lists across two compactions of a session, in the results and the events', async () => {
    const log = await openMemoryLog();
    const session = await openSession(log, { id: 'files' });
    const client = new ScriptedModelClient([answer('{"completed":["first"]}'), answer('{"completed":["second"]}')]);
    const policy = new LlmCompactPolicy(client, 'm', 2);
    await session.memory.addUserInput('step one');
    await session.memory.addOutputItems([functionCall('r1', 'read_file', { path: 'a.ts' }), functionCall('w1', 'write_file', { path: 'b.ts' })]);
    await session.memory.addToolOutput('r1', 'contents');
    await session.memory.addToolOutput('w1', 'ok');
    await session.memory.addUserInput('step two');
    await session.memory.addOutputItems([assistantMessage('fine')]);
    const first = await session.compact(policy);
    expect(first.readFiles).toEqual(['a.ts']);
    expect(first.modifiedFiles).toEqual(['b.ts']);
    expect(session.memory.snapshot().readFiles).toEqual(['a.ts']);

    await session.memory.addUserInput('step three');
    await session.memory.addOutputItems([functionCall('r2', 'grep', { path: 'c.ts' }), functionCall('w2', 'patch', { file: 'a.ts' })]);
    await session.memory.addToolOutput('r2', 'match');
    await session.memory.addToolOutput('w2', 'ok');
    await session.memory.addUserInput('step four');
    await session.memory.addOutputItems([assistantMessage('done')]);
    const second = await session.compact(policy);
    const prompt = promptOf(client.requests[1]);
    expect(prompt).toContain('Files read: a.ts, c.ts');
    expect(prompt).toContain('Files modified: b.ts, a.ts');
    expect(prompt).toContain('Previous summary:\n## Progress\n- first');
    expect(second.readFiles).toEqual(['a.ts', 'c.ts']);
    expect(second.modifiedFiles).toEqual(['b.ts', 'a.ts']);

    const compactions = (await readAll(log, 'files')).filter((e): e is SessionEventOf<'memory.compacted'> => e.type === 'memory.compacted');
    expect(compactions.map((e) => e.result.readFiles)).toEqual([['a.ts'], ['a.ts', 'c.ts']]);
    expect(compactions.map((e) => e.result.modifiedFiles)).toEqual([['b.ts'], ['b.ts', 'a.ts']]);
    expect(session.getLastCompactResult()?.readFiles).toEqual(['a.ts', 'c.ts']);
    await log.close();
  });
});

describe('LlmCompactPolicy through a session', () => {
  it('records the summarizer request and raw answer in memory.compacted', async () => {
    const log = await openMemoryLog();
    const session = await openSession(log, { id: 'audit' });
    for (const item of turns(3)) await (isUserMessage(item) ? session.memory.addUserInput(item) : session.memory.addOutputItems([item]));
    const raw = 'Here:\n```json\n{"goal":"audit","pending":["p"]}\n```';
    const client = new ScriptedModelClient([answer(raw)]);
    const result = await session.compact(new LlmCompactPolicy(client, 'm', 2));
    const event = (await readAll(log, 'audit')).find((e): e is SessionEventOf<'memory.compacted'> => e.type === 'memory.compacted')!;
    expect(event.trigger).toBe('manual');
    expect(event.policy).toEqual(new LlmCompactPolicy(client, 'm', 2).describe());
    expect(event.summarizer?.rawAnswer).toBe(raw);
    expect(event.summarizer?.request).toEqual(JSON.parse(JSON.stringify(client.requests[0])));
    expect(event.summary).toBe('## Goal\naudit\n\n## Pending\n- p');
    expect(event.result).toMatchObject({ goal: 'audit', pending: ['p'], summary: '## Goal\naudit\n\n## Pending\n- p' });
    expect(event.result).not.toHaveProperty('memory');
    expect(event.result).not.toHaveProperty('summarizer');
    expect(event.keptIds).toHaveLength(2);
    expect(event.droppedIds).toHaveLength(4);
    expect(event.layout).toEqual(event.keptIds.map((keep) => ({ keep })));
    expect(session.memory.snapshot().items).toEqual(result.memory?.items);
    await log.close();
  });

  it('a throwing model: compact rejects, compaction.failed is recorded, memory is untouched', async () => {
    const log = await openMemoryLog();
    const session = await openSession(log, { id: 'fails' });
    await session.memory.addUserInput('a');
    await session.memory.addOutputItems([assistantMessage('b'), assistantMessage('c')]);
    await session.memory.setSummary('before');
    const before = session.memory.state();
    const policy = new LlmCompactPolicy(new ScriptedModelClient([new Error('model down')]), 'm', 1);
    await expect(session.compact(policy)).rejects.toThrow('model down');
    expect(session.memory.state()).toBe(before);
    const events = await readAll(log, 'fails');
    expect(events.at(-1)).toMatchObject({ type: 'compaction.failed', trigger: 'manual', stage: 'compact', error: 'model down', policy: policy.describe() });
    expect(events.some((e) => e.type === 'memory.compacted')).toBe(false);
    expect(foldMemory(events)).toEqual(before);
    await log.close();
  });

  it('an empty answer: the same, through automatic compaction (no throw)', async () => {
    const log = await openMemoryLog();
    const session = await openSession(log, { id: 'empty' });
    await session.memory.addUserInput('a');
    await session.memory.addOutputItems([assistantMessage('b'), assistantMessage('c')]);
    const before = session.memory.state();
    const policy = new LlmCompactPolicy(new ScriptedModelClient([answer('')]), 'm', 1);
    await expect(session.autoCompactIfNecessary(policy, { step: 3 })).resolves.toBeNull();
    expect(session.memory.state()).toBe(before);
    const events = await readAll(log, 'empty');
    expect(events.at(-1)).toMatchObject({ type: 'compaction.failed', trigger: 'auto', stage: 'compact', step: 3 });
    expect((events.at(-1) as SessionEventOf<'compaction.failed'>).error).toMatch(/empty summary/);
    expect(session.memory.getSummary()).toBeNull();
    await log.close();
  });
});

describe('a session that is one request followed by many tool steps', () => {
  const request = 'Migrate the whole repository from CommonJS to ESM and keep the tests green.';
  const oneRequest = (steps: number): MemoryItem[] => {
    const items: MemoryItem[] = [userMessage(request)];
    for (let i = 0; i < steps; i++) {
      if (i % 3 === 0) {
        // chat style: one assistant message with two calls, then both outputs
        items.push(assistantMessage(`step ${i}`, [{ id: `t${i}a`, type: 'function', function: { name: 'read_file', arguments: JSON.stringify({ path: `f${i}.js` }) } }, { id: `t${i}b`, type: 'function', name: 'bash', arguments: '{}' }]));
        items.push(functionCallOutput(`t${i}a`, 'contents'), functionCallOutput(`t${i}b`, 'ok'));
      } else {
        items.push(functionCall(`c${i}`, i % 3 === 1 ? 'edit_file' : 'bash', { path: `f${i}.js` }), functionCallOutput(`c${i}`, `out ${i}`));
      }
    }
    return items;
  };

  const pairsTogether = (kept: readonly MemoryItem[]): void => {
    const calls = new Set(kept.flatMap(callIdsOf));
    for (const item of kept) {
      const id = outputCallIdOf(item);
      if (id !== undefined) expect(calls.has(id)).toBe(true);
    }
  };

  it('cannot be cut at a user turn, so it is cut at a step boundary that keeps calls with their outputs', async () => {
    const items = oneRequest(300);
    for (const maxItems of [10, 11, 12, 13, 25]) {
      const client = new ScriptedModelClient([answer('{"goal":"model goal","completed":["converted 200 files"]}')]);
      const policy = new LlmCompactPolicy(client, 'm', maxItems);
      const { cut, request: carried } = policy.cutFor(items);
      expect(carried).toBe(request);
      expect(cut).toBeGreaterThan(0);
      expect(cut).toBeLessThanOrEqual(items.length - maxItems);
      const result = await policy.compact({ items });
      const kept = result.memory!.items;
      expect(kept).toEqual(items.slice(cut));
      expect(kept.length).toBeGreaterThanOrEqual(maxItems);
      expect(kept.length).toBeLessThan(maxItems + 4);
      expect(outputCallIdOf(kept[0]!)).toBeUndefined();
      pairsTogether(kept);
      expect(result.goal).toBe(request);
      expect(result.summary).toBe(`## Goal\n${request}\n\n## Progress\n- converted 200 files`);
      expect(promptOf(client.requests[0])).toContain(`The session is one request; it is the goal:\n${request}`);
    }
  });

  it('carries the request as the goal when the model answers in prose', async () => {
    const result = await new LlmCompactPolicy(new ScriptedModelClient([answer('Converted most files.')]), 'm', 10).compact({ items: oneRequest(50) });
    expect(result.summary).toBe(`## Goal\n${request}\n\nConverted most files.`);
    expect(result.goal).toBe(request);
  });

  it('compacts through a session and keeps working on the next compaction', async () => {
    const log = await openMemoryLog();
    const session = await openSession(log, { id: 'one-request' });
    await session.memory.addUserInput(request);
    const client = new ScriptedModelClient(Array.from({ length: 100 }, (_, i) => answer(`{"completed":["batch ${i}"]}`)));
    const policy = new LlmCompactPolicy(client, 'm', 10, { compactAbove: 40 });
    for (let i = 0; i < 300; i++) {
      await session.autoCompactIfNecessary(policy, { step: i });
      await session.memory.addOutputItems([functionCall(`c${i}`, 'bash', { cmd: `step ${i}` })]);
      await session.memory.addToolOutput(`c${i}`, `out ${i}`);
      expect(session.memory.snapshot().items.length).toBeLessThanOrEqual(42);
    }
    pairsTogether(session.memory.snapshot().items);
    expect(client.requests.length).toBeGreaterThan(10);
    expect(promptOf(client.requests[0])).toContain(`The session is one request; it is the goal:\n${request}`);
    // the first summary carried the goal, and the next prompt feeds it back
    expect(promptOf(client.requests[1])).toContain(`Previous summary:\n## Goal\n${request}`);
    await log.close();
  });
});

describe('LlmCompactPolicy: one request after system text', () => {
  it('still cuts at a step boundary when only system messages come before the request', async () => {
    const items = [
      { type: 'message', role: 'system', content: 'You are a coding agent.' },
      { type: 'message', role: 'user', content: 'Fix the parser.' },
      ...Array.from({ length: 40 }, (_, i) => [
        { type: 'function_call', call_id: `c${i}`, name: 'bash', arguments: '{}' },
        { type: 'function_call_output', call_id: `c${i}`, output: `out ${i}` },
      ]).flat(),
    ] as const;
    const model = new ScriptedModelClient([{ outputText: '{"completed":["read code"]}', items: [] }]);
    const policy = new LlmCompactPolicy(model, 'm', 10);
    const result = await policy.compact({ items });
    expect(policy.cutFor(items).cut).toBeGreaterThan(1);
    expect(result.memory?.items.length).toBeLessThanOrEqual(12);
    expect(result.memory?.items[0]).toMatchObject({ type: 'function_call' });
    expect(result.goal).toBe('Fix the parser.');
    expect(result.summary).toContain('## Goal\nFix the parser.');
  });
});

describe('summarizerMaxTokens with a fixed part above the bound', () => {
  const approxTokens = (text: string): number => Math.ceil(text.length / 4);
  const session = (n: number) => Array.from({ length: n }, (_, i) => (i % 2 === 0 ? userMessage(`request ${i} ${'x'.repeat(120)}`) : assistantMessage(`answer ${i} ${'y'.repeat(120)}`)));
  const answering = () => new ScriptedModelClient(Array.from({ length: 2_000 }, (_, i): ModelResult => ({ outputText: JSON.stringify({ goal: 'g', completed: [`chunk ${i}`] }), items: [] })));
  const summaryOf = (words: number) => `Previous: ${Array.from({ length: words }, (_, i) => `fact-${i}`).join(' ')} NEWEST-FACT`;

  it('a previous summary longer than the bound no longer makes one summarizer call per item: calls follow the items\' size', async () => {
    const items = session(400);
    const bound = 600;
    const withoutSummary = answering();
    await new LlmCompactPolicy(withoutSummary, 's', 4, { summarizerMaxTokens: bound }).compact({ items, summary: null });
    const withSummary = answering();
    const result = await new LlmCompactPolicy(withSummary, 's', 4, { summarizerMaxTokens: bound }).compact({ items, summary: summaryOf(900) });
    // 396 items of ~35 tokens: about 14,000 tokens of items, in chunks of at least half the bound.
    const costs = items.slice(0, 396).map((item) => approxTokens(`[100] ${(item as { role: string }).role}: ${textOf(item)}`) + 4);
    const largest = Math.max(...costs);
    // Greedy chunks of at least half the bound each hold more than half the bound less one item.
    const bounded = Math.ceil(costs.reduce((a, b) => a + b, 0) / (bound / 2 - largest)) + 1;
    expect(withSummary.requests.length).toBeLessThanOrEqual(bounded);
    expect(withSummary.requests.length).toBeLessThan(100);
    expect(withoutSummary.requests.length).toBeLessThanOrEqual(bounded);
    for (const request of withSummary.requests) {
      const prompt = textOf(request.items[0]!);
      // Each request within the bound (approx counts, as the policy counts them), the summary cut to its newest text.
      expect(approxTokens(prompt) + approxTokens(request.systemPrompt ?? '')).toBeLessThanOrEqual(bound);
      expect(prompt).toContain('Previous summary:');
    }
    const first = textOf(withSummary.requests[0]!.items[0]!);
    expect(first).toContain('[… earlier summary cut …]');
    expect(first).toContain('NEWEST-FACT');
    expect(first).not.toContain('fact-0 ');
    expect(result.summary).toContain('chunk');
  });

  it('with a bound the fixed prompt alone fills (200 tokens), the calls still follow the items\' size', async () => {
    const items = session(400);
    const client = answering();
    await new LlmCompactPolicy(client, 's', 4, { summarizerMaxTokens: 200 }).compact({ items, summary: summaryOf(900) });
    const costs = items.slice(0, 396).map((item) => approxTokens(`[100] ${(item as { role: string }).role}: ${textOf(item)}`) + 4);
    expect(client.requests.length).toBeLessThanOrEqual(Math.ceil(costs.reduce((a, b) => a + b, 0) / (100 - Math.max(...costs))) + 1);
    // The carried summary keeps an eighth of the bound: the chunks still hand their summary on.
    for (const request of client.requests.slice(1)) expect(textOf(request.items[0]!)).toMatch(/Previous summary:\n.*chunk/s);
  });

  it('a previous summary within the bound is carried as before (the same requests)', async () => {
    const items = session(200);
    const small = summaryOf(20);
    const client = answering();
    await new LlmCompactPolicy(client, 's', 4, { summarizerMaxTokens: 2_000 }).compact({ items, summary: small });
    expect(textOf(client.requests[0]!.items[0]!)).toContain(small);
    expect(client.requests.length).toBeGreaterThan(1);
  });
});

// Regressions: content-free summarizer answers (null, [], "", zero-width) and the one-request goal rule with later user turns.
const items = Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? userMessage(`request ${i}`) : assistantMessage(`answer ${i}`)));

describe('content-free summarizer answers', () => {
  for (const empty of ['null', '[]', '""', '" "', '\u200b', '\u200b\ufeff\u2060 \n', '[null, "", {}]', '{"goal": "\u200b"}', '```json\nnull\n```', '{"completed": [[]]}']) {
    it(`${JSON.stringify(empty)} is a failure and memory stays`, async () => {
      expect(isContentFree(empty)).toBe(true);

      const policy = new LlmCompactPolicy(new ScriptedModelClient([answer(empty)]), 'm', 2);
      await expect(policy.compact({ items, summary: 'the previous summary' })).rejects.toThrow(/no content|empty summary/);
      const log = await openMemoryLog();
      const session = await openSession(log, { id: 's' });
      await session.memory.record([{ type: 'user.input', items }]);
      await session.memory.setSummary('the previous summary');
      const before = session.memory.state();
      await expect(session.compact(new LlmCompactPolicy(new ScriptedModelClient([answer(empty)]), 'm', 2))).rejects.toThrow();
      expect(session.memory.state()).toBe(before);
      const types: string[] = [];
      for await (const e of log.read('s')) types.push(e.type);
      expect(types.at(-1)).toBe('compaction.failed');
    });
  }

  it('text, numbers and false are content', () => {
    for (const text of ['ok', '0', 'false', '"a"', '["x"]', '{"goal": "g"}', 'prose {}']) expect(isContentFree(text)).toBe(false);
  });

  it('property: any answer built only of empty values and invisible characters is content-free and gives a failure', async () => {
    const invisible = fc.constantFrom('', ' ', '\n', '\t', '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff', '\u00a0', '\u3000', '\u180e', '\u2028');
    const pad = fc.array(invisible, { maxLength: 4 }).map((xs) => xs.join(''));
    const empty: fc.Arbitrary<unknown> = fc.letrec<{ v: unknown }>((tie) => ({
      v: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.constant(null),
        pad,
        fc.array(tie('v'), { maxLength: 3 }),
        fc.dictionary(fc.constantFrom('goal', 'completed', 'pending', 'x'), tie('v'), { maxKeys: 3 }),
      ),
    })).v;
    await fc.assert(
      fc.asyncProperty(empty, pad, pad, async (value, before, after) => {
        const text = `${before}${JSON.stringify(value)}${after}`;
        expect(isContentFree(text)).toBe(true);
        const policy = new LlmCompactPolicy(new ScriptedModelClient([answer(text)]), 'm', 2);
        await expect(policy.compact({ items, summary: null })).rejects.toThrow();
      }),
      { numRuns: 60 },
    );
  });
});

describe('the one-request rule only applies without later user turns', () => {
  it('12 items, user turns at 0, 3, 6, 9, maxItems 10: the model goal stays and the cut is a user turn', async () => {
    const turns: MemoryItem[] = Array.from({ length: 12 }, (_, i) => (i % 3 === 0 ? userMessage(`u${i}`) : assistantMessage(`a${i}`)));
    const result = await new LlmCompactPolicy(new ScriptedModelClient([answer('{"goal":"g","pending":"one"}')]), 'm', 10).compact({ items: turns, summary: null });
    expect(result.summary).toBe('## Goal\ng\n\n## Pending\n- one');
    expect(result.goal).toBe('g');
    expect(result.memory?.items[0]).toBe(turns[3]);
  });
});

// Fault: an LLM summarizer answer that is JSON with nothing in it (`{}`, `{"goal": null}`) was applied as an empty summary.
describe('a content-free LLM summary is a failure', () => {
  for (const empty of ['{}', '{"goal": null}', '```json\n{"goal": "  ", "completed": []}\n```', '{"unrelated": "key"}']) {
    it(`${JSON.stringify(empty)} throws and names the answer`, async () => {
      const policy = new LlmCompactPolicy(new ScriptedModelClient([answer(empty)]), 'm', 2);
      await expect(policy.compact({ items, summary: 'the previous summary' })).rejects.toThrow(/the model's summary has no content/);
    });
  }

  it('an empty answer is still a failure; a JSON answer with content is applied', async () => {
    await expect(new LlmCompactPolicy(new ScriptedModelClient([answer('  ')]), 'm', 2).compact({ items })).rejects.toThrow(/empty summary/);
    const result = await new LlmCompactPolicy(new ScriptedModelClient([answer('{"goal": "ship it"}')]), 'm', 2).compact({ items });
    expect(result.summary).toBe('## Goal\nship it');
  });

  it('in a run: compaction.failed is recorded, memory and summary are kept, and compactAbove retries at the next step', async () => {
    const summarizer = new ScriptedModelClient([answer('{"goal": null}'), answer('{"goal": "the task", "completed": ["step one"]}')]);
    const log = await openMemoryLog();
    let n = 0;
    const model = new ScriptedModelClient([
      (r: ModelRequest) => ({ items: [{ type: 'function_call', call_id: 'c1', name: 'none', arguments: '{}' }], outputText: String(r.items.length) }),
      answer('done'),
    ]);
    const agent = Agents.react({ modelClient: model, model: 'm', log, ids: () => `e-${++n}`, compactPolicy: new LlmCompactPolicy(summarizer, 's', 2, { compactAbove: 6 }) });
    const session = await agent.newSession();
    await session.memory.record([{ type: 'user.input', items: items.slice(0, 7) }]);
    await session.memory.setSummary('the previous summary');
    const before = session.memory.getItems().length;
    await session.run('go on');
    const events: SessionEvent[] = [];
    for await (const e of log.read(session.id)) events.push(e);
    const failed = events.find((e) => e.type === 'compaction.failed');
    expect(failed).toMatchObject({ trigger: 'auto', stage: 'compact', step: 1, error: expect.stringContaining('no content') });
    // Step 1 was sent the whole memory with the old summary; step 2 compacted.
    expect(model.requests[0]!.items).toHaveLength(before + 1);
    expect(model.requests[0]!.items[0]).toMatchObject({ role: 'system', content: 'the previous summary' });
    const compacted = events.find((e) => e.type === 'memory.compacted');
    expect(compacted).toMatchObject({ step: 2, summary: expect.stringContaining('## Goal\nthe task') });
    expect(summarizer.requests).toHaveLength(2);
  });
});
