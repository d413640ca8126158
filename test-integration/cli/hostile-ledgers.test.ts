// The CLI against hostile or awkward ledgers, in child processes: replay limits, keyed ledgers, checkpoints, read-only directories.
import { execFileSync, spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLevelLog } from '../../src/log/index.js';
import { forgeCodeActRecording } from '../../test/support/forged-codeact.js';

const root = resolve(fileURLToPath(import.meta.url), '../../..');
const bin = join(root, 'bin', 'context-ledger.js');

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export const cli = (args: readonly string[], env: Record<string, string> = {}): Promise<Run> =>
  new Promise((done, fail) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: root, env: { ...process.env, FORCE_COLOR: '0', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });

const SLOW = 120_000;
let base: string;
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'context-ledger-cli-hostile-'));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

describe('replay of an untrusted ledger', () => {
  it('--timeout stops a re-run that would run for days (exit 2), --max-code-timeout caps the recorded limit (exit 1)', async () => {
    const dir = join(base, 'forged');
    const log = await openLevelLog(dir);
    await forgeCodeActRecording(log, 2_147_483_647);
    await log.close();
    const started = Date.now();
    const stopped = await cli(['replay', 'forged', '--dir', dir, '--mode', 'rerun', '--timeout', '1500', '--max-code-timeout', '600000']);
    expect(stopped.code, stopped.stderr).toBe(2);
    expect(stopped.stderr).toMatch(/did not finish within 1500 ms/);
    expect(Date.now() - started).toBeLessThan(60_000);
    const capped = await cli(['replay', 'forged', '--dir', dir, '--mode', 'rerun', '--max-code-timeout', '300']);
    expect(capped.code, capped.stderr).toBe(1);
    expect(capped.stdout).toMatch(/1 of 2 steps differ|2 of 2 steps differ/);
    expect(capped.stderr).toMatch(/capped at 300 ms/);
    const bad = await cli(['replay', 'forged', '--dir', dir, '--timeout', 'soon']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--timeout must be a positive whole number/);
  }, SLOW);
});

describe('a keyed ledger', () => {
  it('verify reads the chain key from CONTEXT_LEDGER_CHAIN_KEY or --chain-key-file; without it, says the session is keyed and cannot be checked, never broken', async () => {
    const dir = join(base, 'keyed');
    const key = 'a key of thirty-two characters!!';
    const log = await openLevelLog(dir, { chainKey: key });
    await log.append('k', [{ type: 'user.input', items: [{ type: 'message', role: 'user', content: 'hello' }] }]);
    await log.append('k', [{ type: 'user.input', items: [{ type: 'message', role: 'user', content: 'again' }] }]);
    await log.close();
    const keyFile = join(base, 'chain.key');
    await writeFile(keyFile, `${key}\n`);
    const withoutKey = await cli(['verify', 'k', '--dir', dir], { CONTEXT_LEDGER_CHAIN_KEY: '' });
    expect(withoutKey.code, withoutKey.stderr).toBe(2);
    for (const said of [withoutKey.stdout, withoutKey.stderr]) {
      expect(said).toMatch(/the session is keyed/);
      expect(said).toMatch(/cannot be checked without the key \(give the key with CONTEXT_LEDGER_CHAIN_KEY or --chain-key-file\)/);
      expect(said).not.toMatch(/broken|BROKEN/);
    }
    expect(withoutKey.stdout).toMatch(/chain key id [0-9a-f]{16}/);
    expect(withoutKey.stdout + withoutKey.stderr).not.toContain(key);
    const json = await cli(['verify', 'k', '--dir', dir, '--json'], { CONTEXT_LEDGER_CHAIN_KEY: '' });
    expect(JSON.parse(json.stdout)).toMatchObject({ valid: false, keyed: { mismatch: 'keyed-session-no-key', keyId: expect.stringMatching(/^[0-9a-f]{16}$/) } });
    const otherKeyFile = join(base, 'other.key');
    await writeFile(otherKeyFile, 'another key, not the one it was sealed with');
    const otherKey = await cli(['verify', 'k', '--dir', dir, '--chain-key-file', otherKeyFile]);
    expect(otherKey.code).toBe(1);
    expect(otherKey.stderr).toMatch(/hash chain broken at seq 1, or sealed with another key/);
    const fromEnv = await cli(['verify', 'k', '--dir', dir], { CONTEXT_LEDGER_CHAIN_KEY: key });
    expect(fromEnv.code, fromEnv.stdout + fromEnv.stderr).toBe(0);
    const fromFile = await cli(['verify', 'k', '--dir', dir, '--chain-key-file', keyFile]);
    expect(fromFile.code, fromFile.stdout + fromFile.stderr).toBe(0);
    const missing = await cli(['verify', 'k', '--dir', dir, '--chain-key-file', join(base, 'nope')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot read --chain-key-file/);
  }, SLOW);
});

describe('checkpoint', () => {
  it('stores a checkpoint at the head; a read command afterwards writes nothing', async () => {
    const dir = join(base, 'checkpoint');
    const log = await openLevelLog(dir);
    for (let i = 0; i < 5; i++) await log.append('c', [{ type: 'user.input', items: [{ type: 'message', role: 'user', content: `m${i}` }] }]);
    await log.close();
    const first = await cli(['checkpoint', 'c', '--dir', dir, '--json']);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ sessionId: 'c', seq: 6, taken: true, openedFrom: 'full-fold' });
    const second = await cli(['checkpoint', 'c', '--dir', dir]);
    expect(second.stdout).toMatch(/is a checkpoint already/);
    const unknown = await cli(['checkpoint', 'nope', '--dir', dir]);
    expect(unknown.code).toBe(2);
  }, SLOW);
});

describe('copy onto the same ledger', () => {
  it('is refused by real path (trailing slash, ./, a symlink), exit 2, saying it is the same ledger; the ledger is untouched', async () => {
    const dir = join(base, 'same');
    const log = await openLevelLog(dir);
    await log.append('s', [{ type: 'user.input', items: [{ type: 'message', role: 'user', content: 'hello' }] }]);
    await log.close();
    const link = join(base, 'same-link');
    await symlink(dir, link);
    for (const to of [`${dir}/`, `${base}/./same`, `${base}/../${basename(base)}/same`, link]) {
      const run = await cli(['copy', 's', '--dir', dir, '--to', to]);
      expect(run.code, `${to}: ${run.stderr}`).toBe(2);
      expect(run.stderr).toMatch(/is the same ledger as --dir/);
      expect(run.stderr).not.toMatch(/in use by another process/);
    }
    const reopened = await openLevelLog(dir);
    expect(await reopened.head('s')).toBe(1);
    expect(await reopened.verify('s')).toMatchObject({ valid: true });
    await reopened.close();
    // another directory still works
    const other = await cli(['copy', 's', '--dir', dir, '--to', join(base, 'same-copy')]);
    expect(other.code, other.stderr).toBe(0);
  }, SLOW);
});

describe('a ledger directory that cannot be written here', () => {
  /** A ledger with one session in a directory every user can read (and only root can write). */
  const readableLedger = async (name: string): Promise<string> => {
    const parent = await mkdtemp(join(tmpdir(), `context-ledger-ro-${name}-`));
    await chmod(parent, 0o755);
    const dir = join(parent, 'ledger');
    const log = await openLevelLog(dir);
    await log.append('s', [{ type: 'user.input', items: [{ type: 'message', role: 'user', content: 'hello' }] }]);
    await log.append('s', [{ type: 'user.input', items: [{ type: 'message', role: 'user', content: 'again' }] }]);
    await log.close();
    await chmod(dir, 0o755);
    for (const file of await readdir(dir)) await chmod(join(dir, file), 0o644);
    return dir;
  };
  /**
   * Lets another user reach `path` (a clone inside a 0700 `mktemp -d` directory, as CI makes one): search permission on
   * each ancestor that lacks it, for the test's length. Resolves to what gives the modes back.
   */
  const letOthersReach = async (path: string): Promise<() => Promise<void>> => {
    const changed: [string, number][] = [];
    for (let at = path; at !== dirname(at); at = dirname(at)) {
      const mode = (await stat(at)).mode & 0o777;
      if ((mode & 0o001) === 0) {
        await chmod(at, mode | 0o001);
        changed.push([at, mode]);
      }
    }
    return async () => {
      for (const [at, mode] of changed) await chmod(at, mode);
    };
  };
  const expectReadThroughSnapshot = async (run: (args: string[]) => Promise<Run>, dir: string): Promise<void> => {
    const sessions = await run(['sessions', '--dir', dir]);
    expect(sessions.code, sessions.stderr).toBe(0);
    expect(sessions.stdout).toMatch(/^s +2 /m);
    expect(sessions.stderr).toMatch(/cannot be written here \((Permission denied|Read-only file system)\): reading a snapshot taken now/);
    const events = await run(['events', 's', '--dir', dir, '--json']);
    expect(events.code, events.stderr).toBe(0);
    expect((JSON.parse(events.stdout) as { seq: number }[]).map((e) => e.seq)).toEqual([1, 2]);
    const verify = await run(['verify', 's', '--dir', dir]);
    expect(verify.code, verify.stderr).toBe(0);
    expect(verify.stdout).toMatch(/valid \(2 events/);
  };

  it('is read through a snapshot copy: as user nobody on a directory only root may write', async (context) => {
    const probe = await new Promise<string | undefined>((done) => {
      const child = spawn('runuser', ['-u', 'nobody', '--', process.execPath, '-e', '0']);
      child.on('error', (error) => done(`runuser is not available: ${error.message}`));
      child.on('close', (code) => done(code === 0 ? undefined : `runuser -u nobody exited ${code} (needs root and a user nobody)`));
    });
    if (probe !== undefined) {
      console.warn(`skipped: ${probe}`);
      context.skip(probe);
      return;
    }
    const dir = await readableLedger('nobody');
    const restoreModes = await letOthersReach(root);
    const asNobody = (args: string[]): Promise<Run> =>
      new Promise((done, fail) => {
        const child = spawn('runuser', ['-u', 'nobody', '--', process.execPath, bin, ...args], { cwd: root, env: { ...process.env, FORCE_COLOR: '0', TMPDIR: '/tmp' } });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.on('error', fail);
        child.on('close', (code) => done({ code, stdout, stderr }));
      });
    try {
      await expectReadThroughSnapshot(asNobody, dir);
    } finally {
      await restoreModes();
      await rm(dirname(dir), { recursive: true, force: true });
    }
  }, SLOW);

  it('is read through a snapshot copy: on a read-only bind mount', async (context) => {
    const dir = await readableLedger('mount');
    const mounted = join(dirname(dir), 'read-only');
    await mkdir(mounted);
    let skipReason: string | undefined;
    try {
      execFileSync('mount', ['--bind', dir, mounted], { stdio: 'pipe' });
      try {
        execFileSync('mount', ['-o', 'remount,bind,ro', mounted], { stdio: 'pipe' });
      } catch (error) {
        execFileSync('umount', [mounted], { stdio: 'pipe' });
        throw error;
      }
    } catch (error) {
      skipReason = `cannot make a read-only bind mount here (needs root): ${String((error as { stderr?: Buffer }).stderr ?? error).trim()}`;
    }
    if (skipReason !== undefined) {
      await rm(dirname(dir), { recursive: true, force: true });
      console.warn(`skipped: ${skipReason}`);
      context.skip(skipReason);
      return;
    }
    try {
      await expectReadThroughSnapshot((args) => cli(args), mounted);
    } finally {
      execFileSync('umount', [mounted], { stdio: 'pipe' });
      await rm(dirname(dir), { recursive: true, force: true });
    }
  }, SLOW);
});
