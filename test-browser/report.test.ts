// The visual report in a real browser (the system's Chromium, headless, through playwright-core) at 300 and 3,000
// steps: the file's size, its time to first view (printed, not a threshold), the timeline and fate map (hover, zoom),
// that a click on a step shows exactly what replayContext gives, #step=N permalinks, search, the model call line,
// and that hostile item text stays text. Saves docs/img/report.png with UPDATE_DOCS_IMAGES=1.
// Chromium: $CHROMIUM_PATH, or `chromium` on the PATH (scripts/ensure-chromium.sh installs Debian's package).
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runDemoSession } from '../src/cli/demo/coding-session.js';
import { fatesOf } from '../src/events/index.js';
import { Agents, ScriptedModelClient, StructuredSummaryCompactPolicy, TypeAwareContextProjector, defineTool, functionCall, assistantMessage } from '../src/index.js';
import { openMemoryLog, type SessionEventLog } from '../src/log/index.js';
import type { ModelClient } from '../src/model/index.js';
import { auditSession, renderReport, replayContext, reportData, type ReportData } from '../src/replay/index.js';

const root = resolve(fileURLToPath(import.meta.url), '../..');

const findChromium = (): string | undefined => {
  if (process.env['CHROMIUM_PATH']) return process.env['CHROMIUM_PATH'];
  for (const name of ['chromium', 'chromium-browser', 'google-chrome-stable', 'google-chrome']) {
    try {
      return execFileSync('bash', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim() || undefined;
    } catch {
      // not this one
    }
  }
  return undefined;
};

const executablePath = findChromium();
if (!executablePath) {
  console.warn('test-browser: SKIPPED: no Chromium found (run scripts/ensure-chromium.sh, or set CHROMIUM_PATH)');
}

/** A long session through the runtime: one tool call per step, Tier-1 clearing, a budget and compaction. */
const longSession = async (log: SessionEventLog, steps: number, hostile = ''): Promise<string> => {
  let n = 0;
  const model: ModelClient = {
    async create() {
      n++;
      const items = n < steps ? [functionCall(`call_${n}`, 'read_file', { path: `src/file-${n % 37}.ts` })] : [assistantMessage(`done ${hostile}`)];
      return { items, ...(n >= steps ? { outputText: `done ${hostile}` } : {}), usage: { inputTokens: 1000 + n, outputTokens: 20, totalTokens: 1020 + n } };
    },
  };
  const readFile = defineTool({
    name: 'read_file',
    description: 'read a file',
    parameters: z.object({ path: z.string() }),
    execute: ({ path }) => `// ${path} ${hostile}\n${'export const value = 1;\n'.repeat(8)}`,
  });
  const agent = Agents.react({
    modelClient: model,
    model: 'scripted',
    tools: [readFile],
    log,
    maxSteps: steps,
    contextProjector: new TypeAwareContextProjector(),
    contextBudget: { maxApproxChars: 6000, maxRecentToolResults: 6, pinnedPrefixItems: 1 },
    compactPolicy: new StructuredSummaryCompactPolicy({ maxItems: 40 }, new TypeAwareContextProjector(), { compactAbove: 90 }),
  });
  const session = await agent.newSession({ id: 'long' });
  await session.run(`read every file ${hostile}`);
  return session.id;
};

interface Opened {
  readonly log: SessionEventLog;
  readonly sessionId: string;
  readonly data: ReportData;
  readonly bytes: number;
  readonly file: string;
}

const SIZES = [300, 3_000] as const;

describe.skipIf(!executablePath)('the visual report in Chromium', () => {
  let dir: string;
  let browser: Browser;
  const reports = new Map<number, Opened>();

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'context-ledger-report-'));
    for (const size of SIZES) {
      const log = await openMemoryLog();
      // 300: the demo (about 300 steps, exact tokens); 3,000: a long runtime session.
      const sessionId = size === 300 ? (await runDemoSession(log)).sessionId : await longSession(log, size);
      const data = await reportData(log, sessionId, { prices: { scripted: { input: 2, output: 8 }, 'scripted-coder': { input: 2, output: 8 } } });
      const html = renderReport(data);
      const file = join(dir, `report-${size}.html`);
      await writeFile(file, html);
      reports.set(size, { log, sessionId, data, bytes: Buffer.byteLength(html), file });
    }
    browser = await chromium.launch({ executablePath: executablePath!, headless: true, args: ['--no-sandbox'] });
  }, 900_000);
  afterAll(async () => {
    await browser?.close();
    for (const r of reports.values()) await r.log.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const open = async (size: number, hash = ''): Promise<{ page: Page; firstViewMs: number; requests: string[] }> => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    const requests: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    const started = Date.now();
    await page.goto(pathToFileURL(reports.get(size)!.file).href + hash);
    await page.waitForSelector('body[data-ready="true"]', { timeout: 60_000 });
    return { page, firstViewMs: Date.now() - started, requests };
  };

  for (const size of SIZES) {
    it(`${size} steps: size and time to first view; timeline, fate map and the selected step, fetching nothing`, async () => {
      const { log, sessionId, data, bytes } = reports.get(size)!;
      expect(data.steps.length).toBeGreaterThanOrEqual(size * 0.95);
      const { page, firstViewMs, requests } = await open(size);
      const inPage = await page.evaluate(() => (globalThis as unknown as { __reportReadyMs: number }).__reportReadyMs);
      const phases = await page.evaluate(() => (globalThis as unknown as { __reportTimings: Record<string, number> }).__reportTimings);
      const phase = (a: string, b: string): number => Math.round((phases[b] ?? 0) - (phases[a] ?? 0));
      console.log(
        `report at ${data.steps.length} steps: ${(bytes / 1024).toFixed(0)} KB, first view ${firstViewMs} ms from goto (${Math.round(inPage)} ms after navigation start; ` +
          `script start ${Math.round(phases['start'] ?? 0)} ms, unpack ${phase('start', 'loaded')} ms, timeline ${phase('loaded', 'timeline')} ms, fate map ${phase('timeline', 'fateMap')} ms, step ${phase('fateMap', 'step')} ms)`,
      );
      expect(bytes).toBeLessThan(2 * 1024 * 1024);
      const audit = await auditSession(log, sessionId);
      expect(await page.locator('#timeline .step-hit').count()).toBe(audit.steps.length);
      expect(await page.locator('#timeline line.compaction').count()).toBe(audit.compactions.length);
      expect(await page.locator('#timeline path.sent').getAttribute('d')).toMatch(/^M[\d.]+,[\d.]+( L[\d.]+,[\d.]+)+$/);
      expect(await page.locator('#fatemap canvas').getAttribute('data-rows')).toBe(String(audit.items.length));
      expect(await page.locator('#step-panel').getAttribute('data-step')).toBe(String(audit.steps.at(-1)!.step));
      // The model call of the step: latency, usage, and a cost from the prices given.
      // (The demo's scripted model reports no usage, so it has no cost.)
      expect(await page.locator('#model-call').textContent()).toMatch(
        size === 300 ? /^model call: scripted-coder · latency \d+ ms · usage - in, - out$/ : /^model call: scripted · latency \d+ ms · usage [\d,]+ in, [\d,]+ out · cost \d+\.\d+$/,
      );
      expect(requests.filter((url) => !url.startsWith('file:'))).toEqual([]);
      await page.close();
    });

    it(`${size} steps: a click on a step shows exactly what replayContext gives, with each item's kind and tokens`, async () => {
      const { log, sessionId, data } = reports.get(size)!;
      const { page } = await open(size);
      const step = data.steps.filter((s) => s.dropped.length > 0)[Math.floor(data.steps.filter((s) => s.dropped.length > 0).length / 2)]!.step;
      await page.locator(`#timeline .step-hit[data-step="${step}"]`).dispatchEvent('click');
      await expect.poll(() => page.locator('#step-panel').getAttribute('data-step')).toBe(String(step));
      expect(new URL(page.url()).hash).toBe(`#step=${step}`);
      const shown = await page.locator('#sent-items pre.item').evaluateAll((pres) => pres.map((p) => JSON.parse(p.getAttribute('data-json') ?? 'null') as unknown));
      const replayed = await replayContext(log, sessionId, { step });
      expect(replayed.identical).toBe(true);
      expect(shown).toEqual(replayed.items);
      const shownIds = await page.locator('#sent-items tr[data-item-id]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-item-id')));
      expect(shownIds).toEqual(replayed.sent);
      const droppedIds = await page.locator('#dropped-items tr[data-item-id]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-item-id')));
      const recorded = fatesOf(replayed.recorded, replayed.sourceIds);
      expect(droppedIds).toEqual(recorded.filter((f) => f.fate === 'dropped').map((f) => f.id));
      expect(droppedIds.length).toBeGreaterThan(0);
      expect(await page.locator('#verified').textContent()).toBe('digest verified');
      // Kinds and tokens: each row says what the item is, and its token count.
      const kinds = await page.locator('#sent-items td.kind').evaluateAll((cells) => cells.map((c) => c.firstChild?.textContent ?? ''));
      expect(kinds).toEqual(replayed.items.map((i) => (i.type === 'message' ? `${String(i['role'])} message` : i.type === 'function_call' ? 'call' : i.type === 'function_call_output' ? 'result' : i.type)));
      const tokens = await page.locator('#sent-items td.num').allTextContents();
      expect(tokens.every((t) => /^\d[\d,]*$/.test(t))).toBe(true);
      // Full text on demand.
      const first = page.locator('#sent-items details').nth(1);
      await first.locator('summary').click();
      expect(await first.locator('pre.full').isVisible()).toBe(true);
      // Keyboard: the next step, and the permalink follows.
      await page.keyboard.press('ArrowRight');
      await expect.poll(() => page.locator('#step-panel').getAttribute('data-step')).toBe(String(data.steps[data.steps.findIndex((s) => s.step === step) + 1]!.step));
      await page.close();
    });
  }

  it('#step=N opens that step; the fate map hovers (item, step, fate, rule) and zooms; search finds item text', async () => {
    const { data } = reports.get(3_000)!;
    const target = data.steps[1200]!.step;
    const { page } = await open(3_000, `#step=${target}`);
    expect(await page.locator('#step-panel').getAttribute('data-step')).toBe(String(target));
    // Hover: the tooltip names an item, a step, a fate and its rule.
    const canvas = page.locator('#fatemap canvas');
    const box = (await canvas.boundingBox())!;
    let tip = '';
    for (let k = 1; k < 40 && !/ · (kept|cleared|trimmed|dropped) by /.test(tip); k++) {
      await page.mouse.move(box.x + 48 + ((box.width - 48) * k) / 41, box.y + ((box.height - 18) * ((k * 7) % 40)) / 41);
      tip = (await page.locator('#fate-tip').textContent()) ?? '';
    }
    expect(tip).toMatch(/^item \d+:\w+ \(.+\) · step \d+ · (kept|cleared|trimmed|dropped) by \w+/);
    // Zoom: the wheel narrows the range of steps shown.
    const before = await page.locator('#fate-view').textContent();
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    for (let k = 0; k < 5; k++) await page.mouse.wheel(0, -200);
    await expect.poll(() => page.locator('#fate-view').textContent()).not.toBe(before);
    const range = /showing steps (\d+)–(\d+)/.exec((await page.locator('#fate-view').textContent()) ?? '')!;
    expect(Number(range[2]) - Number(range[1])).toBeLessThan(data.steps.length / 2);
    // Search: a file name the tool results carry.
    await page.locator('#search-input').fill('file-17.ts');
    await expect.poll(() => page.locator('#search-results .hit').count()).toBeGreaterThan(0);
    const hit = page.locator('#search-results .hit').first();
    const hitId = await hit.getAttribute('data-item-id');
    await hit.click();
    await expect.poll(() => page.locator('#step-panel tr.focus').getAttribute('data-item-id')).toBe(hitId);
    await page.close();
  });

  it('hostile item text (a closing script tag, an img with onerror, U+2028, NUL) is shown as text, never run', async () => {
    const hostile = '</script><img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>\u2028\u2029\u0000 <!--';
    const log = await openMemoryLog();
    const sessionId = await longSession(log, 30, hostile);
    const html = renderReport(await reportData(log, sessionId));
    expect(html).not.toContain('<img src=x');
    const file = join(dir, 'hostile.html');
    await writeFile(file, html);
    const page = await browser.newPage();
    await page.goto(pathToFileURL(file).href);
    await page.waitForSelector('body[data-ready="true"]');
    expect(await page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.locator('#step-panel img').count()).toBe(0);
    const texts = await page.locator('#sent-items pre.full').allTextContents();
    expect(texts.some((t) => t.includes('</script><img src=x onerror="window.__pwned=1">') && t.includes('\u2028') && t.includes('\u0000'))).toBe(true);
    await page.screenshot({ path: join(dir, 'hostile.png') });
    await page.close();
    await log.close();
  });

  it("a step's working memory is shown in the step view: each block's name, size and text (hostile text stays text)", async () => {
    const log = await openMemoryLog();
    const model = new ScriptedModelClient([
      { items: [functionCall('w1', 'working_memory', { operation: 'set', block: 'plan', text: '1. read the parser\n2. fix <img src=x onerror="window.__pwned=3">' })] },
      { items: [functionCall('w2', 'working_memory', { operation: 'set', block: 'facts', text: 'repo: acme/api' })] },
      { outputText: 'done', items: [assistantMessage('done')] },
    ]);
    const agent = Agents.react({ modelClient: model, model: 'm', log, workingMemory: { blocks: [{ name: 'plan', maxChars: 200, description: 'the steps left' }, { name: 'facts', maxChars: 100 }] } });
    const session = await agent.newSession();
    await session.run('plan it');
    const data = await reportData(log, session.id);
    const audit = await auditSession(log, session.id);
    const file = join(dir, 'working-memory.html');
    await writeFile(file, renderReport(data));
    const page = await browser.newPage();
    for (const step of audit.steps) {
      await page.goto(`${pathToFileURL(file).href}#step=${step.step}`);
      await page.waitForSelector('body[data-ready="true"]');
      await expect.poll(() => page.locator('#step-panel').getAttribute('data-step')).toBe(String(step.step));
      const blocks = await page.locator('#working-memory .wm-block').evaluateAll((nodes) =>
        nodes.map((n) => [n.getAttribute('data-block'), n.querySelector('.wm-name')?.textContent, n.querySelector('pre.wm-text')?.textContent]),
      );
      expect(blocks).toEqual(
        step.workingMemory!.blocks.map((b) => [b.name, `${b.name} · ${b.chars} of ${b.maxChars} characters${b.description ? ` · ${b.description}` : ''}`, b.text]),
      );
    }
    expect(audit.steps.at(-1)!.workingMemory!.blocks.map((b) => b.text)).toEqual(['1. read the parser\n2. fix <img src=x onerror="window.__pwned=3">', 'repo: acme/api']);
    expect(await page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    await page.close();
    await log.close();
  });

  it('takes the screenshot for the docs (written to docs/img/report.png only with UPDATE_DOCS_IMAGES=1, so a test run leaves the tree clean)', async () => {
    const { data } = reports.get(300)!;
    const { page } = await open(300, `#step=${data.compactions[0]!.step! + 3}`);
    const path = process.env['UPDATE_DOCS_IMAGES'] === '1' ? join(root, 'docs/img/report.png') : join(await mkdtemp(join(tmpdir(), 'report-shot-')), 'report.png');
    const png = await page.screenshot({ path });
    await page.close();
    expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
  });
});
