/** One line of the plot. */
export interface PlotSeries {
  name: string;
  colour: string;
  /** Dashed lines for the systems that persist nothing durable. */
  dashed?: boolean;
  points: { x: number; y: number }[];
}

const WIDTH = 760;
const HEIGHT = 440;
const LEFT = 70;
const RIGHT = 230;
const TOP = 40;
const BOTTOM = 60;

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function decades(low: number, high: number): number[] {
  const ticks: number[] = [];
  for (let power = Math.floor(Math.log10(low)); power <= Math.ceil(Math.log10(high)); power += 1) {
    ticks.push(10 ** power);
  }
  return ticks;
}

function label(value: number): string {
  return value >= 1 ? String(value) : String(Number(value.toPrecision(1)));
}

/**
 * A log–log line chart as a standalone SVG: cost per step (y) against step number (x), one
 * line per system. No dependencies: the bench draws it from its own results.
 *
 * @example
 * const svg = logLogPlot('Cost per step', 'step', 'ms per step', series);
 * await writeFile('docs/performance-per-step.svg', svg);
 */
export function logLogPlot(
  title: string,
  xLabel: string,
  yLabel: string,
  series: PlotSeries[],
): string {
  const points = series.flatMap((line) => line.points).filter((p) => p.x > 0 && p.y > 0);
  const xs = points.map((p) => p.x);
  const ys = points.map((p) => p.y);
  const xTicks = decades(Math.min(...xs, 1), Math.max(...xs, 10));
  const yTicks = decades(Math.min(...ys, 1), Math.max(...ys, 10));
  const xLow = Math.log10(xTicks[0] ?? 1);
  const xHigh = Math.log10(xTicks.at(-1) ?? 10);
  const yLow = Math.log10(yTicks[0] ?? 1);
  const yHigh = Math.log10(yTicks.at(-1) ?? 10);
  const plotWidth = WIDTH - LEFT - RIGHT;
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const px = (x: number) => LEFT + ((Math.log10(x) - xLow) / (xHigh - xLow || 1)) * plotWidth;
  const py = (y: number) =>
    TOP + plotHeight - ((Math.log10(y) - yLow) / (yHigh - yLow || 1)) * plotHeight;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<title>${escapeXml(title)}: ${escapeXml(yLabel)} against ${escapeXml(xLabel)}</title>`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>`,
    `<text x="${LEFT + plotWidth / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${escapeXml(title)}</text>`,
  ];
  for (const tick of xTicks) {
    const x = px(tick).toFixed(1);
    out.push(
      `<line x1="${x}" y1="${TOP}" x2="${x}" y2="${TOP + plotHeight}" stroke="#ddd"/>`,
      `<text x="${x}" y="${TOP + plotHeight + 18}" text-anchor="middle">${label(tick)}</text>`,
    );
  }
  for (const tick of yTicks) {
    const y = py(tick).toFixed(1);
    out.push(
      `<line x1="${LEFT}" y1="${y}" x2="${LEFT + plotWidth}" y2="${y}" stroke="#ddd"/>`,
      `<text x="${LEFT - 8}" y="${y}" text-anchor="end" dominant-baseline="middle">${label(tick)}</text>`,
    );
  }
  out.push(
    `<rect x="${LEFT}" y="${TOP}" width="${plotWidth}" height="${plotHeight}" fill="none" stroke="#444"/>`,
    `<text x="${LEFT + plotWidth / 2}" y="${HEIGHT - 18}" text-anchor="middle">${escapeXml(xLabel)}</text>`,
    `<text transform="translate(18 ${TOP + plotHeight / 2}) rotate(-90)" text-anchor="middle">${escapeXml(yLabel)}</text>`,
  );
  series.forEach((line, index) => {
    const visible = line.points.filter((p) => p.x > 0 && p.y > 0);
    const path = visible.map((p) => `${px(p.x).toFixed(1)},${py(p.y).toFixed(1)}`).join(' ');
    const dash = line.dashed === true ? ' stroke-dasharray="6 4"' : '';
    out.push(
      `<polyline points="${path}" fill="none" stroke="${line.colour}" stroke-width="2"${dash}/>`,
    );
    const legendY = TOP + 10 + index * 22;
    const legendX = LEFT + plotWidth + 16;
    out.push(
      `<line x1="${legendX}" y1="${legendY}" x2="${legendX + 26}" y2="${legendY}" stroke="${line.colour}" stroke-width="2"${dash}/>`,
      `<text x="${legendX + 32}" y="${legendY}" dominant-baseline="middle">${escapeXml(line.name)}</text>`,
    );
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
