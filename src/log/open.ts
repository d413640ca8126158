// Factories: openLevelLog (LevelDB on disk, the default) and openMemoryLog (memory-level).
import { mkdir, realpath, stat } from 'node:fs/promises';
import { Level } from 'level';
import { MemoryLevel } from 'memory-level';
import type { UpcasterRegistry } from '../events/index.js';
import { LogInUseError } from './errors.js';
import { createStoreLog, type StringLevel } from './store.js';
import type { LevelLogOptions, LogOptions, SessionEventLog } from './types.js';

/** Whether `error` (or one of its first causes) is LevelDB's refusal of a directory another handle holds. */
export const isLockError = (error: unknown): boolean => {
  let e: unknown = error;
  for (let depth = 0; depth < 4 && e; depth++) {
    if ((e as { code?: unknown }).code === 'LEVEL_LOCKED') return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
};

// One registry per process of the directories open as a log, by device and inode: LevelDB's own lock
// refuses only the identical path string in one process, and two handles on one directory destroy
// each other's appends.
const openDirectories = new Set<string>();

/**
 * Opens (creating when missing) a LevelDB log in `path`. A directory already open as a log, in this
 * process under any spelling (`dir/`, `dir/.`, a relative path, a symlink) or in another process,
 * gives `LogInUseError`.
 * @example const log = await openLevelLog('./.ledger'); await log.append('s1', [...]); await log.close();
 */
export const openLevelLog = async (
  path: string,
  options: LevelLogOptions & { readonly upcasters?: UpcasterRegistry } = {},
): Promise<SessionEventLog> => {
  await mkdir(path, { recursive: true });
  const real = await realpath(path);
  const { dev, ino } = await stat(real);
  const identity = `${dev}:${ino}`;
  // Checked and claimed in one synchronous step, so two racing opens cannot both pass.
  if (openDirectories.has(identity)) throw new LogInUseError(path, undefined, real);
  openDirectories.add(identity);
  const db = new Level<string, string>(real, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
  try {
    await db.open();
  } catch (error) {
    openDirectories.delete(identity);
    if (isLockError(error)) throw new LogInUseError(path, error);
    throw error;
  }
  try {
    return createStoreLog(db as unknown as StringLevel, { ...options, onClose: () => openDirectories.delete(identity) });
  } catch (error) {
    // bad options: nothing stays open or claimed
    await db.close();
    openDirectories.delete(identity);
    throw error;
  }
};

/** An in-memory log (memory-level): same code path as the LevelDB log, nothing on disk. */
export const openMemoryLog = async (options: LogOptions & { readonly upcasters?: UpcasterRegistry } = {}): Promise<SessionEventLog> => {
  const db = new MemoryLevel<string, string>({ keyEncoding: 'utf8', valueEncoding: 'utf8' });
  await db.open();
  try {
    return createStoreLog(db as unknown as StringLevel, options);
  } catch (error) {
    await db.close();
    throw error;
  }
};

/**
 * The in-memory log without awaiting open (abstract-level queues operations until it is open).
 * Internal: not exported from the package root; use {@link openMemoryLog}, which is the same log once open.
 * @deprecated Use `await openMemoryLog(options)`.
 */
export const createMemoryLog = (options: LogOptions & { readonly upcasters?: UpcasterRegistry } = {}): SessionEventLog =>
  createStoreLog(new MemoryLevel<string, string>({ keyEncoding: 'utf8', valueEncoding: 'utf8' }) as unknown as StringLevel, options);
