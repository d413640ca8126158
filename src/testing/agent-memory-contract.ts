// The AgentMemory contract: the reference behaviours every memory (log-backed, in-memory, yours) must keep.
import assert from 'node:assert/strict';
import { assistantMessage, functionCall, functionCallOutput, userMessage, type MemoryItem } from '../items/index.js';
import type { AgentMemory, MemoryCompressor } from '../memory/index.js';
import type { ContractTestApi } from './contract-api.js';

export interface AgentMemoryHarness {
  /** A fresh, empty memory (with the compressor, when given). */
  open(options?: { readonly compressor?: MemoryCompressor }): Promise<AgentMemory>;
  /** For persistent memories: the same session opened again (e.g. from its log); absent = not persistent. */
  reopen?(memory: AgentMemory): Promise<AgentMemory>;
}

const system = (text: string): MemoryItem => ({ type: 'message', role: 'system', content: text });

/**
 * Registers the AgentMemory contract for `name`: writes read back in order with stable ids, summary first as a
 * system message, restore and clear as the reference defines them, facts in snapshots, compressors after each
 * write, failed writes leaving memory as it was, and (when `reopen` is given) the same memory after reopening.
 * @example describeAgentMemoryContract({ describe, it }, 'in-memory', { open: async (o) => new InMemoryAgentMemory(o) })
 */
export const describeAgentMemoryContract = (api: ContractTestApi, name: string, harness: AgentMemoryHarness): void => {
  api.describe(`AgentMemory contract: ${name}`, () => {
    api.it('reads back every write, in order, synchronously after it resolves', async () => {
      const memory = await harness.open();
      await memory.addUserInput('fix the failing test');
      assert.deepEqual(memory.getItems(), [userMessage('fix the failing test')]);
      await memory.addOutputItems([assistantMessage('running it'), functionCall('c1', 'bash', { cmd: 'npm test' })]);
      await memory.addToolOutput('c1', '1 failed');
      assert.deepEqual(memory.getItems(), [
        userMessage('fix the failing test'),
        assistantMessage('running it'),
        functionCall('c1', 'bash', { cmd: 'npm test' }),
        functionCallOutput('c1', '1 failed'),
      ]);
    });

    api.it('gives every item a unique id that later writes do not change', async () => {
      const memory = await harness.open();
      await memory.addUserInput([userMessage('a'), userMessage('b')]);
      const before = memory.getEntries().map((e) => e.id);
      assert.equal(new Set(before).size, before.length, 'ids are unique');
      await memory.addOutputItems([assistantMessage('c')]);
      const after = memory.getEntries().map((e) => e.id);
      assert.deepEqual(after.slice(0, before.length), before, 'earlier ids are stable');
      assert.equal(new Set(after).size, after.length);
    });

    api.it('shows a non-blank summary first as a system message and hides a blank one', async () => {
      const memory = await harness.open();
      await memory.addUserInput('hello');
      await memory.setSummary('earlier: we read the code');
      assert.deepEqual(memory.getItems(), [system('earlier: we read the code'), userMessage('hello')]);
      assert.equal(memory.getSummary(), 'earlier: we read the code');
      assert.deepEqual(memory.snapshot().items, [userMessage('hello')], 'snapshot items are raw, without the summary');
      await memory.setSummary('   ');
      assert.deepEqual(memory.getItems(), [userMessage('hello')]);
      await memory.setSummary(null);
      assert.equal(memory.getSummary(), null);
    });

    api.it('restore keeps the snapshot summary, and a summary-less snapshot clears it', async () => {
      const memory = await harness.open();
      await memory.addUserInput('a');
      await memory.setSummary('old');
      await memory.restore({ items: [userMessage('b')], summary: 'kept summary' });
      assert.equal(memory.getSummary(), 'kept summary');
      assert.deepEqual(memory.getItems(), [system('kept summary'), userMessage('b')]);
      await memory.restore({ items: [userMessage('c')] });
      assert.equal(memory.getSummary(), null);
      assert.deepEqual(memory.getItems(), [userMessage('c')]);
    });

    api.it('clear empties items and summary', async () => {
      const memory = await harness.open();
      await memory.addUserInput('a');
      await memory.setSummary('s');
      await memory.clear();
      assert.deepEqual(memory.getItems(), []);
      assert.equal(memory.getSummary(), null);
    });

    api.it('puts recorded facts into the snapshot', async () => {
      const memory = await harness.open();
      await memory.addUserInput('run the tests');
      await memory.record([{ type: 'test.result', status: 'failed', failed: 1, passed: 11 }]);
      const facts = memory.snapshot().facts ?? [];
      assert.equal(facts.length, 1);
      assert.equal(facts[0]?.type, 'test.result');
    });

    api.it('does not let a caller change memory through what it returned', async () => {
      const memory = await harness.open();
      await memory.addUserInput('a');
      const items = memory.getItems();
      try {
        items.push(userMessage('injected'));
        (items[0] as { content: unknown }).content = 'changed';
      } catch {
        // Frozen results are fine too.
      }
      const snapshot = memory.snapshot();
      try {
        (snapshot.items as MemoryItem[]).push(userMessage('injected'));
      } catch {
        // Frozen.
      }
      assert.deepEqual(memory.getItems(), [userMessage('a')]);
    });

    api.it('rejects an invalid write and keeps memory as it was', async () => {
      const memory = await harness.open();
      await memory.addUserInput('a');
      await assert.rejects(memory.addOutputItems([{ role: 'assistant', content: 'no type' } as unknown as MemoryItem]));
      await assert.rejects(memory.addToolOutput('', 'empty call id'));
      assert.deepEqual(memory.getItems(), [userMessage('a')]);
      await memory.addUserInput('b');
      assert.deepEqual(memory.getItems(), [userMessage('a'), userMessage('b')]);
    });

    api.it('runs the compressor after each write, and its result becomes memory', async () => {
      let calls = 0;
      const compressor: MemoryCompressor = {
        compress: (snapshot) => {
          calls += 1;
          return snapshot.items.length > 2 ? { items: snapshot.items.slice(-2), summary: 'compressed' } : snapshot;
        },
      };
      const memory = await harness.open({ compressor });
      await memory.addUserInput('one');
      await memory.addUserInput('two');
      await memory.addUserInput('three');
      assert.ok(calls >= 3, `the compressor ran after each write (${calls} calls)`);
      assert.equal(memory.getSummary(), 'compressed');
      assert.deepEqual(memory.snapshot().items, [userMessage('two'), userMessage('three')]);
    });

    if (harness.reopen) {
      const reopen = harness.reopen.bind(harness);
      api.it('reopens to the same items, ids and summary', async () => {
        const memory = await harness.open();
        await memory.addUserInput('a');
        await memory.addOutputItems([functionCall('c1', 'bash', {})]);
        await memory.addToolOutput('c1', 'ok');
        await memory.setSummary('s');
        const again = await reopen(memory);
        assert.deepEqual(again.getEntries(), memory.getEntries());
        assert.equal(again.getSummary(), 's');
        await again.addUserInput('b');
        assert.deepEqual(again.getItems().at(-1), userMessage('b'));
      });
    }
  });
};
