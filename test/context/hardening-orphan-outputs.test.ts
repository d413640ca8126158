// Fault: a custom policy that keeps a tool output but drops its call made the runtime send that orphan output on every request.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  Agents,
  DefaultContextProjector,
  ScriptedModelClient,
  assistantMessage,
  defineTool,
  functionCall,
  functionCallOutput,
  isFunctionCall,
  openMemoryLog,
  replaySession,
  userMessage,
  type CompactPolicy,
  type ModelResult,
  type SessionEvent,
} from '../../src/index.js';
import { dropOrphans } from '../../src/context/orphans.js';
import { fatesOf } from '../../src/events/index.js';
import { checkSessionLaws } from '../../src/testing/runtime-laws.js';

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
