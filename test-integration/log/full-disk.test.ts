// A full disk (a 5 MB tmpfs, as root) never turns a committed append into a rejection, and a rejection says whether it was written.
// Where no tmpfs can be mounted (not root), the test is skipped with the reason.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, rmSync, unlinkSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLevelLog } from '../../src/log/index.js';

const root = resolve(fileURLToPath(import.meta.url), '../../..');
const writer = join(root, 'test', 'support', 'full-disk-writer.ts');

let mountPoint: string | undefined;
let skipReason: string | undefined;

beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'context-ledger-full-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=5m', 'tmpfs', dir], { stdio: 'pipe' });
    mountPoint = dir;
  } catch (error) {
    skipReason = `cannot mount a 5 MB tmpfs here (needs root): ${String((error as { stderr?: Buffer }).stderr ?? error).trim()}`;
    rmSync(dir, { recursive: true, force: true });
  }
});
afterAll(() => {
  if (!mountPoint) return;
  try {
    execFileSync('umount', [mountPoint], { stdio: 'pipe' });
  } finally {
    rmSync(mountPoint, { recursive: true, force: true });
  }
});

interface WriterReport {
  /** The indexes of the inputs whose append resolved. */
  readonly acknowledged: number[];
  readonly rejections: { index: number; name: string; code?: string; written: unknown; message: string }[];
}

const runWriter = (dir: string): Promise<WriterReport> =>
  new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', writer, dir], { cwd: root });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', fail);
    child.on('close', (code) => {
      if (code !== 0) fail(new Error(`writer exited ${code}: ${stderr}`));
      else done(JSON.parse(stdout.trim().split('\n').at(-1)!) as never);
    });
  });

describe('a full disk', () => {
  it('every rejection says whether its input was written (written: true or false), and the stored inputs are exactly the acknowledged ones plus those', async (context) => {
    if (!mountPoint) {
      console.warn(`skipped: ${skipReason}`);
      context.skip(skipReason);
      return;
    }
    const dir = join(mountPoint, 'ledger');
    mkdirSync(dir);
    // Room to reopen afterwards: a filler file removed once the writer is done.
    const filler = join(mountPoint, 'filler');
    execFileSync('dd', ['if=/dev/zero', `of=${filler}`, 'bs=1024', 'count=1024'], { stdio: 'pipe' });
    const report = await runWriter(dir);
    unlinkSync(filler);
    expect(report.rejections.length, JSON.stringify(report)).toBeGreaterThan(0);
    for (const rejection of report.rejections) {
      // A named error that says whether the events were written: never a raw store error (it has a `code` too, but
      // no `written`), never "unknown" on a disk that can still be read.
      expect(rejection, JSON.stringify(rejection)).toMatchObject({ name: 'LogWriteError', code: 'LOG_WRITE_FAILED' });
      expect(typeof rejection.written, JSON.stringify(rejection)).toBe('boolean');
    }
    const log = await openLevelLog(dir);
    const stored: number[] = [];
    for await (const event of log.read('full')) {
      if (event.type !== 'user.input') continue;
      const content = (event.items[0] as { content?: unknown }).content;
      stored.push(Number(String(content).split(' ')[0]));
    }
    expect(await log.verify('full')).toMatchObject({ valid: true });
    await log.close();
    // Exactly what was acknowledged, plus what was rejected as written: nothing acknowledged is missing, nothing
    // rejected as not written is there (so a retry of those records the input once).
    const writtenAnyway = report.rejections.filter((r) => r.written === true).map((r) => r.index);
    expect(stored, JSON.stringify(report)).toEqual([...report.acknowledged, ...writtenAnyway].sort((a, b) => a - b));
  }, 180_000);
});
