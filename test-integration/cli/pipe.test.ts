// Every CLI command in a pipe whose reader has gone (`… | head -1`): it ends quietly with exit 0, as git does. Each command
// runs for real (export against a loopback OTLP/HTTP receiver); `migrate` needs PostgreSQL, so test-pg/cli-pipe.test.ts
// runs it, and a check here makes sure no command of `--help` is left out.
import { execFileSync, spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDemoSession } from '../../src/cli/demo/coding-session.js';
import { openLevelLog } from '../../src/log/index.js';

const root = resolve(fileURLToPath(import.meta.url), '../../..');
const bin = join(root, 'bin', 'context-ledger.js');

interface Run {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderr: string;
}

/** Runs the CLI with a stdout whose reading end is closed before the command writes anything. */
const cliIntoClosedPipe = (args: readonly string[]): Promise<Run> =>
  new Promise((done, fail) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: root, env: { ...process.env, FORCE_COLOR: '0' } });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', fail);
    child.on('close', (code, signal) => done({ code, signal, stderr }));
  });

/** Runs a shell pipeline with pipefail, so the CLI's own exit code is the pipeline's. */
const shell = (command: string): Promise<Run & { stdout: string }> =>
  new Promise((done, fail) => {
    const child = spawn('bash', ['-o', 'pipefail', '-c', command], { cwd: root, env: { ...process.env, FORCE_COLOR: '0' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', fail);
    child.on('close', (code, signal) => done({ code, signal, stdout, stderr }));
  });

let base: string;
let dir: string;
const SLOW = 240_000;

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'context-ledger-pipe-'));
  dir = join(base, 'ledger');
  const log = await openLevelLog(dir);
  await runDemoSession(log, { tasks: 1 });
  await log.close();
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

/** A loopback OTLP/HTTP receiver that accepts every request and counts them. */
const otlpReceiver = async () => {
  let requests = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      requests += 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
};

/** The commands `context-ledger --help` lists. */
const listedCommands = (): string[] => {
  const help = execFileSync(process.execPath, [bin, '--help'], { cwd: root, encoding: 'utf8' });
  const commands = help.slice(help.indexOf('Commands:'));
  return [...commands.matchAll(/^ {2}([a-z][\w-]*)/gm)].map((m) => m[1]!);
};

/** Commands whose closed-pipe run needs a service this suite does not start, and the suite that runs them. */
const COVERED_ELSEWHERE: Readonly<Record<string, string>> = { migrate: 'test-pg/cli-pipe.test.ts (needs PostgreSQL)' };

describe('a closed stdout', () => {
  it(
    'ends every command quietly with exit 0, each run for real',
    async () => {
      const otlp = await otlpReceiver();
      const commands: readonly (readonly string[])[] = [
        ['sessions', '--dir', dir],
        ['sessions', '--dir', dir, '--json'],
        ['events', 'demo', '--dir', dir],
        ['events', 'demo', '--dir', dir, '--follow'],
        ['memory', 'demo', '--dir', dir],
        ['context', 'demo', '--step', '20', '--dir', dir],
        ['audit', 'demo', '--dir', dir],
        ['audit', 'demo', '--item', '3:0', '--dir', dir],
        ['verify', 'demo', '--dir', dir],
        ['replay', 'demo', '--dir', dir],
        ['report', 'demo', '--out', join(base, 'report.html'), '--dir', dir],
        ['fork', 'demo', '--after-step', '3', '--as', 'forked', '--dir', dir],
        ['copy', 'demo', '--to', join(base, 'copied'), '--dir', dir],
        ['demo', '--dir', join(base, 'demo')],
        ['export', 'demo', '--otlp', otlp.url, '--dir', dir],
        ['export', 'demo', '--otlp', otlp.url, '--dir', dir, '--json'],
        ['checkpoint', 'demo', '--dir', dir],
        ['checkpoint', 'demo', '--dir', dir, '--json'],
        ['erase', 'forked', '--seq', '2', '--reason', 'pipe test', '--yes', '--dir', dir],
        ['erase', 'forked', '--seq', '3', '--reason', 'pipe test', '--yes', '--dir', dir, '--json'],
        ['help', 'audit'],
        ['--help'],
        ['--version'],
      ];
      try {
        for (const args of commands) {
          const run = await cliIntoClosedPipe(args);
          // --follow says on stderr how it follows; nothing else may be printed there.
          const stderr = args.includes('--follow') ? run.stderr.replace(/^following demo in .*\n/, '') : run.stderr;
          expect({ args, ...run, stderr }).toEqual({ args, code: 0, signal: null, stderr: '' });
        }
        // The export really sent the spans (its output went nowhere, its work did not).
        expect(otlp.requests()).toBeGreaterThanOrEqual(2);
      } finally {
        await otlp.close();
      }
      // The erasures and the checkpoint were done, though nobody read what the commands printed.
      const verify = await shell(`node ${JSON.stringify(bin)} verify forked --dir ${JSON.stringify(dir)} --json`);
      expect(verify.code).toBe(0);
      expect((JSON.parse(verify.stdout) as { valid: boolean; erased?: number[] })).toMatchObject({ valid: true, erased: [2, 3] });
      const checkpoint = await shell(`node ${JSON.stringify(bin)} checkpoint demo --dir ${JSON.stringify(dir)} --json`);
      expect((JSON.parse(checkpoint.stdout) as { taken: boolean; eventsFolded: number })).toMatchObject({ taken: false, eventsFolded: 0 });

      // No command of the CLI is left out: each one --help lists ran above, or runs in the suite named for it.
      const ran = new Set(commands.map((args) => args[0]!).filter((name) => !name.startsWith('-')));
      const listed = listedCommands();
      expect(listed).toEqual(expect.arrayContaining(['sessions', 'migrate', 'checkpoint', 'erase', 'export', 'help']));
      expect(listed.filter((name) => !ran.has(name) && !(name in COVERED_ELSEWHERE))).toEqual([]);
    },
    SLOW,
  );

  it(
    '`events | head -1` prints the first line and the pipeline succeeds',
    async () => {
      const run = await shell(`node ${JSON.stringify(bin)} events demo --dir ${JSON.stringify(dir)} | head -1`);
      expect(run).toMatchObject({ code: 0, stderr: '' });
      expect(run.stdout.trimEnd().split('\n')).toHaveLength(1);
      expect(run.stdout).toMatch(/^\s*SEQ\s+AT\s+TYPE/);
    },
    SLOW,
  );

  it(
    'a failing command still fails when stdout is closed: the error reaches stderr with its exit code',
    async () => {
      const run = await cliIntoClosedPipe(['events', 'no-such-session', '--dir', dir]);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/^context-ledger: no session "no-such-session"/);
    },
    SLOW,
  );
});
