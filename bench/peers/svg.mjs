// The peers benchmark's two pictures, as plain SVG: the latency distribution per engine at 8
// connections, and each engine's and setting's detour against its cut in bare major-road metres.
// The frame, scales and colours are shared with the scale benchmark's picture (bench/scale/scale.mjs).

export const COLORS = { quietway: '#1b7f3b', osrm: '#1f5fbf', valhalla: '#c0392b' };
export const W = 640;
export const H = 400;
export const M = { left: 64, right: 20, top: 36, bottom: 52 };
export const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;');

export function frame(title, xLabel, yLabel, body) {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">
<title>${esc(title)}</title>
<rect width="${W}" height="${H}" fill="#fff"/>
<text x="${W / 2}" y="20" text-anchor="middle" font-size="14" font-weight="bold">${esc(title)}</text>
<text x="${(M.left + W - M.right) / 2}" y="${H - 12}" text-anchor="middle">${esc(xLabel)}</text>
<text transform="translate(16 ${(M.top + H - M.bottom) / 2}) rotate(-90)" text-anchor="middle">${esc(yLabel)}</text>
${body}
</svg>
`;
}

/** A linear or logarithmic scale from [d0, d1] onto [r0, r1]. */
export function scale(d0, d1, r0, r1, log = false) {
  const f = log ? Math.log10 : (x) => x;
  return (x) => r0 + ((f(x) - f(d0)) / (f(d1) - f(d0) || 1)) * (r1 - r0);
}

/** Latency (log scale) against the share of requests answered within it, per engine, at 8 connections. */
export function latencySvg(result) {
  const order = [
    ['p1', 0.01],
    ['p2_5', 0.025],
    ['p10', 0.1],
    ['p25', 0.25],
    ['p50', 0.5],
    ['p75', 0.75],
    ['p90', 0.9],
    ['p97_5', 0.975],
    ['p99', 0.99],
    ['p99_9', 0.999],
  ];
  const series = Object.entries(result.serving).map(([name, s]) => ({
    name,
    points: order.map(([k, q]) => [Math.max(0.1, s.runs[8].percentiles_ms[k]), q]),
  }));
  const all = series.flatMap((s) => s.points.map((p) => p[0]));
  const lo = 10 ** Math.floor(Math.log10(Math.min(...all)));
  const hi = 10 ** Math.ceil(Math.log10(Math.max(...all)));
  const x = scale(lo, hi, M.left, W - M.right, true);
  // The vertical axis spreads the tail: the share as -log10(1 - q) (0.9 → 1, 0.99 → 2, 0.999 → 3).
  const tail = (q) => -Math.log10(1 - q);
  const y = scale(0, 3, H - M.bottom, M.top);
  let body = '';
  for (let d = lo; d <= hi; d *= 10) {
    for (const m of [1, 2, 5]) {
      const v = d * m;
      if (v > hi) break;
      body += `<line x1="${x(v)}" y1="${M.top}" x2="${x(v)}" y2="${H - M.bottom}" stroke="#ddd"/><text x="${x(v)}" y="${H - M.bottom + 16}" text-anchor="middle">${v}</text>\n`;
    }
  }
  for (const [q, label] of [
    [0.01, 'p1'],
    [0.5, 'p50'],
    [0.9, 'p90'],
    [0.99, 'p99'],
    [0.999, 'p99.9'],
  ]) {
    body += `<line x1="${M.left}" y1="${y(tail(q))}" x2="${W - M.right}" y2="${y(tail(q))}" stroke="#ddd"/><text x="${M.left - 6}" y="${y(tail(q)) + 4}" text-anchor="end">${label}</text>\n`;
  }
  series.forEach((s, i) => {
    const pts = s.points.map(([ms, q]) => `${x(ms).toFixed(1)},${y(tail(q)).toFixed(1)}`).join(' ');
    const c = COLORS[s.name] ?? '#555';
    const run = result.serving[s.name].runs[8];
    body += `<polyline points="${pts}" fill="none" stroke="${c}" stroke-width="2"/>\n`;
    body += s.points
      .map(([ms, q]) => `<circle cx="${x(ms)}" cy="${y(tail(q))}" r="2.5" fill="${c}"/>`)
      .join('');
    body += `<text x="${M.left + 10}" y="${M.top + 16 + i * 16}" fill="${c}">${esc(`${s.name}: ${run.requests_per_s.toFixed(0)} req/s, p50 ${run.p50_ms} ms, p99 ${run.p99_ms} ms`)}</text>\n`;
  });
  return frame(
    'Directions over HTTP at 8 connections (autocannon)',
    'latency (ms, log scale)',
    'share of requests answered within',
    body,
  );
}

/**
 * Each engine and setting: the kilometres it rides over those of the common baseline (OSRM bicycle's
 * route, on the trips every setting routes) against its cut in bare major-road metres from it.
 */
export function tradeoffSvg(result) {
  const pts = Object.entries(result.routes).map(([id, r]) => ({
    id,
    label: r.label,
    engine: id.split('_')[0],
    cut: r.common.bare_major_cut * 100,
    detour: r.common.length_over_baseline_total,
  }));
  const maxCut = Math.ceil(Math.max(60, ...pts.map((p) => p.cut)) / 10) * 10;
  const minCut = Math.floor(Math.min(0, ...pts.map((p) => p.cut)) / 10) * 10;
  const top = Math.ceil((Math.max(1.05, ...pts.map((p) => p.detour)) + 0.01) * 50) / 50;
  const bottom = Math.min(0.98, Math.floor(Math.min(...pts.map((p) => p.detour)) * 50) / 50 - 0.02);
  const x = scale(minCut, maxCut, M.left, W - M.right);
  const y = scale(bottom, top, H - M.bottom, M.top);
  let body = '';
  for (let c = minCut; c <= maxCut; c += 10) {
    body += `<line x1="${x(c)}" y1="${M.top}" x2="${x(c)}" y2="${H - M.bottom}" stroke="#ddd"/><text x="${x(c)}" y="${H - M.bottom + 16}" text-anchor="middle">${c} %</text>\n`;
  }
  for (let i = Math.round(bottom * 50); i <= Math.round(top * 50); i++) {
    const d = i / 50;
    body += `<line x1="${M.left}" y1="${y(d)}" x2="${W - M.right}" y2="${y(d)}" stroke="#ddd"/><text x="${M.left - 6}" y="${y(d) + 4}" text-anchor="end">${d.toFixed(2)}</text>\n`;
  }
  // Labels of points that lie together are
  // stacked upwards rather than drawn over each other.
  const placed = [];
  for (const p of pts) {
    const c = COLORS[p.engine] ?? '#555';
    const [px, py] = [x(p.cut), y(p.detour)];
    let ly = py - 8;
    while (placed.some(([ox, oy]) => Math.abs(ox - px) < 170 && Math.abs(oy - ly) < 14)) ly -= 14;
    placed.push([px, ly]);
    const anchor = px > W - 220 ? 'end' : 'start';
    const lx = anchor === 'end' ? px - 8 : px + 8;
    body += `<circle cx="${px}" cy="${py}" r="5" fill="${c}" fill-opacity="0.8"/><text x="${lx}" y="${ly}" fill="${c}" text-anchor="${anchor}">${esc(p.label)}</text>\n`;
  }
  return frame(
    'Detour against the cut in bare major-road metres',
    'cut in metres on trunk/primary/secondary roads with no bike lane or track, against OSRM bicycle’s route',
    'km ridden / km of OSRM bicycle’s route (same trips)',
    body,
  );
}
