// The CLI and the report agree on every figure; placeholders show as placeholders; "look further" points at a step
// with drops; sessions are named by a unique prefix or --last. Child processes against a real LevelDB ledger.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDemoSession } from '../../src/cli/demo/coding-session.js';
import { openLevelLog } from '../../src/log/index.js';
import { reportData } from '../../src/replay/index.js';

const root = resolve(fileURLToPath(import.meta.url), '../../..');
const bin = join(root, 'bin', 'context-ledger.js');

const cli = (args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> =>
  new Promise((done, fail) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: root, env: { ...process.env, FORCE_COLOR: '0' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });

let base: string;
let dir: string;
const SLOW = 240_000;
const SESSION = '3f2a9c1e-5b7d-4e21-9a0c-1d2e3f4a5b6c';

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'context-ledger-agree-'));
  dir = join(base, 'ledger');
  const log = await openLevelLog(dir);
  await runDemoSession(log, { sessionId: SESSION, policy: 'structured' }); // the structured policy writes Tier-1 placeholders into memory
  await log.append('3f2b-other', [{ type: 'user.input', items: [{ type: 'message', role: 'user', content: 'hello' }] }]);
  await log.close();
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

describe('CLI and report', () => {
  it(
    'context --step prints the same figures the report embeds, at every step that has them',
    async () => {
      const log = await openLevelLog(dir);
      const data = await reportData(log, SESSION);
      await log.close();
      const withTokens = data.steps.filter((s) => s.sentTokens !== null && s.memoryTokens !== null);
      expect(withTokens.length).toBeGreaterThan(0);
      for (const step of [withTokens[0]!, withTokens[Math.floor(withTokens.length / 2)]!, withTokens.at(-1)!]) {
        const run = await cli(['context', SESSION, '--step', String(step.step), '--dir', dir, '--json']);
        expect(run.code, run.stderr).toBe(0);
        const json = JSON.parse(run.stdout) as { figures: { memory: { items: number; tokens?: number }; sent: { items: number; tokens?: number } } };
        expect(json.figures).toEqual({ memory: { items: step.memoryItems, tokens: step.memoryTokens }, sent: { items: step.sentItems, tokens: step.sentTokens } });
        const text = await cli(['context', SESSION, '--step', String(step.step), '--dir', dir]);
        expect(text.stdout.split('\n')[0]).toContain(`sent ${step.sentItems.toLocaleString('en-US')} of ${step.memoryItems.toLocaleString('en-US')} items, ${step.sentTokens!.toLocaleString('en-US')} of ${step.memoryTokens!.toLocaleString('en-US')} tokens`);
        expect(text.stdout).not.toMatch(/of - tokens/);
      }
    },
    SLOW,
  );

  it(
    'a placeholder a compaction wrote into memory shows as a placeholder of the item it replaces',
    async () => {
      const run = await cli(['context', SESSION.slice(0, 6), '--step', '282', '--dir', dir, '--json']);
      expect(run.code, run.stderr).toBe(0);
      const json = JSON.parse(run.stdout) as { sent: { id: string; fate: string; placeholderFor?: string; item: { output?: string } }[] };
      const placeholders = json.sent.filter((e) => e.placeholderFor !== undefined);
      expect(placeholders.length).toBeGreaterThan(0);
      for (const p of placeholders) expect(p.placeholderFor).toMatch(/^\d+:\d+$/);
      const text = await cli(['context', SESSION.slice(0, 6), '--step', '282', '--dir', dir]);
      const rows = text.stdout.split('\n').filter((l) => l.includes('placeholder of '));
      expect(rows.length).toBe(placeholders.length);
    },
    SLOW,
  );

  it(
    'the first "look further" step of audit has drops',
    async () => {
      const audit = await cli(['audit', SESSION, '--dir', dir]);
      expect(audit.code, audit.stderr).toBe(0);
      const step = /look further: context-ledger context \S+ --step (\d+)/.exec(audit.stdout)?.[1];
      expect(step).toBeDefined();
      const context = await cli(['context', SESSION, '--step', step!, '--dir', dir, '--json']);
      expect((JSON.parse(context.stdout) as { dropped: unknown[] }).dropped.length).toBeGreaterThan(0);
    },
    SLOW,
  );

  it(
    'a unique prefix and --last name a session; an ambiguous prefix is exit 2 naming the matches',
    async () => {
      const byPrefix = await cli(['verify', '3f2a', '--dir', dir]);
      expect(byPrefix, byPrefix.stderr).toMatchObject({ code: 0 });
      expect(byPrefix.stdout).toMatch(new RegExp(`^${SESSION}: valid`));
      const last = await cli(['events', '--last', '--dir', dir, '--json']);
      expect(last.code, last.stderr).toBe(0);
      expect(last.stdout).toContain('"sessionId":"3f2b-other"');
      const ambiguous = await cli(['audit', '3f2', '--dir', dir]);
      expect(ambiguous.code).toBe(2);
      expect(ambiguous.stderr).toMatch(/ambiguous: 2 sessions start with it \(3f2a9c1e-5b7d-4e21-9a0c-1d2e3f4a5b6c, 3f2b-other\)/);
      const both = await cli(['audit', '3f2a', '--last', '--dir', dir]);
      expect(both.code).toBe(2);
      const neither = await cli(['audit', '--dir', dir]);
      expect(neither.code).toBe(2);
      expect(neither.stderr).toMatch(/missing the session/);
    },
    SLOW,
  );
});
