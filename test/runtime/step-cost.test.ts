// What a step costs as memory grows, counted as work (never timed): the open calls, memory's entry list and a replay's
// per-item records grow with what changed, not with memory (issue 28 item 3); figures in docs/performance.md.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { auditSession, replaySession } from '../../src/replay/index.js';
import { reprojectionItemRecordCount } from '../../src/replay/reproject.js';
import { createFateLawChecker } from '../../src/replay/fate-law.js';
import { reportData } from '../../src/replay/report/data.js';
import { unansweredCallItemCount } from '../../src/items/tool-calls.js';
import { entryListCopyCount } from '../../src/memory/reducer.js';
import { fateListsMadeCount } from '../../src/context/index.js';
import { Agents, ScriptedModelClient, assistantMessage, defineTool, functionCall, openMemoryLog, type ModelResult, type NewSessionEvent } from '../../src/index.js';

const readFile = defineTool({
  name: 'read_file',
  description: 'Read a file',
  parameters: z.object({ path: z.string() }),
  execute: ({ path }) => `// ${path}`,
});

const script = (steps: number): ModelResult[] => [
  ...Array.from({ length: steps - 1 }, (_, i) => ({ items: [functionCall(`call_${i}`, 'read_file', { path: `src/f${i}.ts` })] })),
  { outputText: 'done', items: [assistantMessage('done')] },
];

/** Memory of about `items` items (a call and its result each), recorded as a host would, without steps. */
const pastEvents = (items: number): NewSessionEvent[] => {
  const events: NewSessionEvent[] = [];
  for (let i = 0; events.length < items; i++) {
    events.push({ type: 'model.output', items: [functionCall(`past_${i}`, 'read_file', { path: `p${i}.ts` })] });
    events.push({ type: 'tool.result', callId: `past_${i}`, output: `// p${i}.ts`, isError: false, name: 'read_file' });
  }
  return events;
};

describe('the cost of a step as memory grows (work counts)', () => {
  it('30 steps over 2,000 items: open calls read each entry once, the entry list is copied about once per step, replay names no item', async () => {
    const log = await openMemoryLog();
    const steps = 30;
    const agent = Agents.react({ modelClient: new ScriptedModelClient(script(steps)), model: 'scripted', tools: [readFile], log, contextBudget: { maxTokens: 2_000 } });
    const session = await agent.newSession();
    await session.session.record(pastEvents(2_000));
    const items = session.memory.state().entries.length;

    let tracked = unansweredCallItemCount();
    let copies = entryListCopyCount();
    let fateLists = fateListsMadeCount();
    await session.run('Read the files.');
    // Each step records its fate runs from the projection's own codes: no list of one fate per item is made.
    expect(fateListsMadeCount() - fateLists).toBe(0);
    tracked = unansweredCallItemCount() - tracked;
    copies = entryListCopyCount() - copies;
    const grown = session.memory.state().entries.length - items;
    // Every entry once (the first look), then only what each step appended; a rescan per step would be 30 × 2,000.
    expect(tracked).toBeGreaterThanOrEqual(items);
    expect(tracked).toBeLessThanOrEqual(items + grown);
    // Appends between two reads are folded together: about one copy per step (an append each would be 60 or more).
    expect(copies).toBeLessThanOrEqual(steps + 2);

    copies = entryListCopyCount();
    const records = reprojectionItemRecordCount();
    fateLists = fateListsMadeCount();
    const replayed = await replaySession(log, session.id);
    expect(replayed).toMatchObject({ identical: true, steps });
    expect(fateListsMadeCount() - fateLists).toBe(0);
    // The recorded memory is built once per step (a copy per event that adds an item would be over 2,000), and a step
    // found identical gets no per-item list of ids and fates.
    expect(entryListCopyCount() - copies).toBeLessThanOrEqual(steps + 2);
    expect(reprojectionItemRecordCount() - records).toBe(0);
    const audit = await auditSession(log, session.id);
    expect(audit.totals.steps).toBe(steps);

    // The fate law (`context-ledger verify`) and the HTML report fold the same way.
    copies = entryListCopyCount();
    const law = createFateLawChecker(audit);
    for await (const event of log.read(session.id)) law.observe(event);
    expect(law.finish()).toEqual([]);
    expect(entryListCopyCount() - copies).toBeLessThanOrEqual(steps + 2);
    copies = entryListCopyCount();
    const report = await reportData(log, session.id);
    expect(report.steps).toHaveLength(steps);
    expect(report.steps.every((step) => step.verified === true)).toBe(true);
    // the audit it runs, then its own re-projection of every step
    expect(entryListCopyCount() - copies).toBeLessThanOrEqual(2 * (steps + 2));
    await log.close();
  });

  it('a replay that finds a step different still names what differs (the per-item lists are built when asked for)', async () => {
    const log = await openMemoryLog();
    const agent = Agents.react({ modelClient: new ScriptedModelClient(script(4)), model: 'scripted', tools: [readFile], log, contextBudget: { maxItems: 3 } });
    const session = await agent.newSession();
    await session.run('Read the files.');
    const records = reprojectionItemRecordCount();
    const replayed = await replaySession(log, session.id, { budget: { maxItems: 1 } });
    expect(replayed.identical).toBe(false);
    expect(replayed.firstDivergence?.context?.dropped.length).toBeGreaterThan(0);
    expect(reprojectionItemRecordCount() - records).toBeGreaterThan(0);
    await log.close();
  });
});
