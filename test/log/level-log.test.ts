// The SessionEventLog contract on LevelDB (a temp dir per test), plus what only a disk log has: reopen, the lock, sync.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Level } from 'level';
import { describe, expect, it } from 'vitest';
import { eventKey } from '../../src/log/keys.js';
import { isLogInUseError, openLevelLog, writerStateCount, type LevelLogOptions, type SessionEventLog } from '../../src/log/index.js';
import {
  collect,
  describeSessionEventLogContract,
  inputs,
  rejectionOf,
  type LogHarnessOpenOptions,
  type LogHarnessStore,
} from '../../src/testing/log-contract.js';

const tempDir = (): Promise<string> => mkdtemp(join(tmpdir(), 'context-ledger-log-'));

/** A LevelDB log in its own temp dir; `tamper` edits an event with the log closed; `cleanup` closes it and removes the dir. */
export const levelHarness = (base: LevelLogOptions = {}): LogHarnessStore => {
  let dir: string | undefined;
  let options: LevelLogOptions = base;
  let current: SessionEventLog | undefined;
  return {
    async open(extra: LogHarnessOpenOptions = {}) {
      dir ??= await tempDir();
      options = { ...base, ...extra };
      current = await openLevelLog(dir, options);
      return current;
    },
    async reopen() {
      if (!dir) throw new Error('reopen before open');
      await current?.close();
      current = await openLevelLog(dir, options);
      return current;
    },
    async tamper(sessionId, seq, edit) {
      if (!dir) throw new Error('tamper before open');
      await current?.close();
      const db = new Level<string, string>(dir, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
      await db.open();
      try {
        const stored = await db.get(eventKey(sessionId, seq));
        if (stored === undefined) throw new Error(`no event ${seq} in ${sessionId} to tamper with`);
        await db.put(eventKey(sessionId, seq), edit(stored));
      } finally {
        await db.close();
      }
      current = await openLevelLog(dir, options);
      return current;
    },
    async cleanup() {
      await current?.close();
      if (dir) await rm(dir, { recursive: true, force: true });
    },
  };
};

describeSessionEventLogContract({ describe, it, expect }, 'LevelDB (openLevelLog)', { persistent: true, tamperable: true, writerStates: writerStateCount, create: () => levelHarness() });
describeSessionEventLogContract({ describe, it, expect }, 'LevelDB with { sync: true }', {
  persistent: true,
  tamperable: true,
  create: () => levelHarness({ sync: true }),
});

describe('openLevelLog', () => {
  it('refuses a directory that is already open with LogInUseError saying the log is in use', async () => {
    const dir = await tempDir();
    const first = await openLevelLog(dir);
    try {
      await first.append('s', inputs('x', 2));
      const error = await rejectionOf(openLevelLog(dir));
      expect(isLogInUseError(error)).toBe(true);
      expect(error).toMatchObject({ name: 'LogInUseError', path: dir });
      expect((error as Error).message).toMatch(/in use/);
      expect((error as Error).message).toContain(dir);
      expect((error as Error).message).not.toMatch(/LEVEL_|IO error/);
      expect(isLogInUseError(new Error('in use'))).toBe(false);

      // the failed open leaves the first handle working
      await first.append('s', inputs('y', 1), { expectedSeq: 2 });
      expect(await first.head('s')).toBe(3);
      await first.close();

      const second = await openLevelLog(dir);
      expect(await second.head('s')).toBe(3);
      expect((await second.verify('s')).valid).toBe(true);
      await second.close();
    } finally {
      await first.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('creates a missing directory (and its parents)', async () => {
    const dir = await tempDir();
    const nested = join(dir, 'a', 'b', '.ledger');
    try {
      const log = await openLevelLog(nested);
      await log.append('s', inputs('x', 1));
      await log.close();
      const again = await openLevelLog(nested);
      expect(await collect(again.sessions())).toEqual(['s']);
      await again.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('with { sync: true } appends, survives reopen and verifies', async () => {
    const dir = await tempDir();
    try {
      const log = await openLevelLog(dir, { sync: true });
      const results = await Promise.all([1, 2, 3].map((n) => log.append('s', inputs(`sync${n}`, n))));
      expect(results.flat().map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6]);
      await log.close();
      const again = await openLevelLog(dir, { sync: true });
      expect(await again.verify('s')).toEqual({ valid: true, eventCount: 6, firstBrokenSeq: null });
      await again.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
