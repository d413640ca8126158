// The published AgentMemory contract run against both memories we ship: log-backed (LevelDB and memory-level) and in-memory.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openLevelLog, openMemoryLog, type SessionEventLog } from '../../src/log/index.js';
import type { AgentMemory } from '../../src/memory/index.js';
import { InMemoryAgentMemory, openAgentMemory } from '../../src/session/index.js';
import { describeAgentMemoryContract } from '../../src/testing/index.js';

describeAgentMemoryContract({ describe, it }, 'InMemoryAgentMemory', { open: async (options) => new InMemoryAgentMemory(options ?? {}) });

const logs: SessionEventLog[] = [];
let dir: string | undefined;
let counter = 0;
const levelLog = async (): Promise<SessionEventLog> => {
  dir ??= await mkdtemp(join(tmpdir(), 'cl-memory-contract-'));
  const log = await openLevelLog(dir);
  logs.push(log);
  return log;
};
afterAll(async () => {
  for (const log of logs) await log.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const logOf = new WeakMap<AgentMemory, SessionEventLog>();
describeAgentMemoryContract({ describe, it }, 'openAgentMemory over LevelDB', {
  open: async (options) => {
    const log = logs[0] ?? (await levelLog());
    const memory = await openAgentMemory(log, `s${(counter += 1)}`, options ?? {});
    logOf.set(memory, log);
    return memory;
  },
  reopen: async (memory) => openAgentMemory(logOf.get(memory)!, memory.sessionId),
});

describeAgentMemoryContract({ describe, it }, 'openAgentMemory over memory-level', {
  open: async (options) => {
    const log = await openMemoryLog();
    const memory = await openAgentMemory(log, 'm', options ?? {});
    logOf.set(memory, log);
    return memory;
  },
  reopen: async (memory) => openAgentMemory(logOf.get(memory)!, memory.sessionId),
});

describe('the AgentMemory contract catches a broken memory', () => {
  it('a memory that puts the summary last and forgets restore summaries', async () => {
    const tests: Array<{ name: string; body: () => Promise<void> | void }> = [];
    describeAgentMemoryContract({ describe: (_n, body) => body(), it: (name, body) => void tests.push({ name, body }) }, 'broken', {
      open: async (options) => {
        const inner = new InMemoryAgentMemory(options ?? {});
        const broken: AgentMemory = {
          sessionId: inner.sessionId,
          addUserInput: (input) => inner.addUserInput(input),
          addOutputItems: (items) => inner.addOutputItems(items),
          addToolOutput: (callId, output, more) => inner.addToolOutput(callId, output, more),
          getEntries: () => inner.getEntries(),
          getSummary: () => inner.getSummary(),
          setSummary: (summary) => inner.setSummary(summary),
          snapshot: () => inner.snapshot(),
          clear: () => inner.clear(),
          record: (events) => inner.record(events),
          state: () => inner.state(),
          headSeq: () => inner.headSeq(),
          // The faults: the summary goes last, and restore forgets the snapshot's summary.
          getItems: () => {
            const items = inner.getItems();
            return inner.getSummary()?.trim() && items.length > 0 ? [...items.slice(1), items[0]!] : items;
          },
          restore: (snapshot) => inner.restore({ items: snapshot.items }),
        };
        return broken;
      },
    });
    const failed: string[] = [];
    for (const test of tests) {
      try {
        await test.body();
      } catch {
        failed.push(test.name);
      }
    }
    expect(failed).toEqual([
      'shows a non-blank summary first as a system message and hides a blank one',
      'restore keeps the snapshot summary, and a summary-less snapshot clears it',
    ]);
  });
});
