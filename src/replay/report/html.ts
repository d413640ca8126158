// One self-contained HTML file for a session: data, style and script inline; nothing is fetched when viewed.
import type { ReportData } from './data.js';
import { REPORT_SCRIPT } from './script.js';
import { REPORT_CSS } from './style.js';

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);

/** JSON that is safe inside a <script> element (no `</script`, no `<!--`). */
const scriptJson = (value: unknown): string => JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');

/** One line under the title: the cacheable prefix share and, with prices, the cost. */
const accountingSummary = (data: ReportData): string => {
  const a = data.accounting;
  if (!a) return '';
  const share = `${(a.totals.cacheablePrefix.share * 100).toFixed(1)}%`;
  const cost = a.cost === 'measured' ? ` · cost $${(a.totals.cost ?? 0).toFixed(4)}` : a.cost === 'estimated' ? ` · estimated cost $${(a.totals.estimate.cost ?? 0).toFixed(4)} (if exactly the prefix were cached)` : '';
  return `<div class="muted accounting">cacheable prefix ${share} of request tokens${a.totals.measuredCache ? ` · provider cache hit ${(a.totals.measuredCache.share * 100).toFixed(1)}%` : ''}${cost}</div>`;
};

/**
 * Renders the report: a timeline of steps (memory and sent tokens, budget line, compactions), an item-by-step
 * map of fates, and the selected step's exact context and dropped items.
 * @example await writeFile('report.html', renderReport(await reportData(log, 'demo')))
 */
export const renderReport = (data: ReportData): string => {
  const t = data.totals;
  const swatch = (name: string, color: string): string => `<span><span class="swatch" style="background:${color}"></span>${name}</span>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>context-ledger report: ${escapeHtml(data.sessionId)}</title>
<style>${REPORT_CSS}</style>
</head>
<body>
<header>
  <h1>Session ${escapeHtml(data.sessionId)}</h1>
  <div class="muted">${data.steps.length} steps · ${data.compactions.length} compactions · ${t['itemsEntered'] ?? 0} items entered memory · ${t['itemsCleared'] ?? 0} cleared and ${t['itemsDropped'] ?? 0} dropped at some step · ${(t['tokensSavedByProjection'] ?? 0).toLocaleString('en-US')} tokens not sent · read up to seq ${data.generatedFrom.headSeq}${memoryToolsLine(data)}</div>
  ${accountingSummary(data)}
</header>
<main>
  <section id="timeline">
    <h2>Timeline <span class="muted">(<span id="timeline-unit">tokens</span> per step; click a step)</span></h2>
    <svg role="img" aria-label="memory and sent per step"></svg>
    <div class="legend">${swatch('in memory', '#c7d2fe')}${swatch('sent', '#2563eb')}${swatch('budget (dashed)', '#111827')}${swatch('compaction', '#d6404b')}${swatch('cacheable prefix (dotted)', '#0f766e')}${data.accounting?.cost ? swatch(`${data.accounting.cost === 'estimated' ? 'estimated ' : ''}cost (own scale)`, '#b45309') : ''}<span class="controls">← → move between steps</span></div>
  </section>
  <section id="fatemap">
    <h2>Fates <span class="muted">(one row per item in the order it entered memory, one column per step)</span></h2>
    <canvas></canvas>
    <div class="legend">${swatch('kept', '#2e9d4f')}${swatch('cleared (placeholder sent)', '#e3b505')}${swatch('trimmed', '#f08a24')}${swatch('dropped', '#d6404b')}${swatch('not in memory', '#f3f4f6')}</div>
  </section>
  <section id="step-panel"></section>
</main>
<script type="application/json" id="report-data">${scriptJson(data)}</script>
<script>${REPORT_SCRIPT}</script>
</body>
</html>
`;
};

/** The header's note of working-memory edits, recalls and rewinds (with the steps each rewind went back over), when any. */
const memoryToolsLine = (data: ReportData): string => {
  const tools = data.memoryTools;
  if (!tools) return '';
  const rewinds = tools.rewinds.map((r) => `rewind at seq ${r.seq} to seq ${r.toSeq}${r.steps.length ? ` (steps ${r.steps.join(', ')} rewound)` : ''}`);
  return escapeHtml(` · ${tools.notes.length} working-memory edit(s) · ${tools.recalls.length} recall(s)${rewinds.length ? ` · ${rewinds.join('; ')}` : ''}`);
};
