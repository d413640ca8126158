// One function projects a step (issue 25 item 2): what the runtime records is projectStep + contextProjectedEvent
// recomputed from memory, and "the projector's tokenizer" is asked in one place (projectorTokenizer).
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  Agents,
  DefaultContextProjector,
  ScriptedModelClient,
  approxTokenizer,
  assistantMessage,
  contextProjectedEvent,
  defineTool,
  functionCall,
  openAiTokenizer,
  openMemoryLog,
  projectStep,
  projectorOfRecord,
  projectorTokenizer,
  userMessage,
  type ContextProjector,
  type SessionEvent,
  type SessionEventOf,
} from '../../src/index.js';
import { foldMemory, visibleEntries } from '../../src/memory/index.js';
import { recordedRequestOptions } from '../../src/runtime/index.js';

const read = defineTool({ name: 'read', description: 'Read a file', parameters: z.object({ path: z.string() }), execute: ({ path }) => `contents of ${path} `.repeat(20) });

const recorded = async (): Promise<SessionEvent[]> => {
  const log = await openMemoryLog();
  const agent = Agents.react({
    modelClient: new ScriptedModelClient([
      { items: [functionCall('c1', 'read', { path: 'a' })] },
      { items: [functionCall('c2', 'read', { path: 'b' })] },
      { items: [functionCall('c3', 'read', { path: 'c' })] },
      { items: [assistantMessage('done')] },
    ]),
    model: 'scripted',
    tools: [read],
    log,
    contextProjector: new DefaultContextProjector(),
    contextBudget: { maxItems: 4, pinnedPrefixItems: 1 },
  });
  const session = await agent.newSession();
  await session.run('read the files');
  const events: SessionEvent[] = [];
  for await (const event of log.read(session.id)) events.push(event);
  return events;
};

describe('projectStep and contextProjectedEvent', () => {
  it('give, from memory before each step, the context.projected the runtime recorded (but the envelope)', async () => {
    const events = await recorded();
    const projected = events.filter((e): e is SessionEventOf<'context.projected'> => e.type === 'context.projected');
    expect(projected.length).toBe(4);
    expect(projected.some((e) => e.report.droppedItemCount > 0)).toBe(true); // the budget dropped something
    for (const event of projected) {
      const memory = foldMemory(events.filter((e) => e.seq < event.seq));
      const items = visibleEntries(memory).map((e) => e.item);
      const projector = projectorOfRecord(event);
      // The runtime budgeted the whole request: what it took off maxTokens is an input, recorded with the step.
      expect(event.request).toBeDefined();
      const request = event.request!;
      const step = projectStep(projector, items, event.budget, { allowance: request, tokenizer: approxTokenizer, options: recordedRequestOptions(request, memory) });
      const built = contextProjectedEvent({ step: event.step!, runId: event.runId, projector: projector.describe(), budget: event.budget, request }, step);
      const { sessionId: _s, seq: _q, at: _a, v: _v, prevHash: _p, hash: _h, contentDigest: _d, contentSalt: _c, ...stored } = event as Record<string, unknown>;
      expect(JSON.parse(JSON.stringify(built))).toEqual(stored);
      const requested = events.find((e) => e.type === 'model.requested' && e.seq > event.seq) as SessionEventOf<'model.requested'>;
      expect(requested.digest).toBe(step.digest);
      expect(requested.itemCount).toBe(step.items.length);
    }
  });

  it('builds the fate runs only when read', () => {
    const items = [userMessage('one'), assistantMessage('two'), userMessage('three')];
    const step = projectStep(new DefaultContextProjector(), items, { maxItems: 2 });
    expect(step.sourceCount).toBe(3);
    expect(step.fateRuns).toBe('dropped:maxItems kept:tail*2');
    expect(step.fateRuns).toBe(step.fateRuns);
  });
});

describe('projectorTokenizer', () => {
  const describing = (settings: Record<string, unknown>, own?: unknown): ContextProjector =>
    ({ project: () => ({ items: [], report: {} }), describe: () => ({ name: 'Mine', settings }), ...(own !== undefined ? { tokenizer: own } : {}) }) as unknown as ContextProjector;

  it('answers the projector own tokenizer first, then the one its description names', () => {
    const o200k = openAiTokenizer('o200k_base');
    expect(projectorTokenizer(new DefaultContextProjector({ tokenizer: o200k }))).toBe(o200k);
    expect(projectorTokenizer(describing({ tokenizer: 'approx' }, o200k))).toBe(o200k);
    expect(projectorTokenizer(describing({ tokenizer: 'approx' }))).toBe(approxTokenizer);
    expect(projectorTokenizer(describing({ tokenizer: 'openai:o200k_base' }))?.name).toBe('openai:o200k_base');
  });

  it('gives undefined for no tokenizer, an unknown name, or (named: false) a name alone; a member that is no tokenizer is not taken', () => {
    expect(projectorTokenizer(describing({}))).toBeUndefined();
    expect(projectorTokenizer(describing({ tokenizer: 'no-such-tokenizer' }))).toBeUndefined();
    expect(projectorTokenizer(describing({ tokenizer: 'approx' }), { named: false })).toBeUndefined();
    expect(projectorTokenizer(describing({}, { count: 'not a function', name: 'x' }))).toBeUndefined();
    expect(projectorTokenizer(describing({}, { count: () => 1, name: '' }))).toBeUndefined();
    expect(projectorTokenizer(describing({ tokenizer: 'approx' }, 42))).toBe(approxTokenizer);
  });
});
