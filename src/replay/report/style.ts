// The report's stylesheet (inlined: the file works offline).
export const REPORT_CSS = `
:root { --kept: #2e9d4f; --cleared: #e3b505; --trimmed: #f08a24; --dropped: #d6404b; --ink: #1d2330; --muted: #6b7280; --line: #e5e7eb; --accent: #2563eb; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); background: #fafafa; }
header { padding: 16px 24px; background: #fff; border-bottom: 1px solid var(--line); }
h1 { font-size: 18px; margin: 0 0 4px; } h2 { font-size: 15px; margin: 0 0 8px; }
.muted { color: var(--muted); }
main { padding: 16px 24px; display: grid; gap: 16px; }
section { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; }
#timeline svg { width: 100%; height: 240px; display: block; }
#timeline .step-hit { fill: transparent; cursor: pointer; }
#timeline .step-hit:hover { fill: rgba(37, 99, 235, 0.08); }
#timeline .step-hit.selected { fill: rgba(37, 99, 235, 0.18); }
.legend { display: flex; gap: 14px; flex-wrap: wrap; font-size: 12px; color: var(--muted); margin-top: 6px; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 4px; vertical-align: -1px; }
#fatemap .map-wrap { position: relative; }
#fatemap canvas { display: block; cursor: crosshair; border: 1px solid var(--line); }
.tip { position: absolute; z-index: 2; max-width: 420px; padding: 6px 8px; background: #111827; color: #fff; border-radius: 6px; font-size: 12px; white-space: pre-wrap; pointer-events: none; }
#search input { width: 100%; padding: 6px 8px; border: 1px solid var(--line); border-radius: 6px; font: inherit; }
#search .hit { padding: 3px 0; cursor: pointer; border-bottom: 1px solid var(--line); } #search .hit:hover { background: #f3f4f6; }
#search .kind, td.kind { color: var(--muted); margin: 0 6px; white-space: nowrap; }
td.kind.call { color: #7c3aed; } td.kind.result { color: #0f766e; } td.kind.reasoning { color: #b45309; }
td.num { text-align: right; white-space: nowrap; }
tr.focus td { background: #fef9c3; }
details summary { cursor: pointer; } pre.full { margin: 4px 0 0; white-space: pre-wrap; word-break: break-word; max-height: 24em; overflow: auto; font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; }
pre.item { display: none; }
.badge.placeholder { background: #fef3c7; color: #92400e; } .badge.extra { background: #e0f2fe; color: #075985; }
a.permalink { margin-left: 8px; font-size: 12px; font-weight: normal; }
#step-panel .summary { margin-bottom: 8px; }
#working-memory { margin-bottom: 12px; } .wm-block { margin: 4px 0 8px; } .wm-name { font-weight: 600; } .wm-text { border-left: 3px solid #c7d2fe; padding-left: 8px; }
table { border-collapse: collapse; width: 100%; font-size: 12.5px; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; }
td.fate { white-space: nowrap; font-weight: 600; }
td.fate.kept { color: var(--kept); } td.fate.cleared { color: #a07f00; } td.fate.trimmed { color: var(--trimmed); } td.fate.dropped { color: var(--dropped); }
div.scroll { max-height: 420px; overflow: auto; border: 1px solid var(--line); border-radius: 6px; }
.badge { display: inline-block; padding: 1px 6px; border-radius: 10px; font-size: 11px; background: #eef2ff; color: #3730a3; margin-left: 6px; }
.badge.bad { background: #fee2e2; color: #991b1b; }
.controls { font-size: 12px; color: var(--muted); }
`;
