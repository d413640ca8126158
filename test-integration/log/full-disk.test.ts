// A full disk (a 5 MB tmpfs, as root) never turns a committed append into a rejection, and a rejection says whether it was written.
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

const runWriter = (dir: string): Promise<{ acknowledged: number; rejections: { name: string; code?: string; written: unknown; message: string }[] }> =>
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
  it('acknowledged inputs are exactly the stored ones, apart from rejections that say they may be written', async (context) => {
    if (!mountPoint) {
      console.warn(`skipped: ${skipReason}`);
      context.skip();
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
      // A named error that says whether the events were written, never a raw store error.
      expect(rejection.code, JSON.stringify(rejection)).toBeDefined();
      if (rejection.code === 'LOG_WRITE_FAILED') expect([false, null]).toContain(rejection.written);
    }
    const log = await openLevelLog(dir);
    let inputs = 0;
    for await (const event of log.read('full')) if (event.type === 'user.input') inputs += 1;
    await log.close();
    const unknown = report.rejections.filter((r) => r.written === null).length;
    expect(inputs).toBeGreaterThanOrEqual(report.acknowledged);
    expect(inputs - report.acknowledged, JSON.stringify(report)).toBeLessThanOrEqual(unknown);
  }, 180_000);
});
