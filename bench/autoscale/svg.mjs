// A line chart as an SVG document, written by hand (no dependency): series of [x, y] points drawn
// as steps (a value holds until the next sample) over shared axes, each named in a legend. A series
// with `axis: 'right'` is drawn against a second scale on the right.

const W = 760;
const H = 360;
const Pad = { left: 48, right: 56, top: 36, bottom: 44 };
const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const fixed = (n) => (Math.round(n * 10) / 10).toString();

/** A round step for about `count` ticks over [0, max]. */
function tickStep(max, count) {
  const raw = max / count;
  const mag = 10 ** Math.floor(Math.log10(raw || 1));
  return [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? raw;
}

/**
 * `series`: [{ name, color, points: [[x, y], …], axis?: 'left' | 'right', dashed? }]; `x`/`left`/
 * `right`: the axes' labels. Returns the SVG text.
 */
export function lineChart({ title, x: xLabel, left: leftLabel, right: rightLabel, series }) {
  const all = series.flatMap((s) => s.points);
  const xMax = Math.max(1, ...all.map(([x]) => x));
  const yMax = (axis) => Math.max(1, ...series.filter((s) => (s.axis ?? 'left') === axis).flatMap((s) => s.points.map(([, y]) => y)));
  const scales = { left: yMax('left'), right: yMax('right') };
  const plotW = W - Pad.left - Pad.right;
  const plotH = H - Pad.top - Pad.bottom;
  const px = (x) => Pad.left + (x / xMax) * plotW;
  const py = (y, axis = 'left') => Pad.top + plotH - (y / scales[axis]) * plotH;
  const out = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`);
  out.push(`<rect width="${W}" height="${H}" fill="white"/>`);
  out.push(`<text x="${W / 2}" y="20" text-anchor="middle" font-size="14">${esc(title)}</text>`);
  // Grid and ticks.
  const xs = tickStep(xMax, 10);
  for (let x = 0; x <= xMax + 1e-9; x += xs) {
    out.push(`<line x1="${fixed(px(x))}" y1="${Pad.top}" x2="${fixed(px(x))}" y2="${Pad.top + plotH}" stroke="#eee"/>`);
    out.push(`<text x="${fixed(px(x))}" y="${Pad.top + plotH + 16}" text-anchor="middle">${fixed(x)}</text>`);
  }
  const ls = Math.max(1, tickStep(scales.left, 6));
  for (let y = 0; y <= scales.left + 1e-9; y += ls) {
    out.push(`<line x1="${Pad.left}" y1="${fixed(py(y))}" x2="${Pad.left + plotW}" y2="${fixed(py(y))}" stroke="#eee"/>`);
    out.push(`<text x="${Pad.left - 6}" y="${fixed(py(y) + 4)}" text-anchor="end">${fixed(y)}</text>`);
  }
  if (series.some((s) => s.axis === 'right')) {
    const rs = Math.max(1, tickStep(scales.right, 6));
    for (let y = 0; y <= scales.right + 1e-9; y += rs) out.push(`<text x="${Pad.left + plotW + 6}" y="${fixed(py(y, 'right') + 4)}">${fixed(y)}</text>`);
    out.push(`<text transform="translate(${W - 12} ${Pad.top + plotH / 2}) rotate(90)" text-anchor="middle">${esc(rightLabel ?? '')}</text>`);
  }
  out.push(`<rect x="${Pad.left}" y="${Pad.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#999"/>`);
  out.push(`<text x="${Pad.left + plotW / 2}" y="${H - 8}" text-anchor="middle">${esc(xLabel)}</text>`);
  out.push(`<text transform="translate(14 ${Pad.top + plotH / 2}) rotate(-90)" text-anchor="middle">${esc(leftLabel)}</text>`);
  // The series, as steps.
  for (const s of series) {
    if (s.points.length === 0) continue;
    // A point where the value changes (the step's corner and its new level), and the last.
    const d = [`${fixed(px(s.points[0][0]))},${fixed(py(s.points[0][1], s.axis))}`];
    s.points.forEach(([x, y], i) => {
      const prev = s.points[i - 1];
      if (i > 0 && y !== prev[1]) d.push(`${fixed(px(x))},${fixed(py(prev[1], s.axis))}`, `${fixed(px(x))},${fixed(py(y, s.axis))}`);
    });
    const [lx, ly] = s.points[s.points.length - 1];
    d.push(`${fixed(px(lx))},${fixed(py(ly, s.axis))}`);
    out.push(`<polyline fill="none" stroke="${s.color}" stroke-width="${s.width ?? 2}"${s.dashed ? ' stroke-dasharray="5 4"' : ''} points="${d.join(' ')}"/>`);
  }
  // Legend.
  series.forEach((s, i) => {
    const lx = Pad.left + 10 + i * 180;
    out.push(`<line x1="${lx}" y1="${Pad.top + 14}" x2="${lx + 22}" y2="${Pad.top + 14}" stroke="${s.color}" stroke-width="${s.width ?? 2}"${s.dashed ? ' stroke-dasharray="5 4"' : ''}/>`);
    out.push(`<text x="${lx + 28}" y="${Pad.top + 18}">${esc(s.name)}</text>`);
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
