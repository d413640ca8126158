// The SessionEventLog contract on the in-memory log (memory-level), awaited and lazily opened.
import { MemoryLevel } from 'memory-level';
import { describe, expect, it } from 'vitest';
import { createMemoryLog, openMemoryLog, writerStateCount, type SessionEventLog } from '../../src/log/index.js';
import { eventKey } from '../../src/log/keys.js';
import { createStoreLog, type StringLevel } from '../../src/log/store.js';
import {
  collect,
  describeSessionEventLogContract,
  inputs,
  type LogHarnessOpenOptions,
  type LogHarnessStore,
} from '../../src/testing/log-contract.js';

const memoryHarness = (lazy: boolean): LogHarnessStore => {
  let current: SessionEventLog | undefined;
  return {
    async open(options: LogHarnessOpenOptions = {}) {
      current = lazy ? createMemoryLog(options) : await openMemoryLog(options);
      return current;
    },
    async cleanup() {
      await current?.close();
    },
  };
};

/** The same log over a MemoryLevel the test holds, so `tamper` can edit a stored event in place. */
const editableMemoryHarness = (): LogHarnessStore => {
  const db = new MemoryLevel<string, string>({ keyEncoding: 'utf8', valueEncoding: 'utf8' });
  let current: SessionEventLog | undefined;
  return {
    async open(options: LogHarnessOpenOptions = {}) {
      await db.open();
      current = createStoreLog(db as unknown as StringLevel, options);
      return current;
    },
    async tamper(sessionId, seq, edit) {
      const stored = await db.get(eventKey(sessionId, seq));
      if (stored === undefined || !current) throw new Error(`no event ${seq} in ${sessionId} to tamper with`);
      await db.put(eventKey(sessionId, seq), edit(stored));
      return current;
    },
    async cleanup() {
      await current?.close();
    },
  };
};

describeSessionEventLogContract({ describe, it, expect }, 'memory (openMemoryLog)', { writerStates: writerStateCount, create: () => memoryHarness(false) });
describeSessionEventLogContract({ describe, it, expect }, 'memory-level (createStoreLog, edited in place)', { tamperable: true, create: () => editableMemoryHarness() });
describeSessionEventLogContract({ describe, it, expect }, 'memory (createMemoryLog, not awaited)', { create: () => memoryHarness(true) });

describe('openMemoryLog', () => {
  it('gives independent logs', async () => {
    const a = await openMemoryLog();
    const b = await openMemoryLog();
    await a.append('s', inputs('a', 2));
    expect(await b.head('s')).toBe(0);
    expect(await collect(b.sessions())).toEqual([]);
    await Promise.all([a.close(), b.close()]);
  });
});
