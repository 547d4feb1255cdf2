// Output: aligned tables for people, JSON or YAML (-o) of the API's own answer for scripts.
import { stringify } from 'yaml';
import { UsageError } from './errors.js';

export const OUTPUTS = ['table', 'json', 'yaml'] as const;
export type Output = (typeof OUTPUTS)[number];

export function outputOf(value: string | undefined): Output {
  const o = value ?? 'table';
  if (!(OUTPUTS as readonly string[]).includes(o)) throw new UsageError(`-o must be one of ${OUTPUTS.join(', ')}, got ${o}`);
  return o as Output;
}

/** Columns padded to their widest cell; the last column is not padded. Headers in capitals. */
export function table(headers: string[], rows: string[][]): string {
  const all = [headers.map((h) => h.toUpperCase()), ...rows];
  const widths = headers.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  return all
    .map((r) =>
      r
        .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** The API's answer as JSON or YAML. */
export function serialize(data: unknown, output: 'json' | 'yaml'): string {
  return output === 'json' ? JSON.stringify(data, null, 2) : stringify(data).trimEnd();
}

const UNITS = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];

/** Decimal units, as disks are sold. */
export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return '-';
  let v = n;
  let u = 0;
  while (v >= 1000 && u < UNITS.length - 1) {
    v /= 1000;
    u += 1;
  }
  return `${v >= 100 || u === 0 ? Math.round(v) : v.toFixed(1)}${UNITS[u]}`;
}

/** How long ago, from an ISO time: 5s, 3m, 2h, 4d. */
export function age(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '-';
  return duration(now - Date.parse(iso));
}

export function duration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '-';
  const s = Math.round(ms / 1000);
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.round(s / 60)}m`;
  if (s < 172800) return `${Math.round(s / 3600)}h`;
  return `${Math.round(s / 86400)}d`;
}

/** HH:MM:SS of an ISO time, in UTC like every time Quarry answers. */
export const clock = (iso: string | null | undefined): string => (iso ? iso.slice(11, 19) : '--:--:--');

export const short = (id: string | null | undefined): string => (id ? id.slice(0, 8) : '-');

export function dash(v: unknown): string {
  if (v === null || v === undefined || v === '') return '-';
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}
