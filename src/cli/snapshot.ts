// A consistent copy of a LevelDB directory that another process holds open: immutable table files are
// hard-linked (copied across file systems), the rest copied; retried when the database changed underneath.
import { copyFile, link, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CliError } from './errors.js';

export interface DirSnapshot {
  readonly dir: string;
  remove(): Promise<void>;
}

const TABLE = /\.(ldb|sst)$/;
/** Files that belong to the running process, not to the data. */
const SKIP = new Set(['LOCK', 'LOG', 'LOG.old']);

const isMissing = (error: unknown): boolean => (error as { code?: unknown }).code === 'ENOENT';

/**
 * Copies `source` into a new temporary directory. LevelDB never rewrites a table file (compaction writes new
 * ones and deletes old ones), and recovery from a copied write-ahead log stops at its last whole record, so a
 * copy taken while CURRENT names the same manifest throughout holds a prefix of the writes: each write batch is
 * all there or not at all. A file deleted while copying, or a new manifest, means the database moved on: try again.
 * @example const snap = await snapshotLevelDir('./.ledger'); try { ... } finally { await snap.remove() }
 */
export const snapshotLevelDir = async (source: string, attempts = 8): Promise<DirSnapshot> => {
  let lastError: unknown;
  for (let attempt = 0; attempt < attempts; attempt++) {
    const dir = await mkdtemp(join(tmpdir(), 'context-ledger-snapshot-'));
    const remove = () => rm(dir, { recursive: true, force: true });
    try {
      const current = await readFile(join(source, 'CURRENT'), 'utf8');
      const names = (await readdir(source)).filter((n) => !SKIP.has(n));
      // Tables first (they never change), then the manifest and logs, CURRENT last.
      const ordered = [...names.filter((n) => TABLE.test(n)), ...names.filter((n) => !TABLE.test(n) && n !== 'CURRENT')];
      for (const name of ordered) {
        const from = join(source, name);
        const to = join(dir, name);
        if (TABLE.test(name)) {
          try {
            await link(from, to);
            continue;
          } catch (error) {
            if (isMissing(error)) throw error;
          }
        }
        await copyFile(from, to);
      }
      const after = await readFile(join(source, 'CURRENT'), 'utf8');
      if (after !== current) throw Object.assign(new CliError('the manifest changed while copying'), { code: 'ENOENT' });
      await writeFile(join(dir, 'CURRENT'), current);
      return { dir, remove };
    } catch (error) {
      await remove();
      lastError = error;
      if (!isMissing(error)) throw error;
    }
  }
  throw new CliError(`could not take a consistent snapshot of ${source}: ${(lastError as Error)?.message ?? 'unknown'}`);
};
