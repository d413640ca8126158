// The report's script (inlined, no framework): draws the timeline and the fate map, shows a selected step.
export const REPORT_SCRIPT = String.raw`
(function () {
  var data = JSON.parse(document.getElementById('report-data').textContent);
  var COLORS = { kept: '#2e9d4f', cleared: '#e3b505', trimmed: '#f08a24', dropped: '#d6404b' };
  var NS = 'http://www.w3.org/2000/svg';
  var steps = data.steps;
  var selected = -1;
  function el(tag, attrs, text) {
    var e = tag.indexOf('svg:') === 0 ? document.createElementNS(NS, tag.slice(4)) : document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function fmt(n) { return n === null || n === undefined ? '-' : Number(n).toLocaleString('en-US'); }

  // ---- timeline: memory tokens (area), sent tokens (line), budget (dashed), compactions (red ticks)
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
    steps.forEach(function (s, i) {
      var hit = el('svg:rect', { x: L + i * bw, y: T, width: bw, height: H - T - B, class: 'step-hit', 'data-step': s.step, 'data-index': i });
      hit.appendChild(el('svg:title', {}, 'step ' + s.step + ': memory ' + fmt(memOf(s)) + ', sent ' + fmt(sentOf(s)) + (useTokens ? ' tokens' : ' items')));
      hit.addEventListener('click', function () { select(i); });
      svg.appendChild(hit);
    });
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

  // ---- fate map: one row per item (in the order they entered), one column per step
  function drawFateMap() {
    var canvas = document.querySelector('#fatemap canvas');
    var items = data.items;
    var cols = Math.max(steps.length, 1), rows = Math.max(items.length, 1);
    var cw = Math.max(1, Math.min(8, Math.floor(1200 / cols))), rh = Math.max(1, Math.min(6, Math.floor(900 / rows)));
    canvas.width = cols * cw; canvas.height = rows * rh;
    canvas.style.height = Math.max(120, Math.min(320, rows * rh)) + 'px';
    var indexOfStep = {};
    steps.forEach(function (s, i) { indexOfStep[s.step] = i; });
    var ctx = canvas.getContext('2d');
    ctx.fillStyle = '#f3f4f6'; ctx.fillRect(0, 0, canvas.width, canvas.height);
    items.forEach(function (item, r) {
      item.fates.forEach(function (f) {
        ctx.fillStyle = COLORS[data.fates[f[2]]];
        for (var step = f[0]; step <= f[1]; step++) {
          var c = indexOfStep[step];
          if (c !== undefined) ctx.fillRect(c * cw, r * rh, cw, rh);
        }
      });
    });
    canvas.dataset.cols = cols; canvas.dataset.cw = cw;
    canvas.addEventListener('click', function (ev) {
      var rect = canvas.getBoundingClientRect();
      var i = Math.floor((ev.clientX - rect.left) / rect.width * cols);
      if (i >= 0 && i < steps.length) select(i);
    });
  }

  // ---- the selected step: the exact context sent, and what was dropped
  var itemById = {};
  data.items.forEach(function (item) { itemById[item.id] = item; });
  function select(i) {
    selected = i;
    var s = steps[i];
    document.querySelectorAll('#timeline .step-hit').forEach(function (h) { h.classList.toggle('selected', Number(h.getAttribute('data-index')) === i); });
    var panel = document.getElementById('step-panel');
    panel.innerHTML = '';
    panel.dataset.step = s.step;
    var h = el('h2', {}, 'Step ' + s.step);
    var badge = s.verified === null ? el('span', { class: 'badge' }, 'not re-projected') : s.verified ? el('span', { class: 'badge', id: 'verified' }, 'digest verified') : el('span', { class: 'badge bad' }, 'digest mismatch');
    h.appendChild(badge);
    panel.appendChild(h);
    panel.appendChild(el('div', { class: 'summary' }, 'sent ' + s.sentItems + ' of ' + s.memoryItems + ' items' + (s.sentTokens !== null ? ', ' + fmt(s.sentTokens) + ' of ' + fmt(s.memoryTokens) + ' tokens' : '') + (s.maxTokens !== null ? ' (budget ' + fmt(s.maxTokens) + ')' : '') + (s.compacted ? '; memory was compacted at the top of this step' : '') + (s.notes.length ? '; ' + s.notes.join('; ') : '')));
    var sentTable = el('table', { id: 'sent-items' });
    var head = el('tr'); ['#', 'id', 'fate', 'rule', 'as sent'].forEach(function (c) { head.appendChild(el('th', {}, c)); });
    sentTable.appendChild(head);
    s.sent.forEach(function (row, k) {
      var tr = el('tr', { 'data-item-id': row[1] });
      var fate = data.fates[row[2]];
      tr.appendChild(el('td', {}, String(k + 1)));
      tr.appendChild(el('td', {}, row[1]));
      tr.appendChild(el('td', { class: 'fate ' + fate }, fate));
      tr.appendChild(el('td', {}, data.rules[row[3]]));
      var td = el('td');
      var text = row[0] >= 0 ? data.contents[row[0]] : JSON.stringify({ id: row[1], preview: (itemById[row[1]] || {}).preview || '' });
      var pre = el('pre', { class: 'item', 'data-json': text }, text);
      td.appendChild(pre); tr.appendChild(td);
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
      tr.appendChild(el('td', {}, item.kind)); tr.appendChild(el('td', {}, item.preview));
      dropTable.appendChild(tr);
    });
    panel.appendChild(dropTable);
  }
  document.addEventListener('keydown', function (ev) {
    if (ev.key === 'ArrowRight' && selected < steps.length - 1) select(selected + 1);
    if (ev.key === 'ArrowLeft' && selected > 0) select(selected - 1);
  });
  drawTimeline();
  drawAccountLines();
  drawFateMap();
  if (steps.length) select(steps.length - 1);
})();
`;
