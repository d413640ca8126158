// `context-ledger export SESSION --otlp URL` in a child process against a loopback OTLP/HTTP receiver written here:
// the posted requests parse (OTLP JSON), carry the headers, and hold the session's span tree with its derived ids.
import { spawn } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDemoSession } from '../../src/cli/demo/coding-session.js';
import { openLevelLog } from '../../src/log/index.js';
import { sessionSpanRecords } from '../../src/otel/index.js';

const root = resolve(fileURLToPath(import.meta.url), '../../..');
const bin = join(root, 'bin', 'context-ledger.js');
const SLOW = 180_000;

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

interface Posted {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: { key: string; value: Record<string, unknown> }[];
  status: { code?: number; message?: string };
}

/** A loopback OTLP/HTTP receiver: records every request and answers `status`. */
const receiver = async (status = 200) => {
  const posted: Posted[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      posted.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(status === 200 ? '{}' : '{"code":3,"message":"rejected by the test receiver"}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    posted,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
};

let base: string;
let dir: string;

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'context-ledger-export-'));
  dir = join(base, 'ledger');
  const log = await openLevelLog(dir);
  await runDemoSession(log, { tasks: 2 });
  await log.close();
}, SLOW);

afterAll(async () => {
  if (base) await rm(base, { recursive: true, force: true });
});

describe('cost and cache figures on the command line', () => {
  it('audit and context --step take --prices (JSON or a file) and show usage, cost and the cacheable prefix', async () => {
    const prices = '{"scripted-*":{"input":3,"output":15,"cachedInput":0.3}}';
    const file = join(base, 'prices.json');
    await writeFile(file, prices);
    const [audit, auditJson, context, contextJson] = await Promise.all([
      cli(['audit', 'demo', '--prices', prices, '--dir', dir]),
      cli(['audit', 'demo', '--prices', prices, '--dir', dir, '--json']),
      cli(['context', 'demo', '--step', '5', '--prices', file, '--dir', dir]),
      cli(['context', 'demo', '--step', '5', '--prices', prices, '--dir', dir, '--json']),
    ]);
    // Alone, so its stderr is only the refusal (beside the others it could also say the ledger is in use).
    const bad = await cli(['audit', 'demo', '--prices', '{"m":{"input":1}}', '--dir', dir]);
    expect(audit.code).toBe(0);
    const account = (JSON.parse(auditJson.stdout) as { account: { cacheablePrefix: { tokens: number; requestTokens: number; share: number }; estimate: { cost: number } } }).account;
    expect(audit.stdout).toContain(`cache:      cacheable prefix ${account.cacheablePrefix.tokens.toLocaleString('en-US')} of ${account.cacheablePrefix.requestTokens.toLocaleString('en-US')} request tokens (${(account.cacheablePrefix.share * 100).toFixed(1)}%)`);
    expect(audit.stdout).toContain(`estimated $${account.estimate.cost.toFixed(4)}`);
    expect(context.code).toBe(0);
    const step = (JSON.parse(contextJson.stdout) as { account: { cacheablePrefix: { tokens: number; requestTokens: number } } }).account;
    expect(context.stdout).toMatch(new RegExp(`^model call scripted-coder: no usage recorded; cacheable prefix ${step.cacheablePrefix.tokens.toLocaleString('en-US')} of ${step.cacheablePrefix.requestTokens.toLocaleString('en-US')} tokens`, 'm'));
    expect(bad).toMatchObject({ code: 2, stderr: 'context-ledger: --prices: m.output: expected number, received undefined\n' });
  }, SLOW);

  it('a table without the called model names it as unpriced, and the estimate says it leaves it out', async () => {
    const prices = '{"gpt-x":{"input":3,"output":15}}';
    const [audit, auditJson, context] = await Promise.all([
      cli(['audit', 'demo', '--prices', prices, '--dir', dir]),
      cli(['audit', 'demo', '--prices', prices, '--dir', dir, '--json']),
      cli(['context', 'demo', '--step', '5', '--prices', prices, '--dir', dir]),
    ]);
    expect(auditJson.code).toBe(0);
    expect((JSON.parse(auditJson.stdout) as { account: { unpricedModels: string[] } }).account.unpricedModels).toEqual(['scripted-coder']);
    expect(audit.stdout).toMatch(/^cost: +\$0\.0000 in all \(no price for scripted-coder\)$/m);
    expect(audit.stdout).toContain('estimated $0.0000 if a provider cached exactly the prefix (leaves out the calls of scripted-coder: no price)');
    expect(context.stdout).toMatch(/^model call scripted-coder: .*; no price for scripted-coder: no cost$/m);
  }, SLOW);
});

describe('context-ledger export --otlp', () => {
  it('posts OTLP JSON the receiver parses: the span tree with derived ids, the headers given', async () => {
    const otlp = await receiver();
    try {
      const run = await cli(['export', 'demo', '--otlp', otlp.url, '--header', 'Authorization=Bearer t0ken', '--header', 'x-tenant=a=b', '--batch', '100', '--dir', dir, '--json']);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const summary = JSON.parse(run.stdout) as { spans: number; traces: number; traceIds: string[]; url: string };
      expect(summary.url).toBe(`${otlp.url}/v1/traces`);
      expect(otlp.posted.length).toBe(Math.ceil(summary.spans / 100));
      const spans: OtlpSpan[] = [];
      for (const request of otlp.posted) {
        expect(request.path).toBe('/v1/traces');
        expect(request.headers['content-type']).toContain('application/json');
        expect(request.headers['authorization']).toBe('Bearer t0ken');
        expect(request.headers['x-tenant']).toBe('a=b');
        const body = JSON.parse(request.body) as { resourceSpans: { resource: { attributes: { key: string; value: { stringValue?: string } }[] }; scopeSpans: { scope: { name: string }; spans: OtlpSpan[] }[] }[] };
        for (const rs of body.resourceSpans) {
          expect(rs.resource.attributes).toContainEqual({ key: 'service.name', value: { stringValue: 'context-ledger' } });
          for (const ss of rs.scopeSpans) {
            expect(ss.scope.name).toBe('context-ledger');
            spans.push(...ss.spans);
          }
        }
      }
      expect(spans).toHaveLength(summary.spans);
      // The same spans as the library builds from the log, ids included.
      const log = await openLevelLog(dir);
      const records = await sessionSpanRecords(log, 'demo');
      await log.close();
      expect(spans.map((s) => [s.traceId, s.spanId, s.parentSpanId ?? null, s.name]).sort()).toEqual(
        records.map((r) => [r.traceId, r.spanId, r.parentSpanId ?? null, r.name]).sort(),
      );
      const names = new Set(spans.map((s) => s.name.split(' ')[0]));
      expect([...names].sort()).toEqual(['chat', 'compact', 'execute_tool', 'invoke_agent', 'step']);
      expect(new Set(spans.map((s) => s.traceId)).size).toBe(summary.traces);
      const ids = new Set(spans.map((s) => s.spanId));
      for (const s of spans) {
        if (s.parentSpanId) expect(ids.has(s.parentSpanId)).toBe(true);
        expect(BigInt(s.endTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(s.startTimeUnixNano));
      }
      const chat = spans.find((s) => s.name === 'chat scripted-coder')!;
      expect(chat.kind).toBe(3); // OTLP SPAN_KIND_CLIENT
      const attr = (s: OtlpSpan, key: string) => s.attributes.find((a) => a.key === key)?.value;
      expect(attr(chat, 'gen_ai.operation.name')).toEqual({ stringValue: 'chat' });
      expect(attr(chat, 'context_ledger.items.sent')).toHaveProperty('intValue');
      expect(attr(chat, 'gen_ai.input.messages')).toBeUndefined();
    } finally {
      await otlp.close();
    }
  }, SLOW);

  it('a receiver that refuses is exit 1 with its reason; a bad URL, header or session is exit 2', async () => {
    const otlp = await receiver(400);
    try {
      // One after another: run together, all but one would find the ledger locked and say so on stderr first.
      const refused = await cli(['export', 'demo', '--otlp', `${otlp.url}/v1/traces`, '--dir', dir]);
      const badUrl = await cli(['export', 'demo', '--otlp', 'ftp://x', '--dir', dir]);
      const badHeader = await cli(['export', 'demo', '--otlp', otlp.url, '--header', 'novalue', '--dir', dir]);
      const unknown = await cli(['export', 'nope', '--otlp', otlp.url, '--dir', dir]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^context-ledger: export to http:\/\/127\.0\.0\.1:\d+\/v1\/traces failed after 0 of \d+ spans were accepted/);
      expect(badUrl).toMatchObject({ code: 2, stderr: 'context-ledger: --otlp must be an http(s) URL, got "ftp://x"\n' });
      expect(badHeader).toMatchObject({ code: 2, stderr: 'context-ledger: --header must be NAME=VALUE, got "novalue"\n' });
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain('no session "nope"');
    } finally {
      await otlp.close();
    }
  }, SLOW);
});
