// Appends between reads do not copy memory's entry list each time: a step with N tool results (N appends) copies it a
// constant number of times, so recording and re-running such a step stay linear in N (issue 27 item 8).
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { assistantMessage, functionCall } from '../../src/items/index.js';
import { openMemoryLog } from '../../src/log/index.js';
import { entryListCopyCount } from '../../src/memory/reducer.js';
import { ScriptedModelClient, type ModelResult } from '../../src/model/index.js';
import { replaySession } from '../../src/replay/index.js';
import { Agents, defineTool } from '../../src/runtime/index.js';
import { openAgentMemory } from '../../src/session/index.js';

const readFile = defineTool({
  name: 'read_file',
  description: 'Read a file',
  parameters: z.object({ path: z.string() }),
  execute: ({ path }) => `// ${path}`,
});

describe("memory's entry list across many appends", () => {
  it('a step with 1,000 tool results copies it a few times, not once per result, when recorded and when re-run', async () => {
    const log = await openMemoryLog();
    const n = 1_000;
    const answers: ModelResult[] = [
      { items: Array.from({ length: n }, (_, i) => functionCall(`call_${i}`, 'read_file', { path: `src/f${i}.ts` })) },
      { outputText: 'done', items: [assistantMessage('done')] },
    ];
    const agent = Agents.react({ modelClient: new ScriptedModelClient(answers), model: 'scripted', tools: [readFile], log });
    const session = await agent.newSession();
    let before = entryListCopyCount();
    await session.run('Read them all.');
    const recording = entryListCopyCount() - before;
    expect(session.memory.getItems().filter((i) => i.type === 'function_call_output')).toHaveLength(n);
    before = entryListCopyCount();
    const replayed = await replaySession(log, session.id, { mode: 'rerun' });
    const rerun = entryListCopyCount() - before;
    expect(replayed.identical).toBe(true);
    // once per append would be more than n; the work is per read of memory, a few per step
    expect({ recording: recording <= 10, rerun: rerun <= 10 }).toEqual({ recording: true, rerun: true });
    await log.close();
  });

  it('appends with no read in between fold into memory as they would one by one: the items, ids and head agree', async () => {
    const log = await openMemoryLog();
    const memory = await openAgentMemory(log, 'm');
    await memory.addUserInput('start');
    const before = entryListCopyCount();
    for (let i = 0; i < 300; i++) await memory.addToolOutput(`c${i}`, `out ${i}`);
    expect(entryListCopyCount() - before).toBeLessThanOrEqual(1);
    const entries = memory.getEntries();
    expect(entries).toHaveLength(301);
    expect(entries[300]).toEqual({ id: '301:0', item: { type: 'function_call_output', call_id: 'c299', output: 'out 299' } });
    expect(Object.isFrozen(entries)).toBe(true);
    const reopened = await openAgentMemory(log, 'm');
    expect(reopened.getEntries()).toEqual(entries);
    await log.close();
  });
});
