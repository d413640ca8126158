// A session reads a fake .env holding every built-in secret kind: with `redact: secretRedactor()` none reaches the store's files,
// memory, a model request, the report or `events --json`; then the CLI erases the tool output and verify, context, replay and audit say so.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { gunzipSync } from 'node:zlib';
import { Agents, ScriptedModelClient, assistantMessage, auditItem, defineTool, functionCall, openLevelLog, renderReport, replaySession, reportData, secretRedactor } from '../../src/index.js';
import { FAKE_CURL, FAKE_ENV_FILE, FAKE_KEY_FILE, secretValues } from '../../test/support/fake-secrets.js';

const root = resolve(fileURLToPath(import.meta.url), '../../..');
const bin = join(root, 'bin', 'context-ledger.js');
const SLOW = 180_000;

const cli = (args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> =>
  new Promise((done, fail) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: root, env: { ...process.env, FORCE_COLOR: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });

const leaks = (text: string): string[] => secretValues().filter((secret) => text.includes(secret));

/**
 * The text of a report's data: the page embeds it gzipped and base64-encoded (src/replay/report/html.ts), so a plain
 * search of the HTML finds no secret even when the data holds one. Every block is decoded; there are at least two
 * (the overview and the items' contents).
 */
const reportText = (html: string): string => {
  const blocks = [...html.matchAll(/<script type="application\/octet-stream"[^>]*>([A-Za-z0-9+/=]*)<\/script>/g)].map((m) => gunzipSync(Buffer.from(m[1]!, 'base64')).toString('utf8'));
  expect(blocks.length).toBeGreaterThanOrEqual(2);
  return `${html}\n${blocks.join('\n')}`;
};

/** A session like the one below, written without redaction, rendered as a report. */
const unredactedReport = async (into: string): Promise<string> => {
  const log = await openLevelLog(into);
  try {
    const agent = Agents.react({ modelClient: new ScriptedModelClient(scriptedAnswers()), model: 'm', log, tools: [readFileTool], contextBudget: { maxItems: 50 } });
    const session = await agent.newSession();
    await session.run(`deploy with token ${secretValues()[2]} please`);
    return renderReport(await reportData(log, session.id));
  } finally {
    await log.close();
  }
};

const filesLeak = async (dir: string): Promise<string[]> => {
  const found: string[] = [];
  for (const name of await readdir(dir)) {
    const bytes = await readFile(join(dir, name));
    for (const secret of secretValues()) if (bytes.includes(Buffer.from(secret))) found.push(`${name}: ${secret}`);
  }
  return found;
};

const readFileTool = defineTool({
  name: 'read_file',
  description: 'Read a file',
  parameters: z.object({ path: z.string() }),
  execute: ({ path }) => (path === '.env' ? FAKE_ENV_FILE : path === 'id_rsa' ? FAKE_KEY_FILE : FAKE_CURL),
});
const scriptedAnswers = () => [
  { items: [functionCall('call-env', 'read_file', { path: '.env' })] },
  { items: [functionCall('call-key', 'read_file', { path: 'id_rsa' }), functionCall('call-curl', 'read_file', { path: 'notes' })] },
  { outputText: 'done', items: [assistantMessage(`the key was ${secretValues()[0]}`)] },
];

let base: string;
let dir: string;
let sessionId: string;
let requests: string;
let memoryText: string;

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'context-ledger-privacy-'));
  dir = join(base, 'ledger');
  const log = await openLevelLog(dir, { redact: secretRedactor() });
  const model = new ScriptedModelClient(scriptedAnswers());
  const agent = Agents.react({ modelClient: model, model: 'm', log, tools: [readFileTool], contextBudget: { maxItems: 50 } });
  const session = await agent.newSession();
  sessionId = session.id;
  await session.run(`deploy with token ${secretValues()[2]} please`);
  requests = JSON.stringify(model.requests);
  memoryText = JSON.stringify(session.memory.getItems());
  await log.close();
}, SLOW);

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

describe('a session that reads a fake .env, with redact: secretRedactor()', () => {
  it('no secret is in the store files, in memory or in any model request; the markers are', async () => {
    expect(await filesLeak(dir)).toEqual([]);
    expect(leaks(memoryText)).toEqual([]);
    expect(leaks(requests)).toEqual([]);
    expect(requests).toContain('[redacted:openai-api-key]');
    expect(requests).toContain('[redacted:private-key]');
    expect(memoryText).toContain('[redacted:aws-access-key-id]');
  });

  it('no secret is in events --json or in the HTML report', async () => {
    const events = await cli(['events', sessionId, '--dir', dir, '--json']);
    expect(events.code, events.stderr).toBe(0);
    expect(leaks(events.stdout)).toEqual([]);
    expect(events.stdout).toContain('"redactions"');
    const out = join(base, 'report.html');
    const report = await cli(['report', sessionId, '--dir', dir, '--out', out]);
    expect(report.code, report.stderr).toBe(0);
    const text = reportText(await readFile(out, 'utf8'));
    expect(leaks(text)).toEqual([]);
    expect(text).toContain('[redacted:openai-api-key]');
  }, SLOW);

  it('the report check can fail: a session written without redaction leaks in the decoded data, not in the HTML as is', async () => {
    const html = await unredactedReport(join(base, 'unredacted'));
    expect(leaks(html)).toEqual([]); // packed: a plain search of the page finds nothing
    expect(leaks(reportText(html))).toEqual(secretValues());
  }, SLOW);

  it('erase through the CLI: verify prints the erasure; context, replay and audit show the item as erased', async () => {
    const reader = await openLevelLog(dir);
    let seq = 0;
    for await (const event of reader.read(sessionId)) if (event.type === 'tool.result' && event.callId === 'call-env') seq = event.seq;
    await reader.close();
    expect(seq).toBeGreaterThan(0);
    const missing = await cli(['erase', sessionId, '--dir', dir, '--yes']);
    expect(missing.code).toBe(2);
    const erased = await cli(['erase', sessionId, '--dir', dir, '--item', `${seq}:0`, '--reason', 'credentials read from .env', '--by', 'security']);
    expect(erased.code, erased.stderr).toBe(0);
    expect(erased.stdout).toMatch(new RegExp(`erased the content of seq ${seq}`));
    const verify = await cli(['verify', sessionId, '--dir', dir]);
    expect(verify.code, verify.stderr).toBe(0);
    expect(verify.stdout).toMatch(/valid/);
    expect(verify.stdout).toMatch(new RegExp(`erased: 1 event\\(s\\) \\(${seq}\\)`));
    expect(verify.stdout).toMatch(/by security: erased .* \(credentials read from \.env\)/);
    const context = await cli(['context', sessionId, '--dir', dir, '--step', '2']);
    expect(context.code, context.stdout + context.stderr).toBe(0);
    expect(context.stdout).toMatch(/\[erased at .* by security: credentials read from \.env\]/);
    const log = await openLevelLog(dir);
    try {
      const replay = await replaySession(log, sessionId);
      expect(replay.identical).toBe(true);
      expect(replay.erasedSteps).toBeGreaterThan(0);
      const item = await auditItem(log, sessionId, `${seq}:0`);
      expect(item.erased).toMatchObject({ reason: 'credentials read from .env', by: 'security' });
      expect(item.preview).toBe('[erased]');
    } finally {
      await log.close();
    }
  }, SLOW);
});
