// Snapshots of a LevelDB directory that a fast writer holds open (what read commands and `events --follow` take) never
// harm the writer, and each holds a gap-free prefix of its session that verifies.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Level } from 'level';
import { describe, expect, it } from 'vitest';
import { snapshotLevelDir } from '../../src/cli/snapshot.js';
import { createStoreLog, openLevelLog, type StringLevel } from '../../src/log/index.js';

const root = resolve(fileURLToPath(import.meta.url), '../../..');
const writerScript = join(root, 'test', 'support', 'fast-writer.ts');

describe('snapshots of a directory a fast writer holds', () => {
  it('never break the writer (a table it is still writing is never linked), and each is a gap-free prefix that verifies', async () => {
    const base = await mkdtemp(join(tmpdir(), 'context-ledger-snapshot-safety-'));
    const dir = join(base, 'ledger');
    try {
      // Appends at tens of thousands of events a second (memtable flushes and compactions all along) until this test has
      // taken its snapshots and ends the writer's stdin: as many snapshots on a slow machine as on a fast one.
      const writer = spawn(process.execPath, ['--import', 'tsx', writerScript, dir, 'stdin'], { cwd: root });
      let stdout = '';
      let stderr = '';
      writer.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      writer.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<number | null>((done) => writer.on('close', done));
      let running = true;
      void exited.then(() => (running = false));
      let snapshots = 0;
      let largest = 0;
      const heads: number[] = [];
      const deadline = Date.now() + 90_000;
      while (running && heads.length < 6 && Date.now() < deadline) {
        if (!stdout.startsWith('ready')) {
          await new Promise((r) => setTimeout(r, 50));
          continue;
        }
        const snapshot = await snapshotLevelDir(dir);
        try {
          const db = new Level<string, string>(snapshot.dir, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
          await db.open({ createIfMissing: false });
          const log = createStoreLog(db as unknown as StringLevel);
          const head = await log.head('s');
          if (head > 0) {
            expect(await log.verify('s')).toMatchObject({ valid: true, eventCount: head });
            heads.push(head);
          }
          largest = Math.max(largest, head);
          await log.close();
        } finally {
          await snapshot.remove();
        }
        snapshots += 1;
      }
      expect(running, `the writer ended before the snapshots were taken: ${stdout}${stderr}`).toBe(true);
      writer.stdin.end();
      const code = await exited;
      expect(code, `${stdout}${stderr}`).toBe(0);
      const report = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as { head: number; error?: string };
      expect(report.error).toBeUndefined();
      expect(heads.length, `${snapshots} snapshots, heads ${heads.join(', ')}`).toBe(6);
      expect(new Set(heads).size, `heads ${heads.join(', ')}`).toBeGreaterThan(1); // the writer was writing between them
      expect(largest).toBeGreaterThan(0);
      expect(largest).toBeLessThanOrEqual(report.head);
      const log = await openLevelLog(dir);
      expect(await log.verify('s')).toMatchObject({ valid: true, eventCount: report.head });
      await log.close();
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  }, 120_000);
});
