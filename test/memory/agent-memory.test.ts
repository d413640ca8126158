import { describe, expect, it } from 'vitest';
import { functionCall, functionCallOutput, userMessage, assistantMessage } from '../../src/items/index.js';
import { openMemoryLog, openLevelLog, isExpectedSeqConflictError } from '../../src/log/index.js';
import { foldMemory, type MemoryCompressor } from '../../src/memory/index.js';
import { InMemoryAgentMemory, openAgentMemory } from '../../src/session/index.js';
import type { SessionEvent } from '../../src/events/index.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const readAll = async (log: { read(id: string): AsyncIterable<SessionEvent> }, id: string): Promise<SessionEvent[]> => {
  const out: SessionEvent[] = [];
  for await (const e of log.read(id)) out.push(e);
  return out;
};

describe('AgentMemory (event-sourced)', () => {
  it('records every write as an event and reads from the fold', async () => {
    const memory = new InMemoryAgentMemory({ sessionId: 's1' });
    await memory.addUserInput('fix the failing test');
    await memory.addOutputItems([assistantMessage('running it'), functionCall('c1', 'bash', { cmd: 'npm test' })]);
    await memory.addToolOutput('c1', '1 failed');
    expect(memory.getItems()).toEqual([
      userMessage('fix the failing test'),
      assistantMessage('running it'),
      functionCall('c1', 'bash', { cmd: 'npm test' }),
      functionCallOutput('c1', '1 failed'),
    ]);
    expect(memory.getEntries().map((e) => e.id)).toEqual(['1:0', '2:0', '2:1', '3:0']);
    const events = await readAll(memory.log, 's1');
    expect(events.map((e) => e.type)).toEqual(['user.input', 'model.output', 'tool.result']);
    expect(foldMemory(events)).toEqual(memory.state());
  });

  it('puts a non-blank summary first as a system message, and hides a blank one', async () => {
    const memory = new InMemoryAgentMemory();
    await memory.addUserInput('hello');
    await memory.setSummary('earlier: we read the code');
    expect(memory.getItems()[0]).toEqual({ type: 'message', role: 'system', content: 'earlier: we read the code' });
    expect(memory.getEntries()[0]!.id).toBe('2:summary');
    expect(memory.getItems()).toHaveLength(2);
    await memory.setSummary('   ');
    expect(memory.getItems()).toEqual([userMessage('hello')]);
    expect(memory.getSummary()).toBe('   ');
  });

  it('restore keeps the snapshot summary, and a summary-less snapshot clears it', async () => {
    const memory = new InMemoryAgentMemory();
    await memory.addUserInput('a');
    await memory.setSummary('old');
    await memory.restore({ items: [userMessage('b')], summary: 'kept summary' });
    expect(memory.getSummary()).toBe('kept summary');
    expect(memory.getItems()).toEqual([{ type: 'message', role: 'system', content: 'kept summary' }, userMessage('b')]);
    await memory.restore({ items: [userMessage('c')] });
    expect(memory.getSummary()).toBeNull();
    expect(memory.getItems()).toEqual([userMessage('c')]);
  });

  it('clear empties items and summary, as an event', async () => {
    const memory = new InMemoryAgentMemory({ sessionId: 'c' });
    await memory.addUserInput('a');
    await memory.setSummary('s');
    await memory.clear();
    expect(memory.getItems()).toEqual([]);
    expect(memory.getSummary()).toBeNull();
    expect((await readAll(memory.log, 'c')).at(-1)?.type).toBe('memory.cleared');
  });

  it('keeps recorded facts in state without adding prompt items', async () => {
    const memory = new InMemoryAgentMemory();
    await memory.addUserInput('go');
    await memory.record([
      { type: 'command.failed', command: 'npm test', exitCode: 1 },
      { type: 'test.result', status: 'failed', failed: 2, passed: 10 },
      { type: 'approval.recorded', action: 'push', approved: true, by: 'ana' },
      { type: 'sandbox.state', description: 'node 20 container' },
      { type: 'artifact.changed', path: 'src/a.ts', change: 'modified' },
    ]);
    expect(memory.getItems()).toEqual([userMessage('go')]);
    expect(memory.snapshot().facts?.map((f) => f.type)).toEqual([
      'command.failed',
      'test.result',
      'approval.recorded',
      'sandbox.state',
      'artifact.changed',
    ]);
  });

  it('serialises concurrent writes from one memory', async () => {
    const memory = new InMemoryAgentMemory();
    await Promise.all(Array.from({ length: 20 }, (_, i) => memory.addUserInput(`m${i}`)));
    expect(memory.getItems().map((i) => (i as { content: string }).content)).toEqual(Array.from({ length: 20 }, (_, i) => `m${i}`));
    expect(memory.headSeq()).toBe(20);
  });

  it('detects a second writer to the same session instead of merging', async () => {
    const log = await openMemoryLog();
    const a = await openAgentMemory(log, 'shared');
    const b = await openAgentMemory(log, 'shared');
    await a.addUserInput('from a');
    const error = await b.addUserInput('from b').catch((e: unknown) => e);
    expect(isExpectedSeqConflictError(error)).toBe(true);
    expect(b.getItems()).toEqual([]);
    await log.close();
  });

  it('folds existing events on open (LevelDB), so a reopened memory has the same state', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cl-mem-'));
    try {
      let log = await openLevelLog(dir);
      const first = await openAgentMemory(log, 'persist');
      await first.addUserInput('one');
      await first.setSummary('sum');
      await first.addOutputItems([assistantMessage('two')]);
      const state = first.state();
      await log.close();
      log = await openLevelLog(dir);
      const again = await openAgentMemory(log, 'persist');
      expect(again.state()).toEqual(state);
      expect(again.headSeq()).toBe(3);
      await again.addUserInput('three');
      expect(again.getEntries().at(-1)?.id).toBe('4:0');
      await log.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('runs a compressor after writes and records its result as a compaction', async () => {
    const keepLastTwo: MemoryCompressor = {
      describe: () => ({ name: 'keep-last-two', settings: { keep: 2 } }),
      compress: (snapshot) => (snapshot.items.length > 2 ? { items: snapshot.items.slice(-2), summary: 'compressed' } : snapshot),
    };
    const memory = new InMemoryAgentMemory({ sessionId: 'cmp', compressor: keepLastTwo });
    await memory.addUserInput('a');
    await memory.addUserInput('b');
    await memory.addUserInput('c');
    expect(memory.getItems()).toEqual([{ type: 'message', role: 'system', content: 'compressed' }, userMessage('b'), userMessage('c')]);
    const events = await readAll(memory.log, 'cmp');
    const compacted = events.at(-1);
    expect(compacted?.type).toBe('memory.compacted');
    if (compacted?.type !== 'memory.compacted') throw new Error('unreachable');
    expect(compacted.policy).toEqual({ name: 'keep-last-two', settings: { keep: 2 } });
    expect(compacted.keptIds).toEqual(['2:0', '3:0']);
    expect(compacted.droppedIds).toEqual(['1:0']);
    expect(compacted.trigger).toBe('auto');
    expect(foldMemory(events)).toEqual(memory.state());
  });

  it('records a throwing compressor as compaction.failed and keeps the write', async () => {
    const broken: MemoryCompressor = {
      compress: () => {
        throw new Error('boom');
      },
    };
    const memory = new InMemoryAgentMemory({ sessionId: 'x', compressor: broken });
    await memory.addUserInput('kept');
    expect(memory.getItems()).toEqual([userMessage('kept')]);
    const events = await readAll(memory.log, 'x');
    expect(events.map((e) => e.type)).toEqual(['user.input', 'compaction.failed']);
    expect(events[1]).toMatchObject({ error: 'boom', trigger: 'auto', stage: 'compact' });
  });
});

describe('the summary message', () => {
  it('is the same object from turn to turn while the summary does not change', async () => {
    const memory = new InMemoryAgentMemory();
    await memory.setSummary('goal: fix it');
    const first = memory.getItems()[0];
    await memory.addUserInput('more');
    await memory.addUserInput('and more');
    expect(memory.getItems()[0]).toBe(first);
    await memory.setSummary('goal: fix it, then test');
    expect(memory.getItems()[0]).not.toBe(first);
    expect(memory.getItems()[0]).toEqual({ type: 'message', role: 'system', content: 'goal: fix it, then test' });
  });
});
