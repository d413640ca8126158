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
#fatemap canvas { width: 100%; image-rendering: pixelated; cursor: pointer; border: 1px solid var(--line); }
#step-panel .summary { margin-bottom: 8px; }
table { border-collapse: collapse; width: 100%; font-size: 12.5px; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; }
td.fate { white-space: nowrap; font-weight: 600; }
td.fate.kept { color: var(--kept); } td.fate.cleared { color: #a07f00; } td.fate.trimmed { color: var(--trimmed); } td.fate.dropped { color: var(--dropped); }
div.scroll { max-height: 420px; overflow: auto; border: 1px solid var(--line); border-radius: 6px; }
pre.item { margin: 0; white-space: pre-wrap; word-break: break-word; max-height: 4.5em; overflow: auto; font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; }
.badge { display: inline-block; padding: 1px 6px; border-radius: 10px; font-size: 11px; background: #eef2ff; color: #3730a3; margin-left: 6px; }
.badge.bad { background: #fee2e2; color: #991b1b; }
.controls { font-size: 12px; color: var(--muted); }
`;
