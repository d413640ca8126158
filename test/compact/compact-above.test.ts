// Trigger apart from retention: without compactAbove a session past N compacts at every step; with it, a bounded number of times.
import { describe, expect, it } from 'vitest';
import { LlmCompactPolicy, StructuredSummaryCompactPolicy, type CompactPolicy } from '../../src/compact/index.js';
import type { SessionEvent } from '../../src/events/index.js';
import { assistantMessage, functionCall } from '../../src/items/index.js';
import { openMemoryLog } from '../../src/log/index.js';
import { foldMemory } from '../../src/memory/index.js';
import { ScriptedModelClient } from '../../src/model/index.js';
import { openSession } from '../../src/session/index.js';

const STEPS = 300;
const KEEP = 10;
const ABOVE = 30;

interface Run {
  readonly compactions: number;
  /** Steps at which memory held more than `threshold` items when the step began. */
  readonly stepsOverThreshold: number;
  readonly maxItemsSeen: number;
  readonly events: SessionEvent[];
  readonly finalItems: number;
}

/** One request, then STEPS steps of (auto-compaction check, a tool call, its output), as the runtime drives them. */
const runSession = async (policy: CompactPolicy, threshold: number): Promise<Run> => {
  const log = await openMemoryLog();
  const session = await openSession(log, { id: 'long' });
  await session.memory.addUserInput('Rename every `foo` to `bar` across the repository.');
  let stepsOverThreshold = 0;
  let maxItemsSeen = 0;
  for (let step = 0; step < STEPS; step++) {
    const before = session.memory.snapshot().items.length;
    if (before > threshold) stepsOverThreshold += 1;
    await session.autoCompactIfNecessary(policy, { step });
    await session.memory.addOutputItems([functionCall(`c${step}`, 'edit_file', { path: `src/f${step}.ts` })]);
    await session.memory.addToolOutput(`c${step}`, 'ok');
    maxItemsSeen = Math.max(maxItemsSeen, session.memory.snapshot().items.length);
  }
  const events: SessionEvent[] = [];
  for await (const e of log.read('long')) events.push(e);
  const finalItems = session.memory.snapshot().items.length;
  expect(foldMemory(events)).toEqual(session.memory.state());
  await log.close();
  return { compactions: events.filter((e) => e.type === 'memory.compacted').length, stepsOverThreshold, maxItemsSeen, events, finalItems };
};

const jsonAnswers = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ outputText: `{"completed":["batch ${i}"]}`, items: [assistantMessage(`{"completed":["batch ${i}"]}`)] }));

// Items grow by 2 per step; compacting keeps KEEP, so with a trigger at ABOVE a compaction frees ABOVE - KEEP items.
const BOUND = Math.ceil((1 + 2 * STEPS) / (ABOVE - KEEP));

describe('compactAbove: trigger apart from retention over a 300-step session', () => {
  it('StructuredSummaryCompactPolicy without compactAbove compacts at every step past maxItems', async () => {
    const run = await runSession(new StructuredSummaryCompactPolicy({ maxItems: KEEP }), KEEP);
    expect(run.compactions).toBe(run.stepsOverThreshold);
    expect(run.compactions).toBeGreaterThanOrEqual(STEPS - 10);
    expect(run.events.filter((e) => e.type === 'memory.compacted').every((e) => e.type === 'memory.compacted' && e.trigger === 'auto')).toBe(true);
  });

  it('StructuredSummaryCompactPolicy with compactAbove compacts a bounded number of times', async () => {
    const run = await runSession(new StructuredSummaryCompactPolicy({ maxItems: KEEP }, undefined, { compactAbove: ABOVE }), ABOVE);
    expect(run.compactions).toBe(run.stepsOverThreshold);
    expect(run.compactions).toBeGreaterThan(0);
    expect(run.compactions).toBeLessThanOrEqual(BOUND);
    expect(run.maxItemsSeen).toBeLessThanOrEqual(ABOVE + 2);
  });

  it('LlmCompactPolicy without compactAbove makes a model call at every step past maxItems', async () => {
    const client = new ScriptedModelClient(jsonAnswers(STEPS));
    const run = await runSession(new LlmCompactPolicy(client, 'm', KEEP), KEEP);
    expect(run.compactions).toBe(run.stepsOverThreshold);
    expect(run.compactions).toBeGreaterThanOrEqual(STEPS - 10);
    expect(client.requests).toHaveLength(run.compactions);
  });

  it('LlmCompactPolicy with compactAbove makes a bounded number of model calls', async () => {
    const client = new ScriptedModelClient(jsonAnswers(STEPS));
    const run = await runSession(new LlmCompactPolicy(client, 'm', KEEP, { compactAbove: ABOVE }), ABOVE);
    expect(run.compactions).toBe(run.stepsOverThreshold);
    expect(run.compactions).toBeGreaterThan(0);
    expect(run.compactions).toBeLessThanOrEqual(BOUND);
    expect(client.requests).toHaveLength(run.compactions);
    expect(run.maxItemsSeen).toBeLessThanOrEqual(ABOVE + 2);
  });
});
