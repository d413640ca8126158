// A consistent copy of a LevelDB directory that another process holds open: the live table files (by the manifest)
// hard-linked (copied where a link is refused), the manifest and write-ahead logs copied; retried when the database
// changed underneath.
import { copyFile, link, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CliError } from './errors.js';
import { fileNumberOf, parseLevelManifest } from './level-manifest.js';

export interface DirSnapshot {
  readonly dir: string;
  remove(): Promise<void>;
}

const isMissing = (error: unknown): boolean => (error as { code?: unknown }).code === 'ENOENT';

/** The database moved on while it was copied (a file went, the manifest changed): take the copy again. */
const movedOn = (why: string): Error => Object.assign(new CliError(why), { code: 'ENOENT' });

/**
 * Copies `source` into a new temporary directory, without writing to it.
 *
 * The manifest is read first, and only the tables its current version holds are linked: a table file the writer is
 * still writing (a compaction or a flush not yet in the manifest) is never linked. (Linking it was a bug: opening
 * the copy replays the copied logs into a new table numbered from the manifest's next file number, which can be that
 * very file, and LevelDB opens a new table with O_TRUNC, so the copy truncated the writer's table through the link
 * and the writer failed with "IO error: ….ldb: Invalid argument".) The write-ahead logs from the manifest's log
 * number on are copied in order, as listed after the manifest was read: a log listed there is either closed or the
 * last one, so the copy holds a prefix of the writes, each write batch all there or not at all (recovery stops at a
 * log's last whole record). A file gone while copying, a needed log missing, or a new manifest means the database
 * moved on: try again.
 * @example const snap = await snapshotLevelDir('./.ledger'); try { ... } finally { await snap.remove() }
 */
export const snapshotLevelDir = async (source: string, attempts = 8): Promise<DirSnapshot> => {
  let lastError: unknown;
  for (let attempt = 0; attempt < attempts; attempt++) {
    const dir = await mkdtemp(join(tmpdir(), 'context-ledger-snapshot-'));
    const remove = () => rm(dir, { recursive: true, force: true });
    try {
      const current = await readFile(join(source, 'CURRENT'), 'utf8');
      const manifestName = current.trim();
      if (!/^MANIFEST-\d+$/.test(manifestName)) throw new CliError(`${source}/CURRENT does not name a manifest: ${JSON.stringify(current.slice(0, 80))}`);
      const manifestBytes = await readFile(join(source, manifestName));
      const manifest = parseLevelManifest(manifestBytes);
      // Listed after the manifest was read: every log it needs, and only logs that were closed then, or the last one.
      const names = await readdir(source);
      const byNumber = new Map<number, string>();
      for (const name of names) {
        const number = fileNumberOf(name);
        if (number !== undefined && !name.startsWith('MANIFEST-')) byNumber.set(number, name);
      }
      for (const number of manifest.liveTables) {
        const name = byNumber.get(number);
        if (name === undefined || !/\.(ldb|sst)$/.test(name)) throw movedOn(`table ${number} of the manifest is not in ${source}`);
        try {
          await link(join(source, name), join(dir, name));
        } catch (error) {
          if (isMissing(error)) throw error;
          await copyFile(join(source, name), join(dir, name)); // another file system, or a link refused
        }
      }
      const firstLog = manifest.prevLogNumber > 0 ? Math.min(manifest.prevLogNumber, manifest.logNumber) : manifest.logNumber;
      const logs = [...byNumber].filter(([number, name]) => name.endsWith('.log') && number >= firstLog).sort((a, b) => a[0] - b[0]);
      if (manifest.logNumber > 0 && !logs.some(([number]) => number === manifest.logNumber)) {
        throw movedOn(`log ${manifest.logNumber} of the manifest is not in ${source}`);
      }
      for (const [, name] of logs) await copyFile(join(source, name), join(dir, name));
      await writeFile(join(dir, manifestName), manifestBytes.subarray(0, manifest.wholeBytes));
      const after = await readFile(join(source, 'CURRENT'), 'utf8');
      if (after !== current) throw movedOn('the manifest changed while copying');
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
