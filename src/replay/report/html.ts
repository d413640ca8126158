// One self-contained HTML file for a session: data (gzip, base64), style and script inline; nothing is fetched when viewed.
import { gzipSync } from 'node:zlib';
import type { ReportData } from './data.js';
import { REPORT_SCRIPT } from './script.js';
import { REPORT_CSS } from './style.js';

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);

/** JSON that is safe inside a <script> element (no `</script`, no `<!--`), and the same text in any JS parser. */
const scriptJson = (value: unknown): string => JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');

/** The approvals table: each call that asked, its status, who decided and why (nothing when no call asked). */
const approvalsSection = (data: ReportData): string => {
  if (data.approvals.length === 0) return '';
  const rows = data.approvals
    .map((a) => `<tr><td>${a.step}</td><td>${escapeHtml(a.callId)}</td><td>${escapeHtml(a.name)}</td><td><code>${escapeHtml(a.arguments.length > 120 ? `${a.arguments.slice(0, 119)}…` : a.arguments)}</code></td><td>${a.status === 'pending' ? '<strong>pending</strong>' : escapeHtml(a.status)}</td><td>${escapeHtml(a.by ?? '')}</td><td>${escapeHtml(a.reason ?? '')}</td></tr>`)
    .join('');
  return `
  <section id="approvals">
    <h2>Approvals <span class="muted">(${data.approvals.filter((a) => a.status === 'pending').length} pending)</span></h2>
    <table><thead><tr><th>step</th><th>call</th><th>tool</th><th>arguments</th><th>status</th><th>by</th><th>reason</th></tr></thead><tbody>${rows}</tbody></table>
  </section>`;
};

/** A value as the page embeds it: the safe JSON, gzipped, in base64 (only `A-Za-z0-9+/=` in the page). */
const packed = (value: unknown): string => gzipSync(Buffer.from(scriptJson(value), 'utf8'), { level: 9 }).toString('base64');

/** Steps per chunk of step details (what was sent and dropped): a chunk is unpacked when one of its steps is shown. */
export const STEP_CHUNK = 250;

/**
 * The data in parts, so the first view unpacks only what it shows: the overview (steps' figures, items, extras), the
 * items' contents, and the steps' details in chunks of {@link STEP_CHUNK}.
 */
const embeddedData = (data: ReportData): string => {
  const { contents, steps, ...rest } = data;
  const overview = { ...rest, steps: steps.map(({ sent: _sent, dropped: _dropped, ...figures }) => figures), stepChunk: STEP_CHUNK };
  const chunks: string[] = [];
  for (let i = 0; i < steps.length; i += STEP_CHUNK) {
    const details = steps.slice(i, i + STEP_CHUNK).map((s) => [s.sent, s.dropped]);
    chunks.push(`<script type="application/octet-stream" class="report-steps" data-chunk="${i / STEP_CHUNK}">${packed(details)}</script>`);
  }
  return [
    `<script type="application/octet-stream" id="report-data" data-encoding="gzip+base64">${packed(overview)}</script>`,
    `<script type="application/octet-stream" id="report-contents" data-encoding="gzip+base64">${packed(contents)}</script>`,
    ...chunks,
  ].join('\n');
};

/** One line under the title: the cacheable prefix share and, with prices, the cost. */
const accountingSummary = (data: ReportData): string => {
  const a = data.accounting;
  if (!a) return '';
  const share = `${(a.totals.cacheablePrefix.share * 100).toFixed(1)}%`;
  const unpriced = a.totals.unpricedModels.length > 0 ? `; leaves out the calls of ${escapeHtml(a.totals.unpricedModels.join(', '))}: no price` : '';
  const cost =
    a.cost === 'measured'
      ? ` · cost $${(a.totals.cost ?? 0).toFixed(4)}${unpriced ? ` (${unpriced.slice(2)})` : ''}`
      : a.cost === 'estimated'
        ? ` · estimated cost $${(a.totals.estimate.cost ?? 0).toFixed(4)} (if exactly the prefix were cached${unpriced})`
        : '';
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
  <section id="loading" class="muted">Loading the report…</section>
  <section id="timeline">
    <h2>Timeline <span class="muted">(<span id="timeline-unit">tokens</span> per step; click a step; <kbd>←</kbd> <kbd>→</kbd> move)</span></h2>
    <svg role="img" aria-label="memory and sent per step"></svg>
    <div class="legend" id="timeline-legend">${swatch('in memory', '#c7d2fe')}${swatch('sent', '#2563eb')}${swatch('budget (dashed)', '#111827')}${swatch('compaction', '#d6404b')}${swatch('cacheable prefix (dotted)', '#0f766e')}${data.accounting?.cost ? swatch(`${data.accounting.cost === 'estimated' ? 'estimated ' : ''}cost (own scale)`, '#b45309') : ''}</div>
  </section>
  <section id="fatemap">
    <h2>Fates <span class="muted">(rows: items in the order they entered memory; columns: steps; wheel to zoom, drag to pan, double-click to reset)</span></h2>
    <div class="map-wrap"><canvas></canvas><div id="fate-tip" class="tip" hidden></div></div>
    <div class="legend">${swatch('kept', '#2e9d4f')}${swatch('cleared (placeholder sent)', '#e3b505')}${swatch('trimmed', '#f08a24')}${swatch('dropped', '#d6404b')}${swatch('not in memory', '#f3f4f6')}<span id="fate-view" class="controls"></span></div>
  </section>
  <section id="search">
    <h2>Search <span class="muted">(item text)</span></h2>
    <input id="search-input" type="search" placeholder="text in any item, e.g. a file name or an error" autocomplete="off">
    <div id="search-results"></div>
  </section>
  ${approvalsSection(data)}
  <section id="step-panel"></section>
</main>
${embeddedData(data)}
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
