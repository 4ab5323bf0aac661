/** A row of the results table: our figure, each baseline's and the floor's, the ratios and the target. */
export interface Row {
  measure: string;
  ours: string;
  plain: string;
  express: string;
  floor: string;
  ratio: string;
  target: string;
  met: string;
}

/** One target, for the summary and the chart. */
export interface TargetCheck {
  label: string;
  /** The measured ratio (ours ÷ baseline, or large ÷ small), when the target is a ratio. */
  ratio?: number;
  /** The limit the ratio must stay at or under. */
  limit?: number;
  met: boolean;
  detail: string;
}

const headers: Row = {
  measure: 'Measure',
  ours: 'Ours',
  plain: 'Plain (a)',
  express: 'Express (b)',
  floor: 'Floor (c)',
  ratio: 'Ratio',
  target: 'Target',
  met: 'Met',
};

/** A Markdown table whose columns line up in a terminal too. */
export function markdownTable(rows: readonly Row[]): string {
  const keys = Object.keys(headers) as (keyof Row)[];
  const all = [headers, ...rows];
  const widths = keys.map((key) => Math.max(...all.map((row) => [...row[key]].length)));
  const line = (row: Row) => `| ${keys.map((key, index) => row[key].padEnd(widths[index] ?? 0)).join(' | ')} |`;
  return [line(headers), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

export function formatRatio(value: number): string {
  return `${value.toFixed(2)}×`;
}

/** A target's line in the summary: met or MISSED, the ratio against its limit, and the figures it came from. */
export function checkLine(check: TargetCheck): string {
  return `- ${check.met ? 'met' : 'MISSED'}: ${check.label}${check.ratio !== undefined ? ` = ${formatRatio(check.ratio)} (target ≤ ${formatRatio(check.limit ?? 0)})` : ''} — ${check.detail}`;
}

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * A bar chart of the ratios on a logarithmic axis, bars growing from 1× to
 * the measured ratio, with each target marked: green when met, red when not.
 */
export function ratiosSvg(checks: readonly TargetCheck[], subtitle: string): string {
  const bars = checks.filter((check) => check.ratio !== undefined && check.limit !== undefined);
  const width = 900;
  const labelWidth = 330;
  const rowHeight = 26;
  const top = 64;
  const plotLeft = labelWidth + 10;
  const plotRight = width - 70;
  const values = bars.flatMap((bar) => [bar.ratio as number, bar.limit as number]);
  const low = Math.min(0.25, ...values.map((value) => value / 1.25));
  const high = Math.max(4, ...values.map((value) => value * 1.25));
  const x = (value: number) => plotLeft + ((Math.log(value) - Math.log(low)) / (Math.log(high) - Math.log(low))) * (plotRight - plotLeft);
  const height = top + bars.length * rowHeight + 50;
  const ticks = [0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32].filter((tick) => tick >= low && tick <= high);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="16" font-weight="bold">Pet Store API: our functions against the baselines (ratio, log scale)</text>`,
    `<text x="${width / 2}" y="42" text-anchor="middle" fill="#555">${escapeXml(subtitle)}</text>`,
  ];
  for (const tick of ticks) {
    parts.push(
      `<line x1="${x(tick).toFixed(1)}" y1="${top - 6}" x2="${x(tick).toFixed(1)}" y2="${top + bars.length * rowHeight}" stroke="${tick === 1 ? '#333' : '#ddd'}" stroke-width="${tick === 1 ? 1.5 : 1}"/>`,
      `<text x="${x(tick).toFixed(1)}" y="${top + bars.length * rowHeight + 16}" text-anchor="middle" fill="#555">${tick}×</text>`,
    );
  }
  bars.forEach((bar, index) => {
    const y = top + index * rowHeight;
    const ratio = bar.ratio as number;
    const limit = bar.limit as number;
    const from = Math.min(x(1), x(ratio));
    const to = Math.max(x(1), x(ratio));
    const colour = bar.met ? '#2e8540' : '#c62828';
    parts.push(
      `<text x="${labelWidth}" y="${y + 16}" text-anchor="end">${escapeXml(bar.label)}</text>`,
      `<rect x="${from.toFixed(1)}" y="${y + 5}" width="${Math.max(1, to - from).toFixed(1)}" height="${rowHeight - 10}" fill="${colour}" opacity="0.85"/>`,
      `<line x1="${x(limit).toFixed(1)}" y1="${y + 1}" x2="${x(limit).toFixed(1)}" y2="${y + rowHeight - 1}" stroke="#000" stroke-width="2" stroke-dasharray="3,2"/>`,
      `<text x="${(Math.max(to, x(limit)) + 6).toFixed(1)}" y="${y + 16}" fill="#222">${ratio.toFixed(2)}×</text>`,
    );
  });
  const legendY = height - 12;
  parts.push(
    `<rect x="${plotLeft}" y="${legendY - 9}" width="12" height="10" fill="#2e8540"/><text x="${plotLeft + 16}" y="${legendY}">target met</text>`,
    `<rect x="${plotLeft + 100}" y="${legendY - 9}" width="12" height="10" fill="#c62828"/><text x="${plotLeft + 116}" y="${legendY}">target missed</text>`,
    `<line x1="${plotLeft + 230}" y1="${legendY - 10}" x2="${plotLeft + 230}" y2="${legendY + 1}" stroke="#000" stroke-width="2" stroke-dasharray="3,2"/><text x="${plotLeft + 236}" y="${legendY}">target (at most)</text>`,
    '</svg>',
  );
  return `${parts.join('\n')}\n`;
}
