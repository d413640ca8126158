// Model-based test of SessionEventLog (the published checkSessionEventLogModel) on the memory and LevelDB logs.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { openLevelLog, openMemoryLog, type SessionEventLog } from '../src/log/index.js';
import { checkSessionEventLogModel } from '../src/testing/log-model.js';

describe('SessionEventLog against an array model', () => {
  it('memory log', async () => {
    await checkSessionEventLogModel({
      create: () => {
        let log: SessionEventLog | undefined;
        return {
          open: async () => (log = await openMemoryLog()),
          cleanup: async () => log?.close(),
        };
      },
    });
  });

  // Each run opens and closes LevelDB several times, so the disk variant caps its runs at 30
  // (the global numRuns, e.g. FC_NUM_RUNS under test:deep, still applies when lower).
  it('LevelDB log with close and reopen', async () => {
    const numRuns = Math.min(fc.readConfigureGlobal().numRuns ?? 100, 30);
    await checkSessionEventLogModel(
      {
        persistent: true,
        create: async () => {
          const dir = await mkdtemp(join(tmpdir(), 'context-ledger-model-'));
          let log: SessionEventLog | undefined;
          return {
            open: async () => (log = await openLevelLog(dir)),
            reopen: async () => {
              await log?.close();
              return (log = await openLevelLog(dir));
            },
            cleanup: async () => {
              await log?.close();
              await rm(dir, { recursive: true, force: true });
            },
          };
        },
      },
      { numRuns },
    );
  });
});
