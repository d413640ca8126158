// Fault "second handle in one process": the same directory under another spelling got a second handle, and the two destroyed each other's appends.
import { symlink } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isLogInUseError, openLevelLog, type SessionEventLog } from '../../src/log/index.js';
import { collectAll, rejectionOf, says, tempDir } from './support.js';

let dir: string;
let remove: () => Promise<void>;
const opened: SessionEventLog[] = [];

beforeEach(async () => {
  ({ dir, remove } = await tempDir('second-handle'));
});

afterEach(async () => {
  for (const log of opened.splice(0)) await log.close();
  await remove();
});

const open = async (path: string): Promise<SessionEventLog> => {
  const log = await openLevelLog(path);
  opened.push(log);
  return log;
};

describe('second handle in one process', () => {
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
  it('closes the store and releases the directory, so the next open succeeds', async () => {
    const logDir = join(dir, 'bad-options');
    await expect(openLevelLog(logDir, { maxEventBytes: -1 })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
    const log = await open(logDir);
    await log.append('s', says('ok', 1));
    expect(await log.head('s')).toBe(1);
  });
});
