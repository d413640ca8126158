// The report's script (inlined, no framework): unpacks the data, draws the timeline and the fate map, shows a step.
// Extension points: `data.extras.timeline` (extra lines on the timeline) and `data.extras.badges` (badges on items).
export const REPORT_SCRIPT = String.raw`
(function () {
  var COLORS = { kept: '#2e9d4f', cleared: '#e3b505', trimmed: '#f08a24', dropped: '#d6404b' };
  var NS = 'http://www.w3.org/2000/svg';
  var data, steps, selected = -1, itemById = {}, indexOfStep = {};
  function el(tag, attrs, text) {
    var e = tag.indexOf('svg:') === 0 ? document.createElementNS(NS, tag.slice(4)) : document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function fmt(n) { return n === null || n === undefined ? '-' : Number(n).toLocaleString('en-US'); }
  function money(n) { return n === null || n === undefined ? '-' : n < 0.01 ? n.toFixed(5) : n.toFixed(4); }

  // ---- data: gzip in base64, unpacked by the browser's DecompressionStream
  function unpack(node) {
    var text = atob(node.textContent.trim());
    var bytes = new Uint8Array(text.length);
    for (var i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
    return new Response(stream).text().then(function (json) { return JSON.parse(json); });
  }
  function load() { return unpack(document.getElementById('report-data')); }
  // The steps' details (sent, dropped) and the items' contents are unpacked when a step first needs them.
  var chunks = {}, contentsPromise = null;
  function details(i) {
    var k = Math.floor(i / data.stepChunk);
    if (!chunks[k]) chunks[k] = unpack(document.querySelector('script.report-steps[data-chunk="' + k + '"]')).then(function (rows) {
      rows.forEach(function (row, j) { var s = steps[k * data.stepChunk + j]; s.sent = row[0]; s.dropped = row[1]; });
    });
    if (!contentsPromise) contentsPromise = unpack(document.getElementById('report-contents')).then(function (contents) { data.contents = contents; });
    return Promise.all([chunks[k], contentsPromise]);
  }

  // ---- items as their kind
  function kindOf(item) {
    if (!item || typeof item !== 'object') return 'item';
    if (item.type === 'message') return (item.role || '') + ' message';
    if (item.type === 'function_call') return 'call';
    if (item.type === 'function_call_output') return 'result';
    if (item.type === 'reasoning') return 'reasoning';
    return String(item.type);
  }
  function textOfContent(content) {
    if (typeof content === 'string') return content;
    if (Array.isArray(content)) return content.map(function (p) { return p && typeof p.text === 'string' ? p.text : JSON.stringify(p); }).join('\n');
    return content === undefined ? '' : JSON.stringify(content);
  }
  function textOf(item) {
    if (!item || typeof item !== 'object') return String(item);
    if (item.type === 'message') return textOfContent(item.content) + (item.tool_calls ? '\n' + JSON.stringify(item.tool_calls) : '');
    if (item.type === 'function_call') return String(item.name) + '(' + String(item.arguments === undefined ? '' : item.arguments) + ')';
    if (item.type === 'function_call_output') return typeof item.output === 'string' ? item.output : JSON.stringify(item.output);
    if (item.type === 'reasoning') return textOfContent(item.summary !== undefined ? item.summary : item.content !== undefined ? item.content : item.text !== undefined ? item.text : item.output);
    return JSON.stringify(item);
  }
  function preview(text, max) { var flat = text.replace(/\s+/g, ' ').trim(); return flat.length > max ? flat.slice(0, max - 1) + '…' : flat; }
  function badgesFor(id) {
    var out = [];
    var item = itemById[id];
    if (item && item.replaces) out.push(['placeholder of ' + item.replaces, 'placeholder']);
    (data.extras.badges[id] || []).forEach(function (b) { out.push([b, 'extra']); });
    return out;
  }

  // ---- timeline: memory (area), sent (line), budget (dashed), compactions (red), extra lines (data.extras.timeline)
  function drawTimeline() {
    var svg = document.querySelector('#timeline svg');
    var W = 1000, H = 240, L = 56, R = 12, T = 12, B = 28;
    svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
    svg.setAttribute('preserveAspectRatio', 'none');
    var useTokens = steps.some(function (s) { return s.memoryTokens !== null; });
    function memOf(s) { return useTokens ? (s.memoryTokens || 0) : s.memoryItems; }
    function sentOf(s) { return useTokens ? (s.sentTokens || 0) : s.sentItems; }
    var max = 1;
    steps.forEach(function (s) { max = Math.max(max, memOf(s), sentOf(s), useTokens && s.maxTokens !== null ? s.maxTokens : 0); });
    data.extras.timeline.forEach(function (line) { line.values.forEach(function (v) { if (typeof v === 'number') max = Math.max(max, v); }); });
    var n = Math.max(steps.length, 1);
    var bw = (W - L - R) / n;
    function x(i) { return L + (i + 0.5) * bw; }
    function y(v) { return T + (H - T - B) * (1 - v / max); }
    var area = 'M' + x(0) + ',' + y(0);
    steps.forEach(function (s, i) { area += ' L' + x(i) + ',' + y(memOf(s)); });
    area += ' L' + x(steps.length - 1) + ',' + y(0) + ' Z';
    svg.appendChild(el('svg:path', { d: area, fill: '#c7d2fe', stroke: '#818cf8', 'stroke-width': 1, class: 'memory' }));
    var line = '';
    steps.forEach(function (s, i) { line += (i ? ' L' : 'M') + x(i) + ',' + y(sentOf(s)); });
    svg.appendChild(el('svg:path', { d: line, fill: 'none', stroke: '#2563eb', 'stroke-width': 2, class: 'sent' }));
    data.extras.timeline.forEach(function (extra) {
      var d = '', pen = false;
      extra.values.forEach(function (v, i) { if (typeof v !== 'number') { pen = false; return; } d += (pen ? ' L' : 'M') + x(i) + ',' + y(v); pen = true; });
      svg.appendChild(el('svg:path', { d: d, fill: 'none', stroke: extra.color, 'stroke-width': 1.5, class: 'extra' }));
      var legend = el('span');
      legend.appendChild(el('span', { class: 'swatch', style: 'background:' + extra.color }));
      legend.appendChild(document.createTextNode(extra.name));
      document.getElementById('timeline-legend').appendChild(legend);
    });
    var budget = steps.length && useTokens ? steps[steps.length - 1].maxTokens : null;
    if (budget !== null && budget !== undefined) {
      svg.appendChild(el('svg:line', { x1: L, x2: W - R, y1: y(budget), y2: y(budget), stroke: '#111827', 'stroke-dasharray': '6 4', class: 'budget' }));
      svg.appendChild(el('svg:text', { x: W - R - 4, y: y(budget) - 4, 'text-anchor': 'end', 'font-size': 11, fill: '#111827' }, 'budget ' + fmt(budget)));
    }
    steps.forEach(function (s, i) {
      if (s.compacted) svg.appendChild(el('svg:line', { x1: x(i), x2: x(i), y1: T, y2: H - B, stroke: '#d6404b', 'stroke-width': 1.5, class: 'compaction', 'data-step': s.step }));
    });
    for (var t = 0; t <= 4; t++) {
      var v = Math.round(max * t / 4);
      svg.appendChild(el('svg:text', { x: L - 6, y: y(v) + 4, 'text-anchor': 'end', 'font-size': 10, fill: '#6b7280' }, fmt(v)));
    }
    var every = Math.max(1, Math.ceil(n / 10));
    steps.forEach(function (s, i) {
      if (i % every === 0) svg.appendChild(el('svg:text', { x: x(i), y: H - 8, 'text-anchor': 'middle', 'font-size': 10, fill: '#6b7280' }, String(s.step)));
    });
    var hits = document.createDocumentFragment();
    steps.forEach(function (s, i) {
      hits.appendChild(el('svg:rect', { x: L + i * bw, y: T, width: bw, height: H - T - B, class: 'step-hit', 'data-step': s.step, 'data-index': i }));
    });
    svg.appendChild(hits);
    var title = el('svg:title');
    svg.appendChild(title);
    svg.addEventListener('mousemove', function (ev) {
      var i = ev.target.getAttribute && ev.target.getAttribute('data-index');
      if (i === null || i === undefined) return;
      var s = steps[Number(i)];
      title.textContent = 'step ' + s.step + ': memory ' + fmt(memOf(s)) + ', sent ' + fmt(sentOf(s)) + (useTokens ? ' tokens' : ' items') + (s.call && s.call.latencyMs !== null ? '; model call ' + fmt(Math.round(s.call.latencyMs)) + ' ms' : '');
    });
    svg.addEventListener('click', function (ev) { var i = ev.target.getAttribute && ev.target.getAttribute('data-index'); if (i !== null && i !== undefined) select(Number(i)); });
    document.getElementById('timeline-unit').textContent = useTokens ? 'tokens' : 'items';
  }

  // ---- the timeline's accounting lines: cacheable prefix (same scale as the timeline), cost (its own scale, right)
  function drawAccountLines() {
    var acc = data.accounting;
    if (!acc || !acc.steps.length) return;
    var svg = document.querySelector('#timeline svg');
    var W = 1000, H = 240, L = 56, R = 12, T = 12, B = 28;
    var useTokens = steps.some(function (s) { return s.memoryTokens !== null; });
    var max = 1;
    steps.forEach(function (s) { max = Math.max(max, useTokens ? (s.memoryTokens || 0) : s.memoryItems, useTokens ? (s.sentTokens || 0) : s.sentItems, useTokens && s.maxTokens !== null ? s.maxTokens : 0); });
    var bw = (W - L - R) / Math.max(steps.length, 1);
    function x(i) { return L + (i + 0.5) * bw; }
    function y(v, top) { return T + (H - T - B) * (1 - v / top); }
    var prefix = '';
    acc.steps.forEach(function (a, i) { var v = useTokens ? a[0] : a[1]; if (v !== null) prefix += (prefix ? ' L' : 'M') + x(i) + ',' + y(Math.min(v, max), max); });
    if (prefix) svg.appendChild(el('svg:path', { d: prefix, fill: 'none', stroke: '#0f766e', 'stroke-width': 1.5, 'stroke-dasharray': '2 2', class: 'prefix' }));
    var costMax = 0;
    acc.steps.forEach(function (a) { if (a[2] !== null) costMax = Math.max(costMax, a[2]); });
    if (acc.cost && costMax > 0) {
      var cost = '';
      acc.steps.forEach(function (a, i) { if (a[2] !== null) cost += (cost ? ' L' : 'M') + x(i) + ',' + y(a[2], costMax); });
      svg.appendChild(el('svg:path', { d: cost, fill: 'none', stroke: '#b45309', 'stroke-width': 1.5, class: 'cost' }));
      svg.appendChild(el('svg:text', { x: W - R - 4, y: T + 10, 'text-anchor': 'end', 'font-size': 11, fill: '#b45309' }, (acc.cost === 'estimated' ? 'estimated ' : '') + 'cost per step, top $' + costMax.toFixed(4)));
    }
  }

  // ---- fate map: rows are items (the order they entered), columns are steps; zoom, pan, axes and hover
  function drawFateMap() {
    var canvas = document.querySelector('#fatemap canvas');
    var tip = document.getElementById('fate-tip');
    var items = data.items;
    var cols = Math.max(steps.length, 1), rows = Math.max(items.length, 1);
    var AX = 48, AY = 18; // room for the axes (left: items, bottom: steps)
    var view = { c0: 0, c1: cols, r0: 0, r1: rows };
    var cssW = Math.max(300, canvas.parentNode.clientWidth || 1200), cssH = 320;
    var ratio = window.devicePixelRatio || 1;
    canvas.width = Math.round(cssW * ratio); canvas.height = Math.round(cssH * ratio);
    canvas.style.width = cssW + 'px'; canvas.style.height = cssH + 'px';
    canvas.dataset.cols = cols; canvas.dataset.rows = rows;
    var ctx = canvas.getContext('2d');
    var plotW = cssW - AX, plotH = cssH - AY;
    function cellAt(px, py) {
      if (px < AX || py > plotH) return null;
      var c = Math.floor(view.c0 + (px - AX) / plotW * (view.c1 - view.c0));
      var r = Math.floor(view.r0 + py / plotH * (view.r1 - view.r0));
      return c >= 0 && c < steps.length && r >= 0 && r < items.length ? { c: c, r: r } : null;
    }
    function fateAt(item, step) {
      for (var k = 0; k < item.fates.length; k++) { var f = item.fates[k]; if (step >= f[0] && step <= f[1]) return f; }
      return null;
    }
    function draw() {
      ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
      ctx.clearRect(0, 0, cssW, cssH);
      ctx.fillStyle = '#f3f4f6'; ctx.fillRect(AX, 0, plotW, plotH);
      var sx = plotW / (view.c1 - view.c0), sy = plotH / (view.r1 - view.r0);
      var r0 = Math.max(0, Math.floor(view.r0)), r1 = Math.min(items.length, Math.ceil(view.r1));
      var s0 = steps[Math.max(0, Math.floor(view.c0))], s1 = steps[Math.min(steps.length - 1, Math.ceil(view.c1) - 1)];
      for (var r = r0; r < r1; r++) {
        var item = items[r];
        for (var k = 0; k < item.fates.length; k++) {
          var f = item.fates[k];
          if (!s0 || f[1] < s0.step || f[0] > s1.step) continue;
          ctx.fillStyle = COLORS[data.fates[f[2]]];
          var a = indexOfStep[f[0]], b = indexOfStep[f[1]];
          if (a === undefined || b === undefined) continue;
          ctx.fillRect(AX + (a - view.c0) * sx, (r - view.r0) * sy, Math.max(1, (b - a + 1) * sx), Math.max(1, sy));
        }
      }
      ctx.clearRect(0, plotH, cssW, AY); ctx.clearRect(0, 0, AX, cssH);
      ctx.fillStyle = '#6b7280'; ctx.font = '10px system-ui, sans-serif';
      ctx.textAlign = 'center';
      for (var t = 0; t <= 8; t++) {
        var c = Math.min(steps.length - 1, Math.floor(view.c0 + (view.c1 - view.c0) * t / 8));
        if (steps[c]) ctx.fillText('step ' + steps[c].step, Math.min(cssW - 20, Math.max(AX + 20, AX + (c - view.c0 + 0.5) * sx)), plotH + 13);
      }
      ctx.textAlign = 'right';
      for (var u = 0; u <= 6; u++) {
        var row = Math.min(items.length - 1, Math.floor(view.r0 + (view.r1 - view.r0) * u / 6));
        if (row >= 0) ctx.fillText('#' + (row + 1), AX - 4, Math.min(plotH - 2, Math.max(10, (row - view.r0 + 0.5) * sy + 3)));
      }
      document.getElementById('fate-view').textContent = 'showing steps ' + (s0 ? s0.step : '-') + '–' + (s1 ? s1.step : '-') + ', items ' + (r0 + 1) + '–' + r1 + ' of ' + items.length;
    }
    function clampView() {
      var w = Math.max(4, Math.min(cols, view.c1 - view.c0)), h = Math.max(4, Math.min(rows, view.r1 - view.r0));
      view.c0 = Math.max(0, Math.min(cols - w, view.c0)); view.c1 = view.c0 + w;
      view.r0 = Math.max(0, Math.min(rows - h, view.r0)); view.r1 = view.r0 + h;
    }
    function local(ev) { var rect = canvas.getBoundingClientRect(); return { x: ev.clientX - rect.left, y: ev.clientY - rect.top }; }
    canvas.addEventListener('wheel', function (ev) {
      ev.preventDefault();
      var p = local(ev), k = ev.deltaY < 0 ? 0.8 : 1.25;
      var fc = view.c0 + Math.max(0, p.x - AX) / plotW * (view.c1 - view.c0), fr = view.r0 + Math.min(plotH, p.y) / plotH * (view.r1 - view.r0);
      view.c0 = fc - (fc - view.c0) * k; view.c1 = fc + (view.c1 - fc) * k;
      view.r0 = fr - (fr - view.r0) * k; view.r1 = fr + (view.r1 - fr) * k;
      clampView(); draw();
    }, { passive: false });
    var drag = null;
    canvas.addEventListener('mousedown', function (ev) { drag = { p: local(ev), view: { c0: view.c0, c1: view.c1, r0: view.r0, r1: view.r1 }, moved: false }; });
    window.addEventListener('mouseup', function () { setTimeout(function () { drag = null; }, 0); });
    canvas.addEventListener('mousemove', function (ev) {
      var p = local(ev);
      if (drag && (ev.buttons & 1)) {
        var dc = (p.x - drag.p.x) / plotW * (drag.view.c1 - drag.view.c0), dr = (p.y - drag.p.y) / plotH * (drag.view.r1 - drag.view.r0);
        if (Math.abs(p.x - drag.p.x) + Math.abs(p.y - drag.p.y) > 3) drag.moved = true;
        view.c0 = drag.view.c0 - dc; view.c1 = drag.view.c1 - dc; view.r0 = drag.view.r0 - dr; view.r1 = drag.view.r1 - dr;
        clampView(); draw(); tip.hidden = true; return;
      }
      var cell = cellAt(p.x, p.y);
      if (!cell) { tip.hidden = true; return; }
      var item = items[cell.r], step = steps[cell.c].step, f = fateAt(item, step);
      tip.textContent = 'item ' + item.id + ' (' + item.kind + ') · step ' + step + ' · ' + (f ? data.fates[f[2]] + ' by ' + data.rules[f[3]] : 'not in memory') + (item.replaces ? ' · placeholder of ' + item.replaces : '') + '\n' + item.preview;
      tip.hidden = false;
      tip.style.left = Math.min(p.x + 12, cssW - 260) + 'px'; tip.style.top = (p.y + 12) + 'px';
      tip.dataset.item = item.id; tip.dataset.step = step;
    });
    canvas.addEventListener('mouseleave', function () { tip.hidden = true; });
    canvas.addEventListener('click', function (ev) {
      if (drag && drag.moved) return;
      var cell = cellAt(local(ev).x, local(ev).y);
      if (cell) select(cell.c, items[cell.r].id);
    });
    canvas.addEventListener('dblclick', function () { view = { c0: 0, c1: cols, r0: 0, r1: rows }; draw(); });
    draw();
  }

  // ---- search over item text (what was sent, and every item's preview)
  function setupSearch() {
    var input = document.getElementById('search-input'), out = document.getElementById('search-results');
    var texts = null;
    function index() {
      if (texts) return texts;
      texts = data.items.map(function (item) { return (item.id + ' ' + item.kind + ' ' + item.preview).toLowerCase(); });
      var byId = {};
      data.items.forEach(function (item, i) { byId[item.id] = i; });
      steps.forEach(function (s) { s.sent.forEach(function (row) { var i = byId[row[1]]; if (i !== undefined && row[0] >= 0 && texts[i].length < 20000) texts[i] += ' ' + textOf(JSON.parse(data.contents[row[0]])).toLowerCase(); }); });
      return texts;
    }
    function lastStepOf(item) { var f = item.fates[item.fates.length - 1]; return f ? f[1] : null; }
    var everything = null;
    function all() {
      if (!everything) { var waits = []; for (var i = 0; i < steps.length; i += data.stepChunk) waits.push(details(i)); everything = Promise.all(waits); }
      return everything;
    }
    input.addEventListener('input', function () { all().then(run); });
    function run() {
      var q = input.value.trim().toLowerCase();
      out.innerHTML = '';
      if (q.length < 2) return;
      var found = [];
      index().forEach(function (t, i) { if (found.length < 50 && t.indexOf(q) >= 0) found.push(data.items[i]); });
      out.appendChild(el('div', { class: 'muted' }, found.length === 50 ? 'the first 50 matches' : found.length + ' match(es)'));
      found.forEach(function (item) {
        var step = lastStepOf(item);
        var row = el('div', { class: 'hit', 'data-item-id': item.id });
        row.appendChild(el('code', {}, item.id)); row.appendChild(el('span', { class: 'kind' }, item.kind));
        row.appendChild(el('span', {}, ' ' + preview(item.preview, 120) + (step !== null ? ' (last in memory at step ' + step + ')' : ' (never projected)')));
        if (step !== null) row.addEventListener('click', function () { select(indexOfStep[step], item.id); });
        out.appendChild(row);
      });
    }
  }

  // ---- the selected step: the model call, the exact context sent (items as their kind), what was dropped
  function select(i, focusId) {
    if (i === undefined || i < 0 || i >= steps.length) return Promise.resolve();
    selected = i;
    return details(i).then(function () { if (selected === i) show(i, focusId); });
  }
  function show(i, focusId) {
    var s = steps[i];
    document.querySelectorAll('#timeline .step-hit.selected').forEach(function (h) { h.classList.remove('selected'); });
    var hit = document.querySelector('#timeline .step-hit[data-index="' + i + '"]');
    if (hit) hit.classList.add('selected');
    if (location.hash !== '#step=' + s.step) history.replaceState(null, '', '#step=' + s.step);
    var panel = document.getElementById('step-panel');
    panel.innerHTML = '';
    panel.dataset.step = s.step;
    var h = el('h2', {}, 'Step ' + s.step);
    var badge = s.verified === null ? el('span', { class: 'badge' }, 'not re-projected') : s.verified ? el('span', { class: 'badge', id: 'verified' }, 'digest verified') : el('span', { class: 'badge bad' }, 'digest mismatch');
    h.appendChild(badge);
    h.appendChild(el('a', { href: '#step=' + s.step, class: 'permalink' }, 'link'));
    panel.appendChild(h);
    panel.appendChild(el('div', { class: 'summary' }, 'sent ' + fmt(s.sentItems) + ' of ' + fmt(s.memoryItems) + ' items' + (s.sentTokens !== null ? ', ' + fmt(s.sentTokens) + ' of ' + fmt(s.memoryTokens) + ' tokens' : '') + (s.maxTokens !== null ? ' (budget ' + fmt(s.maxTokens) + ')' : '') + (s.compacted ? '; memory was compacted at the top of this step' : '') + (s.notes.length ? '; ' + s.notes.join('; ') : '')));
    if (s.call) {
      var c = s.call;
      panel.appendChild(el('div', { class: 'summary', id: 'model-call' }, 'model call: ' + (c.model || '?') + ' · latency ' + (c.latencyMs === null ? '-' : fmt(Math.round(c.latencyMs)) + ' ms') + ' · usage ' + fmt(c.inputTokens) + ' in' + (c.cachedInputTokens !== null ? ' (' + fmt(c.cachedInputTokens) + ' cached)' : '') + ', ' + fmt(c.outputTokens) + ' out' + (c.cost !== null ? ' · cost ' + money(c.cost) : '')));
    }
    if (s.workingMemory) {
      // The working-memory blocks the prompt carried at this step, each with its text (shared by the steps that carried it).
      var wm = el('div', { id: 'working-memory' });
      wm.appendChild(el('h2', {}, 'Working memory (' + s.workingMemory.blocks.length + ' block' + (s.workingMemory.blocks.length === 1 ? '' : 's') + ', item ' + s.workingMemory.id + ')'));
      s.workingMemory.blocks.forEach(function (b) {
        var block = el('div', { class: 'wm-block', 'data-block': b.name });
        block.appendChild(el('div', { class: 'wm-name' }, b.name + ' · ' + fmt(b.chars) + (b.maxChars !== undefined ? ' of ' + fmt(b.maxChars) : '') + ' characters' + (b.description ? ' · ' + b.description : '')));
        block.appendChild(el('pre', { class: 'full wm-text' }, data.workingMemoryTexts[b.textIndex]));
        wm.appendChild(block);
      });
      panel.appendChild(wm);
    }
    var sentTable = el('table', { id: 'sent-items' });
    var head = el('tr'); ['#', 'id', 'kind', 'tokens', 'fate', 'rule', 'as sent'].forEach(function (c) { head.appendChild(el('th', {}, c)); });
    sentTable.appendChild(head);
    s.sent.forEach(function (row, k) {
      var tr = el('tr', { 'data-item-id': row[1] });
      var fate = data.fates[row[2]];
      var json = row[0] >= 0 ? data.contents[row[0]] : JSON.stringify({ id: row[1], preview: (itemById[row[1]] || {}).preview || '' });
      var item = JSON.parse(json);
      tr.appendChild(el('td', {}, String(k + 1)));
      tr.appendChild(el('td', {}, row[1]));
      var kind = el('td', { class: 'kind ' + kindOf(item).replace(/ .*/, '') }, kindOf(item));
      badgesFor(row[1]).forEach(function (b) { kind.appendChild(el('span', { class: 'badge ' + b[1] }, b[0])); });
      tr.appendChild(kind);
      tr.appendChild(el('td', { class: 'num' }, row[0] >= 0 ? fmt(data.contentTokens[row[0]]) : '-'));
      tr.appendChild(el('td', { class: 'fate ' + fate }, fate));
      tr.appendChild(el('td', {}, data.rules[row[3]]));
      var td = el('td');
      var text = textOf(item);
      var details = el('details');
      details.appendChild(el('summary', {}, preview(text, 160)));
      details.appendChild(el('pre', { class: 'full' }, text));
      details.appendChild(el('pre', { class: 'item', 'data-json': json }, json));
      td.appendChild(details); tr.appendChild(td);
      if (focusId === row[1]) tr.classList.add('focus');
      sentTable.appendChild(tr);
    });
    panel.appendChild(el('h2', {}, 'Context sent (' + s.sent.length + ' items)'));
    var scroll = el('div', { class: 'scroll' });
    scroll.appendChild(sentTable);
    panel.appendChild(scroll);
    panel.appendChild(el('h2', { style: 'margin-top:14px' }, 'Dropped (' + s.dropped.length + ' items)'));
    var dropTable = el('table', { id: 'dropped-items' });
    var dh = el('tr'); ['id', 'rule', 'kind', 'text'].forEach(function (c) { dh.appendChild(el('th', {}, c)); });
    dropTable.appendChild(dh);
    s.dropped.forEach(function (row) {
      var item = itemById[row[0]] || { kind: '', preview: '' };
      var tr = el('tr', { 'data-item-id': row[0] });
      tr.appendChild(el('td', {}, row[0])); tr.appendChild(el('td', {}, data.rules[row[1]]));
      var kind = el('td', {}, item.kind);
      badgesFor(row[0]).forEach(function (b) { kind.appendChild(el('span', { class: 'badge ' + b[1] }, b[0])); });
      tr.appendChild(kind); tr.appendChild(el('td', {}, item.preview));
      if (focusId === row[0]) tr.classList.add('focus');
      dropTable.appendChild(tr);
    });
    var dropScroll = el('div', { class: 'scroll' });
    dropScroll.appendChild(dropTable);
    panel.appendChild(dropScroll);
    var focused = panel.querySelector('tr.focus');
    if (focused) focused.scrollIntoView({ block: 'nearest' });
  }
  function stepFromHash() {
    var m = /^#step=(\d+)$/.exec(location.hash);
    return m && indexOfStep[Number(m[1])] !== undefined ? indexOfStep[Number(m[1])] : -1;
  }
  document.addEventListener('keydown', function (ev) {
    if (ev.target && ev.target.tagName === 'INPUT') return;
    if (ev.key === 'ArrowRight' && selected < steps.length - 1) select(selected + 1);
    if (ev.key === 'ArrowLeft' && selected > 0) select(selected - 1);
  });
  window.addEventListener('hashchange', function () { var i = stepFromHash(); if (i >= 0 && i !== selected) select(i); });

  var timings = window.__reportTimings = { start: performance.now() };
  load().then(function (loaded) {
    timings.loaded = performance.now();
    data = loaded;
    steps = data.steps;
    data.items.forEach(function (item) { itemById[item.id] = item; });
    steps.forEach(function (s, i) { indexOfStep[s.step] = i; });
    document.getElementById('loading').remove();
    drawTimeline();
    drawAccountLines();
    timings.timeline = performance.now();
    drawFateMap();
    timings.fateMap = performance.now();
    setupSearch();
    var fromHash = stepFromHash();
    return (steps.length ? select(fromHash >= 0 ? fromHash : steps.length - 1) : Promise.resolve()).then(function () {
      timings.step = performance.now();
      document.body.dataset.ready = 'true';
      window.__reportReadyMs = performance.now();
    });
  }).then(undefined, function (error) {
    document.getElementById('loading').textContent = 'This report could not be read: ' + error;
  });
})();
`;
