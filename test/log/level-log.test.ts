// The SessionEventLog contract on LevelDB (a temp dir per test), plus what only a disk log has: reopen, the lock (also
// against a second handle under another spelling of the directory), sync.
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Level } from 'level';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
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
import { collectAll, says, tempDir as scratchDir } from './support.js';

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

// Fault "second handle in one process": the same directory under another spelling got a second handle, and the two destroyed each other's appends.
let dir: string;
let remove: () => Promise<void>;
const opened: SessionEventLog[] = [];

/** A temp dir for each test of the calling describe; the logs opened by `open` are closed after it. */
const scratchDirPerTest = (): void => {
  beforeEach(async () => {
    ({ dir, remove } = await scratchDir('second-handle'));
  });

  afterEach(async () => {
    for (const log of opened.splice(0)) await log.close();
    await remove();
  });
};

const open = async (path: string): Promise<SessionEventLog> => {
  const log = await openLevelLog(path);
  opened.push(log);
  return log;
};

describe('second handle in one process', () => {
  scratchDirPerTest();

  it('refuses dir/, dir/., a relative path and a symlink while the log is open, and the first handle keeps all 400 appends', async () => {
    const logDir = join(dir, 'ledger');
    const first = await open(logDir);
    await symlink(logDir, join(dir, 'link'));
    const spellings = [`${logDir}/`, `${logDir}/.`, relative(process.cwd(), logDir), join(dir, 'link'), join(dir, 'link', '.'), `${dir}/./ledger`];

    // the loss scenario: appends through the first handle while a second open (e.g. only to verify) is attempted
    for (let i = 0; i < 400; i++) {
      await first.append('s', says(`a${i}`, 1));
      if (i % 100 === 50) {
        for (const spelling of spellings) {
          const error = await rejectionOf(openLevelLog(spelling));
          expect(isLogInUseError(error), spelling).toBe(true);
          expect((error as Error).message).toContain(spelling);
          expect((error as Error).message).toMatch(/in use/);
        }
      }
    }
    expect(await first.head('s')).toBe(400);
    await first.close();
    opened.length = 0;

    // closed: any spelling opens it again, and every acknowledged append is there
    const again = await open(join(dir, 'link'));
    expect(await again.verify('s')).toEqual({ valid: true, eventCount: 400, firstBrokenSeq: null });
    expect((await collectAll(again.read('s'))).map((e) => e.seq)).toEqual(Array.from({ length: 400 }, (_, i) => i + 1));
  });

  it('lets exactly one of two racing opens of one directory (two spellings) win', async () => {
    const logDir = join(dir, 'race');
    const results = await Promise.allSettled([openLevelLog(logDir), openLevelLog(`${logDir}/.`), openLevelLog(`${logDir}/`)]);
    const won = results.filter((r): r is PromiseFulfilledResult<SessionEventLog> => r.status === 'fulfilled');
    expect(won).toHaveLength(1);
    opened.push(won[0]!.value);
    for (const r of results) if (r.status === 'rejected') expect(isLogInUseError(r.reason)).toBe(true);
  });

  it('releases the directory when an open fails and when the log is closed', async () => {
    const logDir = join(dir, 'cycle');
    for (let i = 0; i < 3; i++) {
      const log = await openLevelLog(`${logDir}${i % 2 === 0 ? '' : '/'}`);
      await log.append('s', says(`r${i}`, 1));
      await log.close();
    }
    const log = await open(logDir);
    expect(await log.head('s')).toBe(3);
  });
});

describe('openLevelLog with options it refuses', () => {
  scratchDirPerTest();

  it('closes the store and releases the directory, so the next open succeeds', async () => {
    const logDir = join(dir, 'bad-options');
    await expect(openLevelLog(logDir, { maxEventBytes: -1 })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
    const log = await open(logDir);
    await log.append('s', says('ok', 1));
    expect(await log.head('s')).toBe(1);
  });
});
