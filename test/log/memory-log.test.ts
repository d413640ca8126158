// The SessionEventLog contract on the in-memory log (memory-level), awaited and lazily opened.
import { describe, expect, it } from 'vitest';
import { createMemoryLog, openMemoryLog, type SessionEventLog } from '../../src/log/index.js';
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

describeSessionEventLogContract({ describe, it, expect }, 'memory (openMemoryLog)', { create: () => memoryHarness(false) });
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
