// The visual report in a real browser (the system's Chromium, headless, through playwright-core): the timeline
// renders, nothing is fetched, and selecting a step shows exactly what replayContext gives; saves docs/img/report.png.
// Chromium: $CHROMIUM_PATH, or `chromium` on the PATH (scripts/ensure-chromium.sh installs Debian's package).
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDemoSession } from '../src/cli/demo/coding-session.js';
import { fatesOf } from '../src/events/index.js';
import { openMemoryLog, type SessionEventLog } from '../src/log/index.js';
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

describe.skipIf(!executablePath)('the visual report in Chromium', () => {
  let dir: string;
  let log: SessionEventLog;
  let data: ReportData;
  let browser: Browser;
  let page: Page;
  const requests: string[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'context-ledger-report-'));
    log = await openMemoryLog();
    await runDemoSession(log, { tasks: 3 });
    data = await reportData(log, 'demo');
    const file = join(dir, 'report.html');
    await writeFile(file, renderReport(data));
    browser = await chromium.launch({ executablePath: executablePath!, headless: true, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    page.on('request', (request) => requests.push(request.url()));
    await page.goto(pathToFileURL(file).href);
  });
  afterAll(async () => {
    await browser?.close();
    await log?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('renders the timeline (a step per column, the budget line, the compactions) and the fate map, fetching nothing', async () => {
    const audit = await auditSession(log, 'demo');
    expect(await page.locator('#timeline .step-hit').count()).toBe(audit.steps.length);
    expect(await page.locator('#timeline line.compaction').count()).toBe(audit.compactions.length);
    expect(await page.locator('#timeline line.budget').count()).toBe(1);
    expect(await page.locator('#timeline path.sent').getAttribute('d')).toMatch(/^M[\d.]+,[\d.]+( L[\d.]+,[\d.]+)+$/);
    const map = await page.locator('#fatemap canvas').evaluate((c) => ({ width: (c as unknown as { width: number }).width, height: (c as unknown as { height: number }).height }));
    expect(map.width).toBeGreaterThanOrEqual(audit.steps.length);
    expect(map.height).toBeGreaterThanOrEqual(audit.items.length);
    // The last step is selected on load.
    expect(await page.locator('#step-panel').getAttribute('data-step')).toBe(String(audit.steps.at(-1)!.step));
    expect(requests.filter((url) => !url.startsWith('file:'))).toEqual([]);
  });

  it('selecting a step shows the exact context replayContext gives, and the dropped items', async () => {
    const step = data.compactions[0]!.step! + 3;
    await page.locator(`#timeline .step-hit[data-step="${step}"]`).click();
    await expect.poll(() => page.locator('#step-panel').getAttribute('data-step')).toBe(String(step));
    const shown = await page.locator('#sent-items pre.item').evaluateAll((pres) => pres.map((p) => JSON.parse(p.getAttribute('data-json') ?? 'null') as unknown));
    const replayed = await replayContext(log, 'demo', { step });
    expect(replayed.identical).toBe(true);
    expect(shown).toEqual(replayed.items);
    const shownIds = await page.locator('#sent-items tr[data-item-id]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-item-id')));
    expect(shownIds).toEqual(replayed.sent);
    const droppedIds = await page.locator('#dropped-items tr[data-item-id]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-item-id')));
    const recorded = fatesOf(replayed.recorded, replayed.sourceIds);
    expect(droppedIds).toEqual(recorded.filter((f) => f.fate === 'dropped').map((f) => f.id));
    expect(await page.locator('#verified').textContent()).toBe('digest verified');
    // Keyboard: the next step.
    await page.keyboard.press('ArrowRight');
    expect(await page.locator('#step-panel').getAttribute('data-step')).toBe(String(step + 1));
    await page.keyboard.press('ArrowLeft');
    await page.mouse.wheel(0, -100_000);
    await page.screenshot({ path: join(root, 'docs/img/report.png') });
  });
});
