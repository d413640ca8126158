// The SessionEventLog contract on the in-memory log (memory-level), awaited and lazily opened.
import { describe, expect, it } from 'vitest';
import { createMemoryLog, openMemoryLog, type SessionEventLog } from '../../src/log/index.js';
import { collect, describeSessionEventLogContract, inputs, type HarnessOpenOptions, type LogHarness } from './contract.js';

const memoryHarness = (lazy: boolean): LogHarness => {
  let current: SessionEventLog | undefined;
  return {
    async open(options: HarnessOpenOptions = {}) {
      current = lazy ? createMemoryLog(options) : await openMemoryLog(options);
      return current;
    },
    async cleanup() {
      await current?.close();
    },
  };
};

describeSessionEventLogContract('memory (openMemoryLog)', () => memoryHarness(false));
describeSessionEventLogContract('memory (createMemoryLog, not awaited)', () => memoryHarness(true));

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
