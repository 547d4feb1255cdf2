// The dashboard's pure rules: which view an event concerns, how an OSD's phase looks on the
// map, how nodes and disks group into failure domains, the paths of the views. No DOM here, so
// `npm test` checks these in Node (test/ui/logic.test.ts).
import type { DiskView, LiveEvent, NodeDetail } from './types.js';

export const VIEWS = ['overview', 'nodes', 'disks', 'runs', 'questions', 'specs', 'audit'] as const;
export type ViewName = (typeof VIEWS)[number];

/** The view a path of the app shows: /ui → overview, /ui/<view> → that view. */
export function viewOf(pathname: string): ViewName {
  const rest = pathname.replace(/^\/ui\/?/, '').replace(/\/$/, '');
  return (VIEWS as readonly string[]).includes(rest) ? (rest as ViewName) : 'overview';
}

export const pathOf = (view: ViewName): string => (view === 'overview' ? '/ui' : `/ui/${view}`);

/** The views whose data an event may have changed (re-read, debounced). A type the page does
 * not know changes the overview: new event types come with new kinds of news. */
export function viewsAffectedBy(type: string): ViewName[] {
  if (type === 'resync') return [...VIEWS];
  if (type.startsWith('task.question.')) return ['questions', 'runs', 'overview'];
  if (type === 'task.state.changed') return ['runs', 'overview', 'nodes', 'disks'];
  if (type.startsWith('node.')) return ['nodes', 'overview', 'disks'];
  if (type.startsWith('specs.')) return ['specs', 'overview', 'nodes', 'disks'];
  if (type.startsWith('disruption.')) return ['nodes', 'overview'];
  if (type.startsWith('image.')) return ['overview'];
  if (type.startsWith('audit.')) return ['audit'];
  return ['overview'];
}

/** How an OSD shows on the failure-domain map, from its lifecycle phase (GET /disks osdState). */
export type OsdLook = 'up' | 'starting' | 'draining' | 'down' | 'out';

export function osdLook(phase: string | null): OsdLook {
  switch (phase) {
    case 'running':
      return 'up';
    case 'draining':
      return 'draining';
    case 'pending':
    case 'starting':
    case null:
      return 'starting';
    case 'blocked':
    case 'failed':
    case 'orphaned':
    case 'stopping':
      return 'down';
    default:
      // purging, destroying, destroyed, zapping, removed, replaced: out of the cluster
      return 'out';
  }
}

export interface HostCell {
  id: string;
  hostname: string;
  phase: string;
  osds: Array<{ osdId: number; look: OsdLook; phase: string; device: string }>;
}

export interface RackCell {
  rack: string;
  hosts: HostCell[];
}

/** The label that names a node's rack; nodes without one share the domain `-`. */
export const NO_RACK = '-';

/** Racks → hosts → OSDs, each in name order (OSDs by id): the failure-domain map's layout. */
export function failureDomains(nodes: readonly NodeDetail[], disks: readonly DiskView[]): RackCell[] {
  const osdsOf = new Map<string, HostCell['osds']>();
  for (const d of disks) {
    if (d.osdId === null) continue;
    const list = osdsOf.get(d.nodeId) ?? [];
    list.push({ osdId: d.osdId, look: osdLook(d.osdState), phase: d.osdState ?? 'pending', device: d.devicePath });
    osdsOf.set(d.nodeId, list);
  }
  const racks = new Map<string, HostCell[]>();
  for (const n of nodes) {
    const rack = n.labels?.rack ?? NO_RACK;
    const hosts = racks.get(rack) ?? [];
    const osds = (osdsOf.get(n.id) ?? []).sort((a, b) => a.osdId - b.osdId);
    hosts.push({ id: n.id, hostname: n.hostname || n.name || n.id.slice(0, 8), phase: n.status, osds });
    racks.set(rack, hosts);
  }
  return [...racks.entries()]
    .sort(([a], [b]) => (a === NO_RACK ? 1 : b === NO_RACK ? -1 : a.localeCompare(b)))
    .map(([rack, hosts]) => ({ rack, hosts: hosts.sort((a, b) => a.hostname.localeCompare(b.hostname)) }));
}

/** One line for the live feed: the event's type and the names it carries. */
export function eventLine(e: LiveEvent): string {
  const p = e.payload ?? {};
  const str = (k: string): string | null => (typeof p[k] === 'string' && p[k] !== '' ? p[k] : null);
  const target = p.target as { name?: unknown } | undefined;
  const names = [
    str('taskName'),
    str('hostname') ?? str('name'),
    typeof target?.name === 'string' ? target.name : null,
    str('state') ?? str('status'),
    str('file'),
    str('reason'),
  ].filter((x): x is string => x !== null);
  return names.length ? `${e.type}: ${[...new Set(names)].join(' · ')}` : e.type;
}

export function formatBytes(n: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];
  let v = n;
  let i = 0;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(v < 10 ? 1 : 0)} ${units[i]!}`;
}

/** When to refresh the access token: at three quarters of its life, and never sooner than 1 s. */
export const refreshDelayMs = (expiresInSeconds: number): number => Math.max(1_000, expiresInSeconds * 750);

/** An SVG polyline's points for samples in [0, max], newest last, over width × height. */
export function linePoints(values: readonly number[], max: number, width: number, height: number): string {
  if (values.length === 0 || max <= 0) return '';
  const step = values.length > 1 ? width / (values.length - 1) : 0;
  return values
    .map((v, i) => {
      const y = height - (Math.min(Math.max(v, 0), max) / max) * height;
      return `${(i * step).toFixed(1)},${y.toFixed(1)}`;
    })
    .join(' ');
}

/** "12 s ago", "3 min ago": how old a timestamp is, for tables that refresh. */
export function age(iso: string | null, now: number): string {
  if (!iso) return '';
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 90) return `${s} s ago`;
  if (s < 90 * 60) return `${Math.round(s / 60)} min ago`;
  return `${Math.round(s / 3600)} h ago`;
}
