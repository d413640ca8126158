// Opening the ledger a command names with --dir: read commands never create or change it, and read a consistent
// snapshot copy when a running agent holds the LevelDB lock or the directory cannot be written here (read-only);
// write commands (demo, fork) may create it.
import { existsSync, realpathSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { Level } from 'level';
import { createStoreLog, openLevelLog, type SessionEventLog, type StringLevel } from '../log/index.js';
import { isLockError } from '../log/open.js';
import { CliError } from './errors.js';
import { snapshotLevelDir } from './snapshot.js';

export interface OpenedLedger {
  readonly log: SessionEventLog;
  /** Set when the ledger was locked and a snapshot copy is being read. */
  readonly snapshot?: { readonly dir: string };
  close(): Promise<void>;
}

/** Whether opening failed because the directory cannot be written here (its LOCK file cannot be created or locked). */
const isReadOnlyError = (error: unknown): boolean => {
  let e: unknown = error;
  for (let depth = 0; depth < 4 && e; depth++) {
    const code = (e as { code?: unknown }).code;
    if (code === 'EACCES' || code === 'EROFS' || code === 'EPERM') return true;
    if (e instanceof Error && /LOCK: (Permission denied|Read-only file system|Operation not permitted)/.test(e.message)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
};

const causeMessage = (error: unknown): string => {
  let e: unknown = error;
  let message = error instanceof Error ? error.message : String(error);
  for (let depth = 0; depth < 4 && e; depth++) {
    if (e instanceof Error && e.message) message = e.message;
    e = (e as { cause?: unknown }).cause;
  }
  return message;
};

/** Whether --dir names a PostgreSQL database rather than a LevelDB directory. */
export const isPostgresUrl = (dir: string): boolean => /^postgres(ql)?:\/\//.test(dir);

/** Opens a PostgreSQL ledger (pg is an optional peer: loaded only here). Its tables must exist (`migrate --pg`). */
/** How a command opens a ledger: the chain key of a keyed one. */
export interface LedgerOpenOptions {
  readonly chainKey?: string;
}

const openPostgres = async (url: string, keyed: LedgerOpenOptions = {}): Promise<OpenedLedger> => {
  let postgres: typeof import('../postgres/index.js');
  try {
    postgres = await import('../postgres/index.js');
  } catch (error) {
    throw new CliError(`PostgreSQL ledgers need the pg package (npm install pg): ${causeMessage(error)}`, 2);
  }
  try {
    const log = await postgres.openPostgresLog({ connectionString: url }, keyed);
    return { log, close: () => log.close() };
  } catch (error) {
    throw new CliError(`cannot open the ledger at ${redact(url)}: ${causeMessage(error)}`, 2);
  }
};

/**
 * The real path of a ledger directory (symlinks, `.`, `..` and trailing slashes resolved), also when it does not exist
 * yet: the real path of its nearest existing parent, then the rest. A postgres:// URL is returned as it is.
 */
export const realLedgerPath = (dir: string): string => {
  if (isPostgresUrl(dir)) return dir;
  const missing: string[] = [];
  let path = resolve(dir);
  for (;;) {
    try {
      return join(realpathSync(path), ...missing.reverse());
    } catch {
      const parent = dirname(path);
      if (parent === path) return resolve(dir);
      missing.push(basename(path));
      path = parent;
    }
  }
};

/** A connection string without its password, for messages. */
export const redact = (url: string): string => url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');

/** Opens an existing LevelDB directory without creating anything; throws the lock error as is. */
const openExisting = async (dir: string): Promise<Level<string, string>> => {
  const db = new Level<string, string>(dir, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
  await db.open({ createIfMissing: false });
  return db;
};

/**
 * Opens a ledger for reading. A missing directory, or one that is not a LevelDB ledger, is an error (exit 2),
 * never created. When a running agent holds the lock, or the directory cannot be written here (a read-only mount, no
 * write permission: LevelDB cannot create its LOCK file), opens a snapshot copy and calls `onSnapshot`.
 */
export const openForRead = async (dir: string, onSnapshot: (message: string) => void, keyed: LedgerOpenOptions = {}): Promise<OpenedLedger> => {
  if (isPostgresUrl(dir)) return openPostgres(dir, keyed);
  if (!existsSync(dir)) throw new CliError(`no ledger at ${dir}: no such directory`, 2);
  if (!statSync(dir).isDirectory()) throw new CliError(`no ledger at ${dir}: not a directory`, 2);
  if (!existsSync(`${dir}/CURRENT`)) throw new CliError(`no ledger at ${dir}: the directory holds no LevelDB database`, 2);
  let why: string;
  try {
    const db = await openExisting(dir);
    const log = createStoreLog(db as unknown as StringLevel, keyed);
    return { log, close: () => log.close() };
  } catch (error) {
    if (isLockError(error)) why = `${dir} is in use by another process`;
    else if (isReadOnlyError(error)) why = `${dir} cannot be written here (${causeMessage(error).replace(/^.*LOCK: /, '')})`;
    else throw new CliError(`cannot open the ledger at ${dir}: ${causeMessage(error)}`, 2);
  }
  // A table the copied manifest names may have been written after the tables were linked: take it again.
  let lastError: unknown;
  for (let attempt = 0; attempt < 5; attempt++) {
    const snapshot = await snapshotLevelDir(dir);
    try {
      const db = await openExisting(snapshot.dir);
      const log = createStoreLog(db as unknown as StringLevel, keyed);
      onSnapshot(`${why}: reading a snapshot taken now`);
      // Interrupted (Ctrl-C, kill): remove the copy before exiting.
      const interrupted = (signal: NodeJS.Signals): void => {
        rmSync(snapshot.dir, { recursive: true, force: true });
        process.exit(signal === 'SIGINT' ? 130 : 143);
      };
      process.once('SIGINT', interrupted);
      process.once('SIGTERM', interrupted);
      // Ended early (stdout closed by `| head`): the copy goes too.
      const exited = (): void => rmSync(snapshot.dir, { recursive: true, force: true });
      process.once('exit', exited);
      return {
        log,
        snapshot: { dir: snapshot.dir },
        close: async () => {
          process.off('SIGINT', interrupted);
          process.off('SIGTERM', interrupted);
          process.off('exit', exited);
          try {
            await log.close();
          } finally {
            await snapshot.remove();
          }
        },
      };
    } catch (error) {
      await snapshot.remove();
      lastError = error;
    }
  }
  throw new CliError(`cannot open a snapshot of ${dir}: ${causeMessage(lastError)}`, 2);
};

/** Opens (creating when missing) a ledger for writing; a locked one is an error (exit 2). */
export const openForWrite = async (dir: string, keyed: LedgerOpenOptions = {}): Promise<OpenedLedger> => {
  if (isPostgresUrl(dir)) return openPostgres(dir, keyed);
  try {
    const log = await openLevelLog(dir, keyed);
    return { log, close: () => log.close() };
  } catch (error) {
    if (isLockError(error)) throw new CliError(`${dir} is in use by another process; stop it or use another --dir`, 2);
    throw new CliError(`cannot open the ledger at ${dir}: ${causeMessage(error)}`, 2);
  }
};
