// The CLI in child processes against real LevelDB directories: every command's output, --json shape and exit
// code; read commands never create or change a ledger; a ledger held by a running agent is read from a snapshot.
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ClassicLevel } from 'classic-level';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contextAtStep } from '../../src/cli/context-at.js';
import { runDemoSession } from '../../src/cli/demo/coding-session.js';
import { Agents, ScriptedModelClient, assistantMessage, functionCall } from '../../src/index.js';
import { openLevelLog } from '../../src/log/index.js';
import { eventKey } from '../../src/log/keys.js';

const root = resolve(fileURLToPath(import.meta.url), '../../..');
const bin = join(root, 'bin', 'context-ledger.js');

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

const cli = (args: readonly string[], cwd = root): Promise<Run> =>
  new Promise((done, fail) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd, env: { ...process.env, FORCE_COLOR: '0' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });

/** Every key and value in a LevelDB directory (opened directly, after the CLI closed it). */
const contents = async (dir: string): Promise<[string, string][]> => {
  const db = new ClassicLevel<string, string>(dir, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
  await db.open({ createIfMissing: false });
  const all = (await db.iterator().all()) as [string, string][];
  await db.close();
  return all;
};

let base: string;
let dir: string;
let steps: number;
let copies = 0;

/** A copy of the ledger, so commands can run side by side (LevelDB admits one process per directory). */
const copyOf = (source: string): string => {
  const target = join(base, `copy-${++copies}`);
  cpSync(source, target, { recursive: true });
  return target;
};
const SLOW = 180_000; // child processes on a busy machine

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'context-ledger-cli-'));
  dir = join(base, 'ledger');
  const log = await openLevelLog(dir);
  ({ steps } = await runDemoSession(log, { tasks: 1 }));
  await log.append('tiny', [{ type: 'user.input', items: [{ type: 'message', role: 'user', content: 'hello' }] }]);
  await log.close();
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

describe('read commands', () => {
  it('never create or change a ledger', async () => {
    const before = await contents(dir);
    const sessions = await cli(['sessions', '--dir', dir, '--json']);
    const events = await cli(['events', 'demo', '--dir', dir, '--from', '3', '--to', '8']);
    expect(sessions, sessions.stderr).toMatchObject({ code: 0, stderr: '' });
    expect(events, events.stderr).toMatchObject({ code: 0, stderr: '' });
    const list = JSON.parse(sessions.stdout) as { sessionId: string; events: number }[];
    expect(list.map((s) => s.sessionId)).toEqual(['demo', 'tiny']);
    expect(list[1]).toMatchObject({ sessionId: 'tiny', events: 1 });
    // Aligned: every row of the events table starts its TYPE column where the header does.
    const lines = events.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(7);
    expect(lines[0]).toMatch(/^SEQ\s+AT\s+TYPE\s+STEP\s+WHAT$/);
    const typeAt = lines[0]!.indexOf('TYPE');
    expect(lines.slice(1).every((l) => /^[a-z]/.test(l.slice(typeAt)))).toBe(true);
    expect(lines[1]).toMatch(/^\s*3\s/);
    expect(await contents(dir)).toEqual(before);
  }, SLOW);

  it('every read command: tables and summaries for people, JSON for scripts', async () => {
    const out = join(base, 'report.html');
    const [sessions, eventsJson, memory, memoryJson, context, contextJson, audit, auditJson, verify, replay, whatIf, report, rerun] = await Promise.all([
      cli(['sessions', '--dir', copyOf(dir)]),
      cli(['events', 'demo', '--dir', copyOf(dir), '--type', 'memory.compacted', 'test.result', '--json']),
      cli(['memory', 'demo', '--dir', copyOf(dir), '--step', '3']),
      cli(['memory', 'demo', '--dir', copyOf(dir), '--at', '16', '--json']),
      cli(['context', 'demo', '--step', '40', '--dir', copyOf(dir)]),
      cli(['context', 'demo', '--step', '40', '--dir', copyOf(dir), '--json']),
      cli(['audit', 'demo', '--dir', copyOf(dir)]),
      cli(['audit', 'demo', '--dir', copyOf(dir), '--json']),
      cli(['verify', 'demo', '--dir', copyOf(dir)]),
      cli(['replay', 'demo', '--dir', copyOf(dir)]),
      cli(['replay', 'demo', '--dir', copyOf(dir), '--budget', '{"maxTokens":500}', '--json']),
      cli(['report', 'demo', '--dir', copyOf(dir), '--out', out]),
      cli(['replay', 'demo', '--dir', copyOf(dir), '--mode', 'rerun', '--json']),
    ]);
    for (const run of [sessions, eventsJson, memory, memoryJson, context, contextJson, audit, auditJson, verify, replay, whatIf, report, rerun]) {
      expect(run, run.stderr).toMatchObject({ code: 0, stderr: '' });
    }

    expect(sessions.stdout.split('\n')[0]).toMatch(/^SESSION\s+EVENTS\s+FIRST EVENT\s+LAST EVENT$/);
    expect(sessions.stdout).toMatch(/^demo\s+[\d,]+\s+\d{4}-/m);

    const typed = JSON.parse(eventsJson.stdout) as { type: string; seq: number }[];
    expect(new Set(typed.map((e) => e.type))).toEqual(new Set(['memory.compacted', 'test.result']));

    expect(memory.stdout).toMatch(/^session demo after seq \d+: \d+ items/);
    expect(memory.stdout).toMatch(/^ID\s+KIND\s+TOKENS\s+TEXT$/m);
    const mem = JSON.parse(memoryJson.stdout) as { seq: number; items: { id: string }[] };
    expect(mem.seq).toBe(16);
    expect(mem.items.map((i) => i.id)).toContain('3:0');

    expect(context.stdout).toMatch(/^step 40 of demo \(seq \d+\): sent \d+ of \d+ items/);
    expect(context.stdout).toContain('identical to the recorded digest');
    expect(context.stdout).toMatch(/^usage: counted [\d,]+ tokens sent \([\d,]+ items \+ [\d,]+ overhead\)/m);
    expect(context.stdout).toMatch(/^ {2}ID\s+FATE\s+RULE\s+KIND\s+AS SENT$/m);
    const data = JSON.parse(contextJson.stdout) as { identical: boolean; sent: { id: string; fate: string; item: unknown }[]; dropped: unknown[]; report: { projectedItemCount: number } };
    expect(data.identical).toBe(true);
    expect(data.sent).toHaveLength(data.report.projectedItemCount);
    expect(data.sent.some((s) => s.fate === 'cleared')).toBe(true);
    const log = await openLevelLog(copyOf(dir));
    try {
      const expected = await contextAtStep(log, 'demo', 40);
      expect(data.sent.map((s) => s.item)).toEqual(expected.sent);
    } finally {
      await log.close();
    }

    expect(audit.stdout).toMatch(new RegExp(`^session demo: ${steps} steps`));
    expect(audit.stdout).toContain('compactions:');
    expect(audit.stdout).toMatch(/^look further: context-ledger context demo --step/m);
    const audited = JSON.parse(auditJson.stdout) as { totals: { steps: number }; steps: unknown[]; items: { id: string; left?: { eventType: string } }[]; compactions: unknown[] };
    expect(audited.totals.steps).toBe(steps);
    expect(audited.steps).toHaveLength(steps);
    expect(audited.compactions.length).toBeGreaterThan(0);

    expect(verify.stdout).toMatch(/^demo: valid \([\d,]+ events, hash chain intact/);
    expect(replay.stdout).toBe(`replay: identical (${steps} steps re-projected)\n`);
    const changed = JSON.parse(whatIf.stdout) as { mode: string; identical: boolean; whatIf: boolean; divergentSteps: number };
    expect(changed).toMatchObject({ mode: 'project', identical: false, whatIf: true });
    expect(changed.divergentSteps).toBeGreaterThan(0);
    expect(JSON.parse(rerun.stdout)).toMatchObject({ mode: 'rerun', identical: true, steps });

    expect(report.stdout).toMatch(new RegExp(`^wrote .*report\\.html \\(\\d+ KB\\): ${steps} steps`));
    const html = readFileSync(out, 'utf8');
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).not.toMatch(/<(script|link|img|iframe)[^>]+(src|href)=/i);
    expect(html).not.toMatch(/https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
    expect(html).not.toMatch(/\bfetch\(|XMLHttpRequest|import\(/);

    // One item's life, as the audit gave it.
    const gone = audited.items.find((i) => i.left?.eventType === 'memory.compacted')!;
    const [item, unknown] = await Promise.all([
      cli(['audit', 'demo', '--item', gone.id, '--dir', copyOf(dir), '--json']),
      cli(['audit', 'demo', '--item', '99999:0', '--dir', copyOf(dir)]),
    ]);
    expect(JSON.parse(item.stdout)).toEqual(audited.items.find((i) => i.id === gone.id));
    expect(unknown).toMatchObject({ code: 2, stdout: '', stderr: 'context-ledger: session "demo": no item "99999:0" ever entered memory\n' });
  }, SLOW);
});

describe('exit codes and errors', () => {
  it('2 with one line on stderr when the command cannot run; a mistyped --dir is not created', async () => {
    const missing = join(base, 'no-such-dir');
    const empty = join(base, 'empty');
    mkdirSync(empty);
    const runs = await Promise.all([
      cli(['sessions', '--dir', missing]),
      cli(['verify', 'nope', '--dir', copyOf(dir)]),
      cli(['events', 'demo', '--dir', empty]),
      cli(['context', 'demo', '--dir', copyOf(dir), '--step', '9999']),
      cli(['replay', 'demo', '--dir', dir, '--budget', '{nope']),
      cli(['frobnicate']),
      cli(['sessions', '--dir', dir, '--frob']),
      cli(['migrate', '--pg', 'postgres://user:secret@127.0.0.1:1/none']),
    ]);
    for (const run of runs) {
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr.trimEnd().split('\n'), run.stderr).toHaveLength(1);
      expect(run.stderr).toMatch(/^context-ledger: /);
    }
    expect(runs[0]!.stderr).toBe(`context-ledger: no ledger at ${missing}: no such directory\n`);
    expect(runs[1]!.stderr).toMatch(/^context-ledger: no session "nope" in .*copy-\d+\n$/);
    expect(runs[2]!.stderr).toContain('holds no LevelDB database');
    expect(existsSync(missing)).toBe(false);
    expect(readdirSync(empty)).toEqual([]);
    expect(runs[7]!.stderr).toMatch(/^context-ledger: migrate postgres:\/\/user:\*\*\*@127\.0\.0\.1:1\/none: /);
    expect(runs[3]!.stderr).toBe('context-ledger: session "demo": step 9999 has no recorded context.projected\n');
  }, SLOW);

  it('1 when the ledger fails a check: a changed event breaks verify', async () => {
    const broken = join(base, 'broken');
    const log = await openLevelLog(broken);
    await log.append('s', [{ type: 'user.input', items: [{ type: 'message', role: 'user', content: 'one' }] }]);
    await log.append('s', [{ type: 'user.input', items: [{ type: 'message', role: 'user', content: 'two' }] }]);
    await log.close();
    const db = new ClassicLevel<string, string>(broken, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
    await db.open();
    const value = await db.get(eventKey('s', 1));
    await db.put(eventKey('s', 1), value!.replace('"one"', '"ONE"'));
    await db.close();
    const [text, json] = await Promise.all([cli(['verify', 's', '--dir', broken]), cli(['verify', 's', '--dir', copyOf(broken), '--json'])]);
    expect(text.code).toBe(1);
    expect(text.stdout).toBe('s: BROKEN at seq 1: content does not match its hash (1 events read)\n');
    expect(text.stderr).toBe('context-ledger: s: hash chain broken at seq 1\n');
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ valid: false, firstBrokenSeq: 1 });
  }, SLOW);

  it('--version, --help for the program and for each command', async () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
    const [version, help, ...perCommand] = await Promise.all([cli(['--version']), cli(['--help']), cli(['context', '--help']), cli(['report', '--help'])]);
    expect(version).toMatchObject({ code: 0, stdout: `${pkg.version}\n` });
    expect(help.code).toBe(0);
    for (const c of ['sessions', 'events', 'memory', 'context', 'audit', 'verify', 'replay', 'fork', 'report', 'demo']) expect(help.stdout).toContain(`  ${c}`);
    for (const run of perCommand) {
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^Usage: context-ledger \w+/);
      expect(run.stdout).toContain('--dir <path>');
      expect(run.stdout).toContain('--json');
    }
  }, SLOW);
});

describe('write commands', () => {
  it('fork copies a prefix into a new session and refuses an existing one', async () => {
    const forkDir = join(base, 'fork');
    const log = await openLevelLog(forkDir);
    await runDemoSession(log, { tasks: 1 });
    await log.close();
    const first = await cli(['fork', 'demo', '--after-step', '5', '--as', 'demo-b', '--dir', forkDir, '--json']);
    expect(first.code, first.stderr).toBe(0);
    const result = JSON.parse(first.stdout) as { sessionId: string; forkedFrom: { sessionId: string; seq: number }; copied: number; headSeq: number };
    expect(result).toMatchObject({ sessionId: 'demo-b', forkedFrom: { sessionId: 'demo' } });
    const again = await cli(['fork', 'demo', '--at-seq', '3', '--as', 'demo-b', '--dir', forkDir]);
    expect(again).toMatchObject({ code: 2, stderr: `context-ledger: session "demo-b" already exists in ${forkDir}\n` });
    const forked = await openLevelLog(forkDir);
    try {
      const copied: { type: string; step?: number; metadata?: unknown }[] = [];
      for await (const e of forked.read('demo-b')) copied.push(e as never);
      expect(copied).toHaveLength(result.headSeq);
      expect(result.copied).toBe(result.forkedFrom.seq);
      expect(copied[0]).toMatchObject({ type: 'session.started', forkedFrom: { sessionId: 'demo', seq: result.forkedFrom.seq } });
      expect(Math.max(...copied.filter((e) => e.type === 'step.started').map((e) => e.step!))).toBe(5);
      expect((await forked.verify('demo-b')).valid).toBe(true);
    } finally {
      await forked.close();
    }
  }, SLOW);

  it('copy copies a session to another ledger with its hashes, and resumes an interrupted copy', async () => {
    const target = join(base, 'copy-target');
    const [first] = await Promise.all([cli(['copy', 'demo', '--dir', copyOf(dir), '--to', target, '--json'])]);
    expect(first.code, first.stderr).toBe(0);
    const result = JSON.parse(first.stdout) as { copied: number; head: number; valid: boolean };
    expect(result.valid).toBe(true);
    expect(result.copied).toBe(result.head);
    const again = await cli(['copy', 'demo', '--dir', copyOf(dir), '--to', target]);
    expect(again.stdout).toBe(`copied 0 event(s) of demo to ${target}; the copy has ${result.head} events and verifies\n`);
    const [source, copied] = [await contents(dir), await contents(target)];
    const events = (all: [string, string][]) => all.filter(([, v]) => v.includes('"sessionId":"demo"'));
    expect(events(copied)).toEqual(events(source));
  }, SLOW);

  it('erase, then audit --item says when, by whom and why the item was erased, as context --step does', async () => {
    const eraseDir = copyOf(dir);
    const reader = await openLevelLog(eraseDir);
    let seq = 0;
    for await (const event of reader.read('demo')) if (seq === 0 && event.type === 'tool.result') seq = event.seq;
    await reader.close();
    expect(seq).toBeGreaterThan(0);
    const erased = await cli(['erase', 'demo', '--dir', eraseDir, '--item', `${seq}:0`, '--reason', 'token in the output', '--by', 'security', '--yes']);
    expect(erased.code, erased.stderr).toBe(0);
    const audit = await cli(['audit', 'demo', '--dir', eraseDir, '--item', `${seq}:0`]);
    expect(audit.code, audit.stderr).toBe(0);
    const at = /\[erased at (\S+) by security: token in the output\]/.exec(audit.stdout)?.[1];
    expect(at, audit.stdout).toBeDefined();
    expect(audit.stdout).toMatch(new RegExp(`^item ${seq}:0 \\([^)]+\\): \\[erased at ${at} by security: token in the output\\]$`, 'm'));
    expect(audit.stdout).toMatch(new RegExp(`^erased: at ${at} by security, recorded by event.erased at seq \\d+; reason: token in the output$`, 'm'));
    const json = await cli(['audit', 'demo', '--dir', eraseDir, '--item', `${seq}:0`, '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ id: `${seq}:0`, erased: { at, by: 'security', reason: 'token in the output' } });
  }, SLOW);

  it('context --step shows the working-memory blocks the prompt carried, with their text; --json gives them too', async () => {
    const wmDir = join(base, 'working-memory');
    const log = await openLevelLog(wmDir);
    const model = new ScriptedModelClient([
      { items: [functionCall('w1', 'working_memory', { operation: 'set', block: 'plan', text: '1. read the parser\n2. fix the bug' })] },
      { outputText: 'done', items: [assistantMessage('done')] },
    ]);
    const agent = Agents.react({ modelClient: model, model: 'm', log, workingMemory: { blocks: [{ name: 'plan', maxChars: 200, description: 'the steps left' }, { name: 'facts', maxChars: 100, initial: 'repo: acme/api' }] } });
    const session = await agent.newSession({ id: 'wm' });
    await session.run('plan it');
    await log.close();
    const context = await cli(['context', 'wm', '--dir', wmDir, '--step', '2']);
    expect(context.code, context.stderr).toBe(0);
    expect(context.stdout).toMatch(/^working memory \(\d+:memory, 2 block\(s\)\):\n  plan \(33 of 200 characters\): the steps left\n    1\. read the parser\n    2\. fix the bug\n  facts \(14 of 100 characters\)\n    repo: acme\/api$/m);
    const first = await cli(['context', 'wm', '--dir', wmDir, '--step', '1']);
    expect(first.stdout).toMatch(/^  plan \(0 of 200 characters\): the steps left\n    \(empty\)$/m);
    const json = JSON.parse((await cli(['context', 'wm', '--dir', wmDir, '--step', '2', '--json'])).stdout) as { workingMemory: { blocks: { name: string; text: string }[] } };
    expect(json.workingMemory.blocks.map((b) => [b.name, b.text])).toEqual([['plan', '1. read the parser\n2. fix the bug'], ['facts', 'repo: acme/api']]);
  }, SLOW);

  it('demo records the scripted session, prints the audit, replay: identical and where to look', async () => {
    const cwd = join(base, 'demo-cwd');
    mkdirSync(cwd);
    const run = await cli(['demo'], cwd);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^recorded a scripted coding-agent session: \d+ steps as "demo" in \.\/\.ledger/);
    expect(run.stdout).toContain('compactions:');
    expect(run.stdout).toMatch(/^replay: identical/m);
    expect(run.stdout).toContain('context-ledger context demo --step');
    expect(run.stdout).toContain('context-ledger report demo --out report.html');
    expect(existsSync(join(cwd, '.ledger', 'CURRENT'))).toBe(true);
  }, SLOW);
});

describe('a ledger held by a running agent', () => {
  it('is read from a snapshot that verifies and holds a gap-free prefix', async () => {
    const liveDir = join(base, 'live');
    const snapshotsBefore = new Set(readdirSync(tmpdir()).filter((n) => n.startsWith('context-ledger-snapshot-')));
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'test/support/append-loop.ts'), liveDir], { cwd: root });
    try {
      const ready = await new Promise<number>((done, fail) => {
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /ready (\d+)/.exec(out);
          if (m) done(Number(m[1]));
        });
        child.on('exit', (code) => fail(new Error(`the appender exited with ${code}`)));
      });
      expect(ready).toBeGreaterThan(0);
      for (let round = 0; round < 2; round++) {
        const [verify, events] = await Promise.all([cli(['verify', 'live', '--dir', liveDir, '--json']), cli(['events', 'live', '--dir', liveDir, '--json'])]);
        expect(verify.code, verify.stderr).toBe(0);
        expect(verify.stderr).toBe(`${liveDir} is in use by another process: reading a snapshot taken now\n`);
        const checked = JSON.parse(verify.stdout) as { valid: boolean; eventCount: number };
        expect(checked.valid).toBe(true);
        expect(checked.eventCount).toBeGreaterThanOrEqual(ready);
        const seqs = (JSON.parse(events.stdout) as { seq: number }[]).map((e) => e.seq);
        expect(seqs.length).toBeGreaterThanOrEqual(ready);
        expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
      }
      expect(child.exitCode).toBeNull(); // still appending: the lock was held throughout
    } finally {
      child.kill('SIGKILL');
    }
    // Every snapshot these commands took was removed after.
    expect(readdirSync(tmpdir()).filter((n) => n.startsWith('context-ledger-snapshot-') && !snapshotsBefore.has(n))).toEqual([]);
  }, SLOW);
});

describe('events --follow', () => {
  it('prints every event of a running writer once, in order, without taking its lock, and stops on Ctrl-C', async () => {
    const liveDir = join(base, 'follow-live');
    const writer = spawn(process.execPath, ['--import', 'tsx', join(root, 'test/support/append-loop.ts'), liveDir], { cwd: root });
    const ready = await new Promise<number>((done, fail) => {
      let out = '';
      writer.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /ready (\d+)/.exec(out);
        if (m) done(Number(m[1]));
      });
      writer.on('exit', (code) => fail(new Error(`the appender exited with ${code}`)));
    });
    const follower = spawn(process.execPath, [bin, 'events', 'live', '--dir', liveDir, '--follow', '--json'], { cwd: root, env: { ...process.env, FORCE_COLOR: '0' } });
    let stdout = '';
    let stderr = '';
    follower.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    follower.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const seqs = (): number[] =>
      stdout
        .split('\n')
        .filter((l) => l.trim().length > 0)
        .map((l) => (JSON.parse(l) as { seq: number; sessionId: string }).seq);
    const waitFor = async (cond: () => boolean, what: string): Promise<void> => {
      for (let i = 0; i < 300 && !cond(); i++) await new Promise((r) => setTimeout(r, 100));
      if (!cond()) throw new Error(`timed out waiting for ${what}; stderr: ${stderr}`);
    };
    try {
      await waitFor(() => seqs().length >= ready, 'the catch-up');
      const caughtUp = seqs().length;
      // The writer keeps its lock and keeps appending while we follow; live events arrive after the catch-up.
      await waitFor(() => seqs().length > caughtUp + 20, 'live events');
      expect(writer.exitCode).toBeNull();
    } finally {
      writer.kill('SIGKILL');
      await new Promise((r) => writer.once('close', r));
    }
    const log = await openLevelLog(liveDir);
    const head = await log.head('live');
    await log.close();
    await waitFor(() => seqs().length >= head, `all ${head} events`);
    follower.kill('SIGINT');
    const code = await new Promise<number | null>((r) => follower.once('close', (c) => r(c)));
    expect(code).toBe(0);
    expect(seqs()).toEqual(Array.from({ length: head }, (_, i) => i + 1));
    expect(stderr).toContain('reading a snapshot whenever it changes');
  }, SLOW);

  it('under a writer appending as fast as it can, prints every event once and in order, and the writer is unharmed', async () => {
    const fastDir = join(base, 'follow-fast');
    const seed = await openLevelLog(fastDir);
    await seed.append('s', [{ type: 'user.input', items: [{ type: 'message', role: 'user', content: 'first' }] }]);
    await seed.close();
    const follower = spawn(process.execPath, [bin, 'events', 's', '--dir', fastDir, '--follow', '--json'], { cwd: root, env: { ...process.env, FORCE_COLOR: '0' } });
    let lastSeq = 0;
    let lines = 0;
    let disorder = 0;
    let buffered = '';
    let stderr = '';
    follower.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    follower.stdout.setEncoding('utf8');
    follower.stdout.on('data', (chunk: string) => {
      buffered += chunk;
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (line === '') continue;
        const seq = (JSON.parse(line) as { seq: number }).seq;
        if (seq !== lastSeq + 1) disorder += 1;
        lastSeq = seq;
        lines += 1;
      }
    });
    for (let i = 0; i < 600 && lastSeq === 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(lastSeq, stderr).toBe(1);
    // Seconds of batches of 50 with 8 appends in flight: tens of thousands of events a second, flushes and compactions.
    const writer = spawn(process.execPath, ['--import', 'tsx', join(root, 'test/support/fast-writer.ts'), fastDir, '5000'], { cwd: root });
    let writerOut = '';
    writer.stdout.on('data', (d: Buffer) => (writerOut += d.toString()));
    const writerCode = await new Promise<number | null>((r) => writer.once('close', (c) => r(c)));
    expect(writerCode, writerOut).toBe(0);
    const head = (JSON.parse(writerOut.trim().split('\n').at(-1) ?? '{}') as { head: number }).head;
    expect(head).toBeGreaterThan(1000);
    for (let i = 0; i < 1200 && lastSeq < head; i++) await new Promise((r) => setTimeout(r, 100));
    follower.kill('SIGINT');
    expect(await new Promise<number | null>((r) => follower.once('close', (c) => r(c)))).toBe(0);
    expect({ lines, lastSeq, disorder }).toEqual({ lines: head, lastSeq: head, disorder: 0 });
  }, SLOW);
});
