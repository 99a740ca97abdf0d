// Renders the bench summary as a small self-contained SVG (docs/bench.svg): one panel of
// horizontal bars per headline ratio, every server against the bare Nest controller (1.0).

const COLORS = { bare: '#374151', ours: '#2563eb', rekog: '#ea580c', sdk: '#9ca3af' };
const FONT = "font-family='system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif'";

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function panel({ title, subtitle, bars, y, width, target }) {
  const labelW = 300;
  const barX = labelW + 10;
  const barW = width - barX - 70;
  const rowH = 20;
  const max = Math.max(1.2, ...bars.map((b) => b.value ?? 0)) * 1.02;
  const x = (v) => barX + (v / max) * barW;
  const out = [];
  out.push(`<text x='0' y='${y + 14}' ${FONT} font-size='14' font-weight='600' fill='#111827'>${esc(title)}</text>`);
  out.push(`<text x='0' y='${y + 30}' ${FONT} font-size='11' fill='#6b7280'>${esc(subtitle)}</text>`);
  const top = y + 42;
  bars.forEach((bar, i) => {
    const by = top + i * rowH;
    out.push(
      `<text x='${labelW}' y='${by + 13}' text-anchor='end' ${FONT} font-size='11.5' fill='#111827'>${esc(bar.label)}</text>`,
    );
    if (bar.value === undefined) {
      out.push(
        `<text x='${barX + 4}' y='${by + 13}' ${FONT} font-size='11' fill='#9ca3af'>${esc(bar.note ?? 'n/a')}</text>`,
      );
      return;
    }
    out.push(
      `<rect x='${barX}' y='${by + 3}' width='${Math.max(1, x(bar.value) - barX).toFixed(1)}' height='${rowH - 6}' rx='2' fill='${COLORS[bar.family] ?? '#6b7280'}'/>`,
    );
    out.push(
      `<text x='${(x(bar.value) + 5).toFixed(1)}' y='${by + 13}' ${FONT} font-size='11' fill='#111827'>${bar.value.toFixed(2)}x</text>`,
    );
  });
  const bottom = top + bars.length * rowH;
  out.push(
    `<line x1='${x(1).toFixed(1)}' y1='${top - 2}' x2='${x(1).toFixed(1)}' y2='${bottom + 2}' stroke='#111827' stroke-width='1' stroke-dasharray='3 3'/>`,
  );
  out.push(
    `<text x='${x(1).toFixed(1)}' y='${bottom + 14}' text-anchor='middle' ${FONT} font-size='10' fill='#111827'>bare = 1.0</text>`,
  );
  if (target !== undefined) {
    out.push(
      `<line x1='${x(target).toFixed(1)}' y1='${top - 2}' x2='${x(target).toFixed(1)}' y2='${bottom + 2}' stroke='#16a34a' stroke-width='1' stroke-dasharray='1 3'/>`,
    );
    out.push(
      `<text x='${x(target).toFixed(1)}' y='${bottom + 14}' text-anchor='end' ${FONT} font-size='10' fill='#16a34a'>target ${target} </text>`,
    );
  }
  return { svg: out.join('\n'), height: bottom + 22 - y };
}

/** The SVG text for a bench result (the object bench/run.mjs writes to latest.json). */
export function renderSvg(result) {
  const width = 760;
  const rows = result.rows;
  const bars = (scenario) =>
    rows.map((row) => {
      const entry = result.summary[scenario]?.[row.id];
      return {
        label: row.label,
        family: row.family,
        value: entry && !entry.failed ? entry.ratio : undefined,
        note: entry?.failed ? 'failed' : 'n/a',
      };
    });
  const m = result.machine;
  const header = `${result.date.slice(0, 10)} · ${m.cpus} × ${m.model} · Node ${m.node} · concurrency ${result.config.concurrency} · npm run bench`;
  const parts = [];
  let y = 0;
  parts.push(`<text x='0' y='14' ${FONT} font-size='11' fill='#6b7280'>${esc(header)}</text>`);
  y = 26;
  const a = panel({
    title: 'tools/call throughput, relative to a bare Nest controller (higher is better)',
    subtitle: 'one-argument echo tool, JSON answer where the server gives one; ratio within the same round',
    bars: bars('call'),
    y,
    width,
    target: 0.85,
  });
  parts.push(a.svg);
  y += a.height + 14;
  const b = panel({
    title: 'tools/list with 50 DTO / zod tools, relative to the bare controller',
    subtitle: 'the bare controller returns the same 50 schemas, hand-written',
    bars: bars('list50'),
    y,
    width,
  });
  parts.push(b.svg);
  y += b.height;
  return [
    `<svg xmlns='http://www.w3.org/2000/svg' width='${width}' height='${y + 6}' viewBox='0 0 ${width} ${y + 6}' role='img' aria-label='Benchmark: throughput relative to a bare Nest controller'>`,
    `<rect width='100%' height='100%' fill='#ffffff'/>`,
    ...parts,
    '</svg>',
    '',
  ].join('\n');
}
