// Prometheus' text format read by a parser of its own (parse-prometheus-text-format, which has
// no types): the families by name, and a family's samples. The parser folds a histogram's
// samples into one when they carry labels besides `le` (it keeps the last label set's buckets
// and drops the labels), so histograms are read as the plain series they are written as:
// `<name>_bucket`, `<name>_sum` and `<name>_count`, each sample with its labels.
import { createRequire } from 'node:module';

export interface Sample {
  labels?: Record<string, string>;
  /** Counters and gauges. */
  value?: string;
}

export interface Family {
  name: string;
  help: string;
  type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
  metrics: Sample[];
}

const parse = createRequire(import.meta.url)('parse-prometheus-text-format') as (text: string) => Family[];

export function parseMetrics(text: string): Map<string, Family> {
  const histograms = new Set([...text.matchAll(/^# TYPE (\S+) histogram$/gm)].map((m) => m[1]!));
  const plain = text.replace(/^# TYPE (\S+) histogram$/gm, '# TYPE $1 untyped');
  const families = new Map<string, Family>();
  for (const f of parse(plain)) {
    const seen = families.get(f.name);
    if (seen) seen.metrics.push(...f.metrics);
    else families.set(f.name, f);
  }
  for (const name of histograms) {
    const family = families.get(name);
    if (family) family.type = 'HISTOGRAM';
    else families.set(name, { name, help: '', type: 'HISTOGRAM', metrics: [] });
  }
  return families;
}

/** The samples of `name` whose labels include `labels`. */
export function samples(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): Sample[] {
  const family = families.get(name);
  if (!family) throw new Error(`no metric ${name}`);
  return family.metrics.filter((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
}

/** The sum of the values of those samples (of a histogram: its `_count`, observations). */
export function total(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  const series = families.get(name)?.type === 'HISTOGRAM' ? `${name}_count` : name;
  return samples(families, series, labels).reduce((n, s) => n + Number(s.value ?? 0), 0);
}
