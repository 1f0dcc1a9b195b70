// Samples, and the one table they are printed in: undici's layout (benchmarks/_util
// printResults), one row per workload and receiver, ours with its ratios to the peer and the
// floor beside it.
import type { Impl } from './protocol';

export type Unit = 'ms' | 'MB' | 'KiB' | 'B';

/** One measured quantity of one workload, for one receiver. */
export interface Metric {
  /** For --filter: `cds-10k-cold`, `import`, ... */
  readonly workload: string;
  readonly title: string;
  readonly impl: Impl;
  readonly unit: Unit;
  readonly samples: number[];
  /** Kept for the targets, not printed in the table. */
  readonly hidden: boolean;
}

export class Results {
  private readonly metrics: Metric[] = [];

  /** `shows`: which workloads the table prints (a sample may measure others on the way). */
  constructor(private readonly shows: (workload: string) => boolean = () => true) {}

  add(
    workload: string,
    title: string,
    impl: Impl,
    unit: Unit,
    value: number | undefined,
    hidden = false,
  ): void {
    if (value === undefined) return;
    let metric = this.metrics.find((m) => m.title === title && m.impl === impl);
    if (!metric) {
      metric = { workload, title, impl, unit, samples: [], hidden };
      this.metrics.push(metric);
    }
    metric.samples.push(value);
  }

  find(title: string, impl: Impl): Metric | undefined {
    return this.metrics.find((m) => m.title === title && m.impl === impl);
  }

  median(title: string, impl: Impl): number | undefined {
    const metric = this.find(title, impl);
    return metric && median(metric.samples);
  }

  /** ours ÷ other, on medians. */
  ratio(title: string, other: Impl): number | undefined {
    const ours = this.median(title, 'ours');
    const theirs = this.median(title, other);
    return ours === undefined || theirs === undefined || theirs === 0 ? undefined : ours / theirs;
  }

  /** The metrics of the table: workloads in the order first measured, then ours, peer, floor. */
  shown(): readonly Metric[] {
    const titles = [...new Set(this.metrics.map((m) => m.title))];
    const order: readonly Impl[] = ['ours', 'peer', 'floor'];
    return this.metrics
      .filter((m) => !m.hidden && this.shows(m.workload))
      .sort(
        (a, b) =>
          titles.indexOf(a.title) - titles.indexOf(b.title) ||
          order.indexOf(a.impl) - order.indexOf(b.impl),
      );
  }
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function format(value: number, unit: Unit): string {
  const digits = value >= 100 ? 0 : value >= 10 ? 1 : 2;
  return `${value.toFixed(digits)} ${unit}`;
}

function formatRatio(ratio: number | undefined): string {
  if (ratio === undefined) return '';
  return `${ratio >= 10 ? ratio.toFixed(0) : ratio.toFixed(2)}×`;
}

const HEADINGS = ['Workload', 'Samples', 'Median', 'Min – max', 'ours/peer', 'ours/floor'];
/** Columns after the first are right-aligned, as numbers are. */
const RIGHT = [false, true, true, true, true, true];

function rows(results: Results): string[][] {
  return results.shown().map((metric) => {
    const min = Math.min(...metric.samples);
    const max = Math.max(...metric.samples);
    const ours = metric.impl === 'ours';
    return [
      `${metric.title} · ${metric.impl}`,
      String(metric.samples.length),
      format(median(metric.samples), metric.unit),
      `${format(min, metric.unit)} – ${format(max, metric.unit)}`,
      ours ? formatRatio(results.ratio(metric.title, 'peer')) : '',
      ours ? formatRatio(results.ratio(metric.title, 'floor')) : '',
    ];
  });
}

/** A box-drawn table, as console.table draws undici's. */
export function table(results: Results): string {
  const body = rows(results);
  const widths = HEADINGS.map((heading, i) =>
    Math.max(heading.length, ...body.map((row) => row[i]!.length)),
  );
  const line = (left: string, mid: string, right: string) =>
    left + widths.map((w) => '─'.repeat(w + 2)).join(mid) + right;
  const cells = (row: readonly string[]) =>
    '│' +
    row
      .map((cell, i) => ` ${RIGHT[i] ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)} `)
      .join('│') +
    '│';
  const out = [line('┌', '┬', '┐'), cells(HEADINGS), line('├', '┼', '┤')];
  let previous: string | undefined;
  for (const [i, row] of body.entries()) {
    const workload = results.shown()[i]!.title;
    if (previous !== undefined && workload !== previous) out.push(line('├', '┼', '┤'));
    previous = workload;
    out.push(cells(row));
  }
  out.push(line('└', '┴', '┘'));
  return out.join('\n');
}

/** The same table in Markdown, for bench/RESULTS.md. */
export function markdown(results: Results): string {
  const body = rows(results);
  const align = RIGHT.map((right) => (right ? '---:' : '---'));
  return [HEADINGS, align, ...body].map((row) => `| ${row.join(' | ')} |`).join('\n');
}
